// The reduce checker: the kind's name, the parse, SEMANTICS §2.3 normalisation and length
// resolution in their exact order, then the empty-fibre, dtype (§13.6, §13.11) and size rules.
#include "einfuzz/core/check_reduce.hpp"

#include <algorithm>
#include <array>
#include <string>

#include "check_memo.hpp"
#include "check_uncached.hpp"
#include "einfuzz/core/parse.hpp"
#include "einfuzz/core/shape_math.hpp"
#include "einfuzz/core/text.hpp"

namespace einfuzz {
namespace {

/// A supplied axis name must look like a pattern name (SEMANTICS §1.1, ASCII per §13.3).
bool is_axis_name(std::string_view s) {
  if (s.empty() || s.front() == '_' || s.back() == '_' || (s.front() >= '0' && s.front() <= '9')) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
  });
}

/// Book-keeping per input elementary axis that the public result does not need.
struct AxisInfo {
  std::size_t column = 0;  // where the axis is written
  bool named = false;      // a name (its length may be supplied or inferred)
  bool known = false;      // length fixed before its dimension is resolved (literal, ellipsis, supplied)
  bool huge = false;       // an anonymous literal > INT64_MAX: matches no dimension
};

class Checker {
 public:
  Checker(const TransformPattern& p, Reduction kind, DType dtype, const Shape& input,
          std::span<const std::pair<std::string, std::int64_t>> lengths, const Limits& limits)
      : p_(p), kind_(kind), dtype_(dtype), input_(input), lengths_(lengths), limits_(limits) {}

  Result<CheckedReduce> run() {
    for (std::int64_t d : input_) {
      if (d < 0) return make_diagnostic(Code::malformedShape, "the input has a negative length " + std::to_string(d));
    }
    for (auto step : {&Checker::check_ellipses, &Checker::check_rank, &Checker::expand_input,
                      &Checker::map_output, &Checker::check_supplied, &Checker::resolve_lengths,
                      &Checker::classify, &Checker::check_empty_fibre, &Checker::check_dtype,
                      &Checker::check_limits}) {
      if (auto r = (this->*step)(); !r) return std::move(r).error();
    }
    out_.pattern = p_.text;
    out_.kind = kind_;
    out_.dtype = dtype_;
    out_.input_shape = input_;
    return std::move(out_);
  }

 private:
  Diagnostic error(Code code, std::string message, std::size_t column) const {
    return make_diagnostic(code, std::move(message), column, p_.text);
  }
  std::string kind_text() const { return quote(reduction_name(kind_)); }

  // §2.3 step 1.
  Result<bool> check_ellipses() {
    for (const Item& item : p_.input.items) {
      if (!item.group) continue;
      for (const Atom& a : item.atoms) {
        if (a.kind == Atom::Kind::ellipsis) {
          return error(Code::invalidEllipsis,
                       "an ellipsis inside parentheses is not allowed on the left side of reduce", a.column);
        }
      }
    }
    if (p_.output.has_ellipsis && !p_.input.has_ellipsis) {
      for (const Item& item : p_.output.items) {
        for (const Atom& a : item.atoms) {
          if (a.kind == Atom::Kind::ellipsis) {
            return error(Code::invalidEllipsis, "the right side has an ellipsis but the left side has none",
                         a.column);
          }
        }
      }
    }
    return true;
  }

  // §2.3 step 2.
  Result<bool> check_rank() {
    const std::size_t rank = input_.size();
    const std::size_t items = p_.input.items.size() - (p_.input.has_ellipsis ? 1 : 0);
    if (p_.input.has_ellipsis ? items > rank : items != rank) {
      return error(Code::rankMismatch,
                   "the input has rank " + std::to_string(rank) + " (shape " + format_shape(input_) +
                       ") but the left side has " + std::to_string(items) +
                       (p_.input.has_ellipsis ? " dimensions besides the ellipsis" : " dimensions"),
                   p_.input.column);
    }
    return true;
  }

  int add_axis(std::string name, std::int64_t length, AxisInfo info) {
    out_.axes.push_back(ElementaryAxis{std::move(name), length});
    info_.push_back(info);
    return static_cast<int>(out_.axes.size() - 1);
  }

  int add_atom(const Atom& a) {
    if (a.kind == Atom::Kind::anonymous) {
      const bool huge = a.length > static_cast<std::uint64_t>(INT64_MAX);
      return add_axis(a.name, huge ? 0 : static_cast<std::int64_t>(a.length), {a.column, false, true, huge});
    }
    return add_axis(a.name, 0, {a.column, true, false, false});
  }

