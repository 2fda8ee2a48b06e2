// libFuzzer target: pattern parse + check (einsum and reduce) with shapes drawn from the bytes;
// diagnostics must point inside their source and checked results must satisfy their invariants.
#include <algorithm>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "einfuzz/core/check.hpp"
#include "einfuzz/core/check_case.hpp"
#include "einfuzz/core/check_reduce.hpp"
#include "einfuzz/core/parse.hpp"
#include "fuzz_input.hpp"

namespace einfuzz::fuzz {
namespace {

void require_column(const Diagnostic& d, const std::string& pattern, bool must_have_column) {
  if (d.column == kNoColumn) {
    require(!must_have_column, "a parse diagnostic has no column");
    return;
  }
  const std::size_t limit = d.source.empty() ? pattern.size() : d.source.size();
  if (d.column > limit) {
    fail("diagnostic column " + std::to_string(d.column) + " is past its source (" + std::to_string(limit) +
         " bytes): " + render(d) + "\npattern: " + pattern);
  }
  (void)render(d);  // the caret rendering must cope with every column and byte
}

void require_expression(const Expression& e, const std::string& text) {
  require(e.column <= text.size(), "an expression column is past the pattern");
  for (const Item& item : e.items) {
    require(item.column < text.size(), "an item column is past the pattern");
    require(item.group || item.atoms.size() == 1, "a bare item does not hold exactly one atom");
    for (const Atom& a : item.atoms) {
      require(a.column < text.size(), "an atom column is past the pattern");
      const std::string_view at = std::string_view(text).substr(a.column);
      if (a.kind == Atom::Kind::ellipsis) {
        require(at.starts_with("..."), "an ellipsis atom does not point at '...'");
      } else {
        require(at.starts_with(a.name), "an atom's text is not at its column");
      }
    }
  }
}

/// Product where a 0 absorbs everything; -1 (never a valid size) when it does not fit int64.
std::int64_t product(const Shape& shape) {
  if (std::find(shape.begin(), shape.end(), 0) != shape.end()) return 0;
  std::int64_t p = 1;
  for (std::int64_t d : shape) {
    if (__builtin_mul_overflow(p, d, &p)) return -1;
  }
  return p;
}

// Invariants of CheckedEinsum (check.hpp): operands index valid axes and match their lengths or
// broadcast from 1; O and C partition G, C in G order; the shapes and sizes are the products.
void require_einsum_invariants(const CheckedEinsum& e, const std::vector<Shape>& shapes) {
  const int n = static_cast<int>(e.axes.size());
  require(e.operands.size() == shapes.size(), "checked operand count differs from the shapes");
  for (std::size_t k = 0; k < shapes.size(); ++k) {
    const CheckedOperand& op = e.operands[k];
    require(op.shape == shapes[k], "a checked operand's shape differs from the given one");
    require(op.axes.size() == op.shape.size(), "an operand's axis list and shape differ in rank");
    for (std::size_t d = 0; d < op.axes.size(); ++d) {
      require(op.axes[d] >= 0 && op.axes[d] < n, "an operand dimension maps to no axis");
      const std::int64_t len = e.axes[static_cast<std::size_t>(op.axes[d])].length;
      require(op.shape[d] == len || op.shape[d] == 1, "an operand length neither matches its axis nor broadcasts");
    }
  }
  std::vector<int> seen(static_cast<std::size_t>(n), 0);
  for (int a : e.output) {
    require(a >= 0 && a < n, "an output axis index is out of range");
    ++seen[static_cast<std::size_t>(a)];
  }
  require(std::is_sorted(e.contracted.begin(), e.contracted.end()), "contracted axes are not in G order");
  for (int a : e.contracted) {
    require(a >= 0 && a < n, "a contracted axis index is out of range");
    ++seen[static_cast<std::size_t>(a)];
  }
  require(std::all_of(seen.begin(), seen.end(), [](int c) { return c == 1; }),
          "output and contracted axes do not partition G");
  require(e.output_shape.size() == e.output.size() && e.contraction_shape.size() == e.contracted.size(),
          "output/contraction shape ranks differ from their axis lists");
  for (std::size_t i = 0; i < e.output.size(); ++i) {
    require(e.output_shape[i] == e.axes[static_cast<std::size_t>(e.output[i])].length, "output shape mismatch");
  }
  for (std::size_t i = 0; i < e.contracted.size(); ++i) {
    require(e.contraction_shape[i] == e.axes[static_cast<std::size_t>(e.contracted[i])].length,
            "contraction shape mismatch");
  }
  for (const Axis& a : e.axes) require(a.length >= 0, "a negative axis length was accepted");
  require(e.output_size == product(e.output_shape), "output_size is not the product of output_shape");
  require(e.contraction_size == product(e.contraction_shape), "contraction_size is not the product");
}

// One side's groups (input or output): one per dimension, each naming axes whose lengths multiply
// to that dimension; every axis named is counted in `seen`. The messages name the side.
struct GroupMessages {
  const char* count;    ///< the number of groups differs from the rank
  const char* no_axis;  ///< a group names an index that is no axis
  const char* product;  ///< a dimension is not the product of its axes' lengths
};
void require_groups(const CheckedReduce& r, const std::vector<std::vector<int>>& groups, const Shape& shape,
                    std::vector<int>& seen, const GroupMessages& messages) {
  const int n = static_cast<int>(r.axes.size());
  require(groups.size() == shape.size(), messages.count);
  for (std::size_t d = 0; d < groups.size(); ++d) {
    Shape lengths;
    for (int a : groups[d]) {
      require(a >= 0 && a < n, messages.no_axis);
      ++seen[static_cast<std::size_t>(a)];
      lengths.push_back(r.axes[static_cast<std::size_t>(a)].length);
    }
    require(product(lengths) == shape[d], messages.product);
  }
}

// Invariants of CheckedReduce (check_reduce.hpp): each input dimension is the product of its
// elementary axes; output groups and reduced axes partition the axes; sizes are the products.
void require_reduce_invariants(const CheckedReduce& r) {
  const int n = static_cast<int>(r.axes.size());
  std::vector<int> in_seen(static_cast<std::size_t>(n), 0), out_seen(static_cast<std::size_t>(n), 0);
  auto length_of = [&](int a) { return r.axes[static_cast<std::size_t>(a)].length; };
  require_groups(r, r.input_groups, r.input_shape, in_seen,
                 {"one input group per input dimension expected", "an input group names no axis",
                  "an input dimension is not the product of its axes"});
  require_groups(r, r.output_groups, r.output_shape, out_seen,
                 {"one output group per output dimension expected", "an output group names no axis",
                  "an output dimension is not the product of its axes"});
  require(std::is_sorted(r.reduced.begin(), r.reduced.end()), "reduced axes are not in input order");
  Shape fibre;
  for (int a : r.reduced) {
    require(a >= 0 && a < n, "a reduced axis index is out of range");
    ++out_seen[static_cast<std::size_t>(a)];
    fibre.push_back(length_of(a));
  }
  for (int a = 0; a < n; ++a) {
    require(in_seen[static_cast<std::size_t>(a)] == 1, "an elementary axis is not in exactly one input group");
    require(out_seen[static_cast<std::size_t>(a)] == 1, "an axis is neither kept once nor reduced once");
  }
  require(r.output_size == product(r.output_shape), "output_size is not the product of output_shape");
  require(r.fibre_size == product(fibre), "fibre_size is not the product of the reduced lengths");
}

void fuzz_einsum(const Structure& s) {
  const Result<EinsumPattern> parsed = parse_einsum(s.pattern);
  if (!parsed) {
    require_column(parsed.error(), s.pattern, true);
    require(!check_einsum(s.pattern, s.shapes).ok(), "check accepts a pattern that parse rejects");
    return;
  }
  require(parsed->text == s.pattern, "the AST does not keep the pattern text");
  require(!parsed->operands.empty(), "an einsum AST without operands");
  for (const Expression& e : parsed->operands) require_expression(e, s.pattern);
  require_expression(parsed->output, s.pattern);

  const Result<CheckedEinsum> checked = check_einsum(*parsed, s.shapes);
  const Result<CheckedEinsum> from_text = check_einsum(s.pattern, s.shapes);
  require(checked.ok() == from_text.ok(), "checking the AST and checking the text disagree");
  if (!checked) {
    require_column(checked.error(), s.pattern, false);
    require(checked.error().code == from_text.error().code, "AST and text checks give different codes");
    return;
  }
  require_einsum_invariants(*checked, s.shapes);
}

void fuzz_reduce(const Structure& s) {
  const Result<TransformPattern> parsed = parse_transform(s.pattern);
  if (parsed) {
    require(parsed->text == s.pattern, "the AST does not keep the pattern text");
    require_expression(parsed->input, s.pattern);
    require_expression(parsed->output, s.pattern);
  } else {
    require_column(parsed.error(), s.pattern, true);
  }
  const Shape input = s.shapes.empty() ? Shape{} : s.shapes.front();
  const Result<CheckedReduce> checked = check_reduce(s.pattern, s.reduction, input, s.axis_lengths, s.dtype);
  if (!checked) {
    require_column(checked.error(), s.pattern, false);
    return;
  }
  require(parsed.ok(), "check_reduce accepts a pattern that parse_transform rejects");
  require(checked->input_shape == input, "the checked input shape differs from the given one");
  require_reduce_invariants(*checked);
}

}  // namespace
}  // namespace einfuzz::fuzz

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace einfuzz::fuzz;
  Structure s = decode_structure({data, size}, OpChoice::any);
  if (s.generated) {  // the generator's patterns and shapes (valid, or deliberately invalid)
    const std::optional<Decoded> d = decode_case({data, size}, OpChoice::any);
    if (!d) return 0;
    s.op = d->c.op;
    s.dtype = d->c.dtype;
    s.reduction = d->c.reduction.value_or("");
    s.pattern = d->c.pattern;
    s.axis_lengths = d->c.axis_lengths;
    s.shapes.clear();
    for (const einfuzz::Tensor& t : d->c.inputs) s.shapes.push_back(t.shape());
  }
  if (s.op == einfuzz::Op::einsum) {
    fuzz_einsum(s);
  } else {
    fuzz_reduce(s);
  }
  einfuzz::release_check_memos();  // an input frees what it allocated (check_case.hpp)
  return 0;
}
