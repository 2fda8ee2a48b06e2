// The einsum checker: SEMANTICS §2.2 in its exact order, §3 ellipsis/broadcast resolution, §5 axis
// order, then the harness size limits of §13.4.
#include <algorithm>
#include <string>
#include <unordered_map>

#include "einfuzz/core/check.hpp"
#include "einfuzz/core/parse.hpp"
#include "einfuzz/core/shape_math.hpp"
#include "einfuzz/core/text.hpp"
#include "check_memo.hpp"
#include "check_uncached.hpp"

namespace einfuzz {
namespace {

/// The label an einsum item stands for once `(a)` / `(a 1)` are read as `a`; nullptr if the item
/// is not a plain label (unit, anonymous, group of several, parenthesised ellipsis) or is `...`.
const Atom* plain_label(const Item& item) {
  if (item.atoms.size() != 1) return nullptr;
  const Atom& a = item.atoms.front();
  return a.kind == Atom::Kind::name ? &a : nullptr;
}

/// Why an item is outside einsum's grammar, or empty when it is fine (SEMANTICS §2.2 step 2).
std::string unsupported_reason(const Item& item) {
  if (!item.group) {
    switch (item.atoms.front().kind) {
      case Atom::Kind::unit: return "a unit axis '1' has no meaning in einsum";
      case Atom::Kind::anonymous: return "an anonymous axis " + quote(item.atoms.front().name) + " has no meaning in einsum";
      default: return {};
    }
  }
  if (item.atoms.empty()) return "an empty group '()' (a unit axis) has no meaning in einsum";
  for (const Atom& a : item.atoms) {
    if (a.kind == Atom::Kind::ellipsis) return "a parenthesised ellipsis '(...)' is not allowed in einsum";
  }
  for (const Atom& a : item.atoms) {
    if (a.kind == Atom::Kind::anonymous) return "an anonymous axis " + quote(a.name) + " has no meaning in einsum";
  }
  if (item.atoms.size() > 1) return "a group of several axes cannot be used in einsum";
  return {};
}

/// One physical dimension of an operand after ellipsis expansion.
struct Slot {
  std::string label;   // name, or "...k" for ellipsis slot E_k
  int ellipsis = -1;   // k for an ellipsis slot
  std::size_t column;  // where it is written
};

std::string slot_name(int k) { return "..." + std::to_string(k); }

/// Each global axis' role from the operands it appears in (counted once per operand) and the output.
std::vector<AxisRole> axis_roles(const CheckedEinsum& e) {
  std::vector<int> operands_with(e.axes.size(), 0);
  std::vector<bool> seen(e.axes.size());
  for (const CheckedOperand& op : e.operands) {
    std::fill(seen.begin(), seen.end(), false);
    for (const int a : op.axes) {
      if (!seen[static_cast<std::size_t>(a)]) ++operands_with[static_cast<std::size_t>(a)];
      seen[static_cast<std::size_t>(a)] = true;
    }
  }
  std::vector<bool> in_output(e.axes.size(), false);
  for (const int a : e.output) in_output[static_cast<std::size_t>(a)] = true;
  std::vector<AxisRole> roles;
  roles.reserve(e.axes.size());
  for (std::size_t g = 0; g < e.axes.size(); ++g) {
    const bool shared = operands_with[g] >= 2;
    if (in_output[g]) {
      roles.push_back(shared ? AxisRole::batch : AxisRole::free);
    } else {
      roles.push_back(shared ? AxisRole::contracted : AxisRole::private_contracted);
    }
  }
  return roles;
}

struct Checker {
  const EinsumPattern& p;
  std::span<const Shape> shapes;
  const Limits& limits;

  Diagnostic error(Code code, std::string message, std::size_t column) const {
    return make_diagnostic(code, std::move(message), column, p.text);
  }