  // Splits the left side into elementary axes, one group per physical dimension (lengths later).
  Result<bool> expand_input() {
    for (const Item& item : p_.input.items) {
      if (!item.group && item.atoms.front().kind == Atom::Kind::ellipsis) {
        // check_rank guaranteed items - 1 <= rank.
        const std::size_t ellipsis_rank = input_.size() - (p_.input.items.size() - 1);
        for (std::size_t j = 0; j < ellipsis_rank; ++j) {
          const std::int64_t length = input_[out_.input_groups.size()];
          const int idx = add_axis("..." + std::to_string(j), length, {item.column, false, true, false});
          ellipsis_axes_.push_back(idx);
          out_.input_groups.push_back({idx});
          group_column_.push_back(item.column);
        }
        continue;
      }
      std::vector<int> group;
      for (const Atom& a : item.atoms) {
        if (a.kind != Atom::Kind::unit) group.push_back(add_atom(a));
      }
      out_.input_groups.push_back(std::move(group));
      group_column_.push_back(item.column);
    }
    return true;
  }

  // §2.3 step 5: every right-hand elementary axis must be an input axis.
  Result<bool> map_output() {
    auto lookup = [&](const Atom& a, std::vector<int>& group) -> Result<bool> {
      switch (a.kind) {
        case Atom::Kind::unit: return true;
        case Atom::Kind::ellipsis:
          group.insert(group.end(), ellipsis_axes_.begin(), ellipsis_axes_.end());
          return true;
        case Atom::Kind::anonymous:
          return error(Code::axisMismatch,
                       "the anonymous axis " + quote(a.name) +
                           " on the right side is a new axis, and reduce cannot create axes",
                       a.column);
        case Atom::Kind::name: break;
      }
      for (std::size_t i = 0; i < out_.axes.size(); ++i) {
        if (info_[i].named && out_.axes[i].name == a.name) {
          group.push_back(static_cast<int>(i));
          return true;
        }
      }
      return error(Code::axisMismatch, "axis " + quote(a.name) + " on the right side is not on the left side",
                   a.column);
    };
    for (const Item& item : p_.output.items) {
      if (!item.group && item.atoms.front().kind == Atom::Kind::ellipsis) {
        for (int idx : ellipsis_axes_) out_.output_groups.push_back({idx});
        continue;
      }
      std::vector<int> group;
      for (const Atom& a : item.atoms) {
        if (auto r = lookup(a, group); !r) return r;
      }
      out_.output_groups.push_back(std::move(group));
    }
    return true;
  }

  bool pattern_uses(std::string_view name) const {
    for (const Expression* e : {&p_.input, &p_.output}) {
      for (const Item& item : e->items) {
        for (const Atom& a : item.atoms) {
          if (a.kind == Atom::Kind::name && a.name == name) return true;
        }
      }
    }
    return false;
  }

  // §2.3 steps 6–7 (malformed entries first: they are input-format errors, kNoColumn).
  Result<bool> check_supplied() {
    for (const auto& [name, length] : lengths_) {
      if (!is_axis_name(name)) {
        return error(Code::invalidArgument, "supplied axis length for " + quote(name) + ": not an axis name",
                     kNoColumn);
      }
      if (length < 0) {
        return error(Code::invalidArgument,
                     "supplied axis length " + quote(name) + " = " + std::to_string(length) + " is negative",
                     kNoColumn);
      }
    }
    for (std::size_t i = 0; i < lengths_.size(); ++i) {
      for (std::size_t j = 0; j < i; ++j) {
        if (lengths_[i].first == lengths_[j].first) {
          return error(Code::duplicateAxisLength, "the length of axis " + quote(lengths_[i].first) +
                                                      " is supplied more than once", kNoColumn);
        }
      }
    }
    for (const auto& [name, length] : lengths_) {
      if (!pattern_uses(name)) {
        return error(Code::unusedAxisLength,
                     "a length is supplied for axis " + quote(name) + " but the pattern does not use it",
                     kNoColumn);
      }
    }
    for (std::size_t i = 0; i < out_.axes.size(); ++i) {
      if (!info_[i].named) continue;
      for (const auto& [name, length] : lengths_) {
        if (name == out_.axes[i].name) {
          out_.axes[i].length = length;
          info_[i].known = true;
        }
      }
    }
    return true;
  }

  // §2.3 step 8: each input dimension, left to right, with at most one unknown factor.
  Result<bool> resolve_lengths() {
    for (std::size_t d = 0; d < out_.input_groups.size(); ++d) {
      const std::vector<int>& group = out_.input_groups[d];
      const std::int64_t dim = input_[d];
      const std::size_t column = group_column_[d];
      const std::string where = "input dimension " + std::to_string(d) + " has length " + std::to_string(dim);
      std::vector<std::int64_t> known;
      std::vector<int> unknown;
      int huge = -1;
      for (int idx : group) {
        const AxisInfo& info = info_[static_cast<std::size_t>(idx)];
        if (info.huge && huge < 0) huge = idx;
        if (info.known) {
          known.push_back(out_.axes[static_cast<std::size_t>(idx)].length);
        } else {
          unknown.push_back(idx);
        }
      }
      if (unknown.size() >= 2) {
        return error(Code::cannotInferAxis,
                     where + ": cannot infer both " + quote(out_.axes[static_cast<std::size_t>(unknown[0])].name) +
                         " and " + quote(out_.axes[static_cast<std::size_t>(unknown[1])].name) +
                         " (supply all but one length)",
                     info_[static_cast<std::size_t>(unknown[1])].column);
      }
      if (huge >= 0) {  // a literal beyond int64 (saturated by the parser) matches no dimension
        const auto h = static_cast<std::size_t>(huge);
        return error(Code::dimensionMismatch,
                     where + " but the anonymous axis " + quote(out_.axes[h].name) +
                         " is longer than any dimension can be",
                     info_[h].column);
      }
      const std::optional<std::int64_t> product = checked_product(known);
      if (unknown.empty()) {
        if (!product || *product != dim) {
          return error(Code::dimensionMismatch,
                       where + " but its axes multiply to " + (product ? std::to_string(*product) : "more than int64"),
                       column);
        }
        continue;
      }
      ElementaryAxis& axis = out_.axes[static_cast<std::size_t>(unknown[0])];
      if (product && *product == 0) {
        // 0 = 0 · x holds for every x (cannot infer), and n = 0 · x for none (mismatch).
        return error(dim == 0 ? Code::cannotInferAxis : Code::dimensionMismatch,
                     where + " and the other factors of its group multiply to 0, so " + quote(axis.name) +
                         (dim == 0 ? " cannot be inferred" : " has no solution"),
                     column);
      }
      if (!product) {  // the known factors exceed every int64 length
        if (dim != 0) {
          return error(Code::dimensionMismatch, where + " but the known factors of its group exceed it", column);
        }
        axis.length = 0;
        continue;
      }
      if (dim % *product != 0) {
        return error(Code::dimensionMismatch,
                     where + ", which is not divisible by " + std::to_string(*product) + " (the other factors)",
                     column);
      }
      axis.length = dim / *product;
    }
    return true;
  }

  // Reduced axes, fibre size and output shape (overflows are reported with the size limits).
  Result<bool> classify() {
    std::vector<bool> kept(out_.axes.size(), false);
    for (const auto& group : out_.output_groups) {
      for (int idx : group) kept[static_cast<std::size_t>(idx)] = true;
    }
    std::vector<std::int64_t> fibre;
    for (std::size_t i = 0; i < out_.axes.size(); ++i) {
      if (kept[i]) continue;
      out_.reduced.push_back(static_cast<int>(i));
      fibre.push_back(out_.axes[i].length);
    }
    fibre_size_ = checked_product(fibre);
    for (const auto& group : out_.output_groups) {
      std::vector<std::int64_t> lengths;
      for (int idx : group) lengths.push_back(out_.axes[static_cast<std::size_t>(idx)].length);
      const auto length = checked_product(lengths);
      if (!length) output_overflow_ = true;
      out_.output_shape.push_back(length.value_or(0));
    }
    return true;
  }

  // §2.3 elaboration error, decided from shapes only (even when the output is empty).
  Result<bool> check_empty_fibre() {
    if (!reduction_info(kind_).needs_nonempty_fibre) return true;
    for (int idx : out_.reduced) {
      if (out_.axes[static_cast<std::size_t>(idx)].length != 0) continue;
      return error(Code::emptyFiber,
                   "einops reduction " + kind_text() +
                       " is undefined on empty fibers; the product of the removed-axis lengths is zero (axis " +
                       quote(out_.axes[static_cast<std::size_t>(idx)].name) + " has length 0)",
                   info_[static_cast<std::size_t>(idx)].column);
    }
    return true;
  }

  // §13.6, §13.11.
  Result<bool> check_dtype() {
    if (reduction_accepts(kind_, dtype_)) return true;
    const std::string got = std::string(dtype_name(dtype_));
    switch (reduction_info(kind_).dtypes) {
      case DTypeRule::boolean:
        return error(Code::unsupportedDtype,
                     "einops reduction " + kind_text() + " requires a Boolean tensor; got " + got, kNoColumn);
      case DTypeRule::floating:
        return error(Code::unsupportedDtype,
                     "einops reduction " + kind_text() + " needs a division ring (f32 or f64); got " + got,
                     kNoColumn);
      case DTypeRule::numeric: break;
    }
    return error(Code::unsupportedDtype,
                 "einops reduction " + kind_text() + " needs a numeric tensor; got bool (use any/all)", kNoColumn);
  }