  Result<CheckedEinsum> run() const {
    for (std::size_t k = 0; k < shapes.size(); ++k) {
      for (std::int64_t d : shapes[k]) {
        if (d < 0) {
          return make_diagnostic(Code::malformedShape, "operand " + std::to_string(k) + " has a negative length " +
                                                           std::to_string(d));
        }
      }
    }
    // 1. operand count
    if (p.operands.size() != shapes.size()) {
      return error(Code::einsumOperandCountMismatch,
                   "the pattern has " + std::to_string(p.operands.size()) + " operand(s) but " +
                       std::to_string(shapes.size()) + " tensor(s) were given",
                   shapes.size() < p.operands.size() ? p.operands[shapes.size()].column : 0);
    }
    // 2. unsupported axes: operands in order, then the output, item by item
    auto check_supported = [&](const Expression& e) -> Result<bool> {
      for (const Item& item : e.items) {
        if (auto why = unsupported_reason(item); !why.empty()) {
          return error(Code::unsupportedEinsumAxis, why, item.column);
        }
      }
      return true;
    };
    for (const Expression& e : p.operands) {
      if (auto r = check_supported(e); !r) return std::move(r).error();
    }
    if (auto r = check_supported(p.output); !r) return std::move(r).error();

    // 3. ranks
    for (std::size_t k = 0; k < p.operands.size(); ++k) {
      const Expression& e = p.operands[k];
      const std::size_t rank = shapes[k].size();
      const std::size_t named = e.items.size() - (e.has_ellipsis ? 1 : 0);
      if (e.has_ellipsis ? named > rank : named != rank) {
        return error(Code::rankMismatch,
                     "operand " + std::to_string(k) + " has rank " + std::to_string(rank) + " (shape " +
                         format_shape(shapes[k]) + ") but its expression has " + std::to_string(named) +
                         (e.has_ellipsis ? " named axes and an ellipsis" : " axes"),
                     e.column);
      }
    }

    // Expand ellipses (SEMANTICS §3.1–3.2): local ranks, common rank R, right-aligned slots.
    std::size_t common = 0;
    for (std::size_t k = 0; k < p.operands.size(); ++k) {
      const Expression& e = p.operands[k];
      if (e.has_ellipsis) common = std::max(common, shapes[k].size() - (e.items.size() - 1));
    }
    auto expand = [&](const Expression& e, std::size_t local_rank) {
      std::vector<Slot> slots;
      slots.reserve(e.items.size() + common);
      for (const Item& item : e.items) {
        if (const Atom* a = plain_label(item)) {
          slots.push_back({a->name, -1, a->column});
        } else {  // the bare ellipsis
          for (std::size_t j = common - local_rank; j < common; ++j) {
            slots.push_back({slot_name(static_cast<int>(j)), static_cast<int>(j), item.column});
          }
        }
      }
      return slots;
    };
    std::vector<std::vector<Slot>> expanded;
    expanded.reserve(p.operands.size());
    std::size_t slot_count = 0;
    for (std::size_t k = 0; k < p.operands.size(); ++k) {
      const Expression& e = p.operands[k];
      expanded.push_back(expand(e, e.has_ellipsis ? shapes[k].size() - (e.items.size() - 1) : 0));
      slot_count += expanded.back().size();
    }
    const std::vector<Slot> out_slots = expand(p.output, common);

    // 4. repeated labels inside one operand must have identical lengths
    for (std::size_t k = 0; k < expanded.size(); ++k) {
      const auto& slots = expanded[k];
      for (std::size_t i = 0; i < slots.size(); ++i) {
        for (std::size_t j = 0; j < i; ++j) {
          if (slots[j].label == slots[i].label && shapes[k][j] != shapes[k][i]) {
            return error(Code::repeatedEinsumDimensionMismatch,
                         "label " + quote(slots[i].label) + " repeats in operand " + std::to_string(k) +
                             " with lengths " + std::to_string(shapes[k][j]) + " and " +
                             std::to_string(shapes[k][i]) + " (no broadcasting inside one operand)",
                         slots[i].column);
          }
        }
      }
    }
    // 5. output labels unique (only `_` can reach this)
    for (std::size_t i = 0; i < out_slots.size(); ++i) {
      for (std::size_t j = 0; j < i; ++j) {
        if (out_slots[j].label == out_slots[i].label) {
          return error(Code::duplicateEinsumOutputAxis,
                       "output label " + quote(out_slots[i].label) + " appears more than once",
                       out_slots[i].column);
        }
      }
    }
    // 6. output named labels must occur in some operand
    for (const Slot& s : out_slots) {
      if (s.ellipsis >= 0) continue;
      const bool found = std::any_of(expanded.begin(), expanded.end(), [&](const auto& slots) {
        return std::any_of(slots.begin(), slots.end(), [&](const Slot& t) { return t.label == s.label; });
      });
      if (!found) {
        return error(Code::unknownEinsumOutputAxis,
                     "output label " + quote(s.label) + " appears in no operand", s.column);
      }
    }

    // Global axis list G (first appearance) and resolved lengths: the first occurrence != 1.
    CheckedEinsum out;
    out.pattern = p.text;
    std::unordered_map<std::string, int> index_of;
    index_of.reserve(slot_count);
    out.axes.reserve(slot_count);
    out.operands.reserve(expanded.size());
    for (std::size_t k = 0; k < expanded.size(); ++k) {
      CheckedOperand op;
      op.shape = shapes[k];
      op.axes.reserve(expanded[k].size());
      for (std::size_t d = 0; d < expanded[k].size(); ++d) {
        const Slot& s = expanded[k][d];
        auto [it, inserted] = index_of.try_emplace(s.label, static_cast<int>(out.axes.size()));
        if (inserted) out.axes.push_back(Axis{s.label, s.ellipsis, 1});
        Axis& axis = out.axes[static_cast<std::size_t>(it->second)];
        if (axis.length == 1 && shapes[k][d] != 1) axis.length = shapes[k][d];
        op.axes.push_back(it->second);
      }
      out.operands.push_back(std::move(op));
    }
    // 7. every occurrence is 1 or L(a); first offending occurrence in operand/dimension order
    for (std::size_t k = 0; k < out.operands.size(); ++k) {
      const CheckedOperand& op = out.operands[k];
      for (std::size_t d = 0; d < op.axes.size(); ++d) {
        const Axis& axis = out.axes[static_cast<std::size_t>(op.axes[d])];
        if (op.shape[d] != 1 && op.shape[d] != axis.length) {
          return error(Code::incompatibleEinsumBroadcast,
                       "axis " + quote(axis.name) + " has length " + std::to_string(op.shape[d]) +
                           " in operand " + std::to_string(k) + " but " + std::to_string(axis.length) +
                           " elsewhere (only 1 broadcasts)",
                       expanded[k][d].column);
        }
      }
    }

    out.output.reserve(out_slots.size());
    out.output_shape.reserve(out_slots.size());
    for (const Slot& s : out_slots) {
      out.output.push_back(index_of.at(s.label));
      out.output_shape.push_back(out.axes[static_cast<std::size_t>(out.output.back())].length);
    }
    out.contracted.reserve(out.axes.size() - out.output.size());  // output labels are unique (step 5)
    out.contraction_shape.reserve(out.axes.size() - out.output.size());
    for (std::size_t g = 0; g < out.axes.size(); ++g) {
      if (std::find(out.output.begin(), out.output.end(), static_cast<int>(g)) == out.output.end()) {
        out.contracted.push_back(static_cast<int>(g));
        out.contraction_shape.push_back(out.axes[g].length);
      }
    }
    out.roles = axis_roles(out);
    if (auto r = check_limits(out); !r) return std::move(r).error();
    return out;
  }

  Result<bool> check_limits(CheckedEinsum& e) const {
    auto limit = [&](std::string what) {
      return error(Code::sizeLimitExceeded, std::move(what), 0);
    };
    if (static_cast<std::int64_t>(e.operands.size()) > limits.max_operands) {
      return limit(std::to_string(e.operands.size()) + " operands exceed the limit max-operands = " +
                   std::to_string(limits.max_operands));
    }
    if (static_cast<std::int64_t>(e.axes.size()) > limits.max_labels) {
      return limit(std::to_string(e.axes.size()) + " distinct axes exceed the limit max-labels = " +
                   std::to_string(limits.max_labels));
    }
    for (std::size_t k = 0; k < e.operands.size(); ++k) {
      auto r = check_tensor_size(e.operands[k].shape, limits, "operand " + std::to_string(k));
      if (!r) return std::move(r).error();
    }
    auto out_size = check_tensor_size(e.output_shape, limits, "the output");
    if (!out_size) return std::move(out_size).error();
    e.output_size = *out_size;
    const auto contraction = checked_element_count(e.contraction_shape);
    if (!contraction) {
      return limit("the contraction space " + format_shape(e.contraction_shape) +
                   " has more elements than int64 can count");
    }
    e.contraction_size = *contraction;
    // The global space (output x contraction) once per operand and once for the product.
    const std::int64_t factors[] = {e.output_size, e.contraction_size,
                                    static_cast<std::int64_t>(e.operands.size() + 1)};
    const std::optional<std::int64_t> materialised = checked_product(factors);
    if (!materialised || *materialised > limits.max_materialised_elements) {
      return limit("the reference would materialise (output " + format_shape(e.output_shape) +
                   " x contraction " + format_shape(e.contraction_shape) + ") x " +
                   std::to_string(e.operands.size() + 1) +
                   " elements, over the limit max-materialised-elements = " +
                   std::to_string(limits.max_materialised_elements));
    }
    return true;
  }
};

}  // namespace

Result<CheckedEinsum> check_einsum(const EinsumPattern& pattern, std::span<const Shape> shapes,
                                   const Limits& limits) {
  return Checker{pattern, shapes, limits}.run();
}

Result<CheckedEinsum> detail::check_einsum_uncached(std::string_view pattern, std::span<const Shape> shapes,
                                                    const Limits& limits) {
  auto parsed = parse_einsum(pattern);
  if (!parsed) return std::move(parsed).error();
  return check_einsum(*parsed, shapes, limits);
}

namespace {

/// check_einsum's arguments, for its memo (check_memo.hpp).
struct EinsumCheckKey {
  std::string pattern;
  std::vector<Shape> shapes;
  Limits limits;

  bool matches(std::string_view p, std::span<const Shape> s, const Limits& l) const {
    return p == pattern && detail::same_limits(l, limits) && std::equal(s.begin(), s.end(), shapes.begin(), shapes.end());
  }
  void assign(std::string_view p, std::span<const Shape> s, const Limits& l) {
    pattern.assign(p);
    shapes.assign(s.begin(), s.end());
    limits = l;
  }
};

thread_local detail::CheckMemo<EinsumCheckKey, CheckedEinsum> einsum_memo;

}  // namespace

void detail::release_einsum_memo() noexcept { einsum_memo.release(); }

std::shared_ptr<const Result<CheckedEinsum>> check_einsum_shared(std::string_view pattern, std::span<const Shape> shapes,
                                                                const Limits& limits) {
  return einsum_memo.get_shared([&] { return detail::check_einsum_uncached(pattern, shapes, limits); }, pattern, shapes,
                         limits);
}

Result<CheckedEinsum> check_einsum(std::string_view pattern, std::span<const Shape> shapes,
                                   const Limits& limits) {
  return *check_einsum_shared(pattern, shapes, limits);
}

}  // namespace einfuzz