  // §13.4: nothing the evaluators allocate may overflow or exceed the budget.
  Result<bool> check_limits() {
    auto in_size = check_tensor_size(input_, limits_, "the input");
    if (!in_size) return std::move(in_size).error();
    if (output_overflow_) {
      return error(Code::sizeLimitExceeded, "an output dimension has more elements than int64 can count", 0);
    }
    auto out_size = check_tensor_size(out_.output_shape, limits_, "the output");
    if (!out_size) return std::move(out_size).error();
    if (!fibre_size_) {
      return error(Code::sizeLimitExceeded, "the fibre has more elements than int64 can count", 0);
    }
    // The reference materialises a permuted copy of the input next to the output.
    std::int64_t materialised = 0;
    if (__builtin_add_overflow(*in_size, *out_size, &materialised) ||
        materialised > limits_.max_materialised_elements) {
      return error(Code::sizeLimitExceeded,
                   "the reference would materialise " + std::to_string(*in_size) + " + " +
                       std::to_string(*out_size) + " elements, over the limit max-materialised-elements = " +
                       std::to_string(limits_.max_materialised_elements),
                   0);
    }
    out_.output_size = *out_size;
    out_.fibre_size = *fibre_size_;
    return true;
  }

  const TransformPattern& p_;
  Reduction kind_;
  DType dtype_;
  const Shape& input_;
  std::span<const std::pair<std::string, std::int64_t>> lengths_;
  const Limits& limits_;

  CheckedReduce out_;
  std::vector<AxisInfo> info_;             // parallel to out_.axes
  std::vector<std::size_t> group_column_;  // parallel to out_.input_groups
  std::vector<int> ellipsis_axes_;         // the left ellipsis' axes, in order
  std::optional<std::int64_t> fibre_size_;
  bool output_overflow_ = false;
};

}  // namespace

namespace {

using AxisLengths = std::span<const std::pair<std::string, std::int64_t>>;

/// check_reduce's arguments, for its memo (check_memo.hpp).
struct ReduceCheckKey {
  std::string pattern;
  std::string reduction;
  Shape input;
  std::vector<std::pair<std::string, std::int64_t>> axis_lengths;
  DType dtype = DType::f64;
  Limits limits;

  bool matches(std::string_view p, std::string_view r, const Shape& in, AxisLengths lengths, DType d,
               const Limits& l) const {
    return p == pattern && r == reduction && in == input && d == dtype && detail::same_limits(l, limits) &&
           std::equal(lengths.begin(), lengths.end(), axis_lengths.begin(), axis_lengths.end());
  }
  void assign(std::string_view p, std::string_view r, const Shape& in, AxisLengths lengths, DType d,
              const Limits& l) {
    pattern.assign(p);
    reduction.assign(r);
    input = in;
    axis_lengths.assign(lengths.begin(), lengths.end());
    dtype = d;
    limits = l;
  }
};

thread_local detail::CheckMemo<ReduceCheckKey, CheckedReduce> reduce_memo;

}  // namespace

void detail::release_reduce_memo() noexcept { reduce_memo.release(); }

Result<CheckedReduce> detail::check_reduce_uncached(std::string_view pattern, std::string_view reduction,
                                                    const Shape& input, AxisLengths axis_lengths, DType dtype,
                                                    const Limits& limits) {
  const std::optional<Reduction> kind = reduction_from_name(reduction);
  if (!kind) {
    std::string expected;
    for (const ReductionInfo& row : reduction_table()) {
      expected += (expected.empty() ? "" : ", ") + std::string(row.name);
    }
    return make_diagnostic(Code::unknownReduction,
                           "unknown reduction " + quote(reduction) + " (expected one of " + expected + ")", kNoColumn,
                           std::string(pattern));
  }
  auto parsed = parse_transform(pattern);
  if (!parsed) return std::move(parsed).error();
  return Checker(*parsed, *kind, dtype, input, axis_lengths, limits).run();
}

std::shared_ptr<const Result<CheckedReduce>> check_reduce_shared(std::string_view pattern, std::string_view reduction,
                                                                const Shape& input, AxisLengths axis_lengths,
                                                                DType dtype, const Limits& limits) {
  return reduce_memo.get_shared(
      [&] { return detail::check_reduce_uncached(pattern, reduction, input, axis_lengths, dtype, limits); }, pattern,
      reduction, input, axis_lengths, dtype, limits);
}

Result<CheckedReduce> check_reduce(std::string_view pattern, std::string_view reduction, const Shape& input,
                                   AxisLengths axis_lengths, DType dtype, const Limits& limits) {
  return *check_reduce_shared(pattern, reduction, input, axis_lengths, dtype, limits);
}

}  // namespace einfuzz
