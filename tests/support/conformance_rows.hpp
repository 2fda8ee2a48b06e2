// The conformance rows of SEMANTICS §11 as C++ tables (E01–E45, X01–X31, R01–R39, Y01–Y22), the
// VJP rows V01–V20 and the f16/bf16 rows H01–H11 of docs/semantics.md, shared by the reference/fused
// conformance tests and the third-party backend tests.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "einfuzz/core/case.hpp"
#include "einfuzz/core/diagnostic.hpp"
#include "einfuzz/core/dtype.hpp"
#include "einfuzz/core/tensor.hpp"

namespace einfuzz::test {

/// §11.1: an einsum and its expected value (shapes in `--shapes` notation, values in values_text).
struct EinsumValueRow {
  const char* id;
  const char* pattern;
  const char* shapes;                 ///< --shapes notation
  std::vector<const char*> values;    ///< one value list per operand
  const char* out_shape;
  const char* out_values;
  DType dtype = DType::f64;
};

/// §11.2: an einsum the checker rejects, and the first failing check's code.
struct EinsumErrorRow {
  const char* id;
  const char* pattern;
  const char* shapes;
  Code code;
};

using Lengths = std::vector<std::pair<std::string, std::int64_t>>;

/// §11.3: a reduce and its expected value.
struct ReduceValueRow {
  const char* id;
  const char* pattern;
  const char* kind;
  Lengths lengths;
  Shape shape;
  const char* values;
  Shape out_shape;
  const char* out_values;
  DType dtype = DType::f64;
};

/// §11.4: a reduce the checker rejects, its code and (when pinned) a message fragment.
struct ReduceErrorRow {
  const char* id;
  const char* pattern;
  const char* kind;
  Lengths lengths;
  Shape shape;
  Code code;
  const char* message_fragment = "";
  DType dtype = DType::f64;
};

/// A VJP row (docs/semantics.md, "VJPs"): a forward einsum (`kind` empty) or reduce (`kind` the
/// reduction, one input), the cotangent of its output, and the hand-derived cotangent of every
/// forward input under the ordered VJPs of SEMANTICS §13.8.
struct VjpRow {
  const char* id;
  const char* pattern;
  const char* kind;                    ///< "" for an einsum, else the reduction's name
  const char* shapes;                  ///< --shapes notation, one per input
  std::vector<const char*> values;     ///< one value list per input
  const char* out_shape;               ///< the forward output's (and the cotangent's) shape
  const char* cotangent;               ///< the cotangent's values
  std::vector<const char*> gradients;  ///< expected, one value list per input (the input's shape)
  const char* note;
  DType dtype = DType::f64;
};

const std::vector<EinsumValueRow>& einsum_value_rows();
const std::vector<EinsumErrorRow>& einsum_error_rows();
const std::vector<ReduceValueRow>& reduce_value_rows();
const std::vector<ReduceErrorRow>& reduce_error_rows();
const std::vector<VjpRow>& vjp_rows();
/// The f16/bf16 rows H01–H11 of docs/semantics.md (ordered semantics, ORACLE §8): einsums and
/// reduces whose expected bits are derived by hand, one rounding to the format per + and ·.
const std::vector<EinsumValueRow>& half_einsum_value_rows();
const std::vector<ReduceValueRow>& half_reduce_value_rows();

/// Shapes in `--shapes` notation ("2x3,()"); a table's text that does not parse aborts (a test bug).
std::vector<Shape> shapes_of(const char* text);

/// A reduce case on one input.
Case reduce_case(const char* pattern, const char* kind, const Lengths& lengths, DType dtype, Tensor input);

/// The row as a case: a value row with its values, an error row with zero-filled inputs (f64 for
/// einsums, the row's dtype for reduces). `expect_error` and `origin` are left unset.
Case case_of(const EinsumValueRow& row);
Case case_of(const EinsumErrorRow& row);
Case case_of(const ReduceValueRow& row);
Case case_of(const ReduceErrorRow& row);
/// The row's VJP case (`cotangent` set; `op` the forward op).
Case case_of(const VjpRow& row);
/// The row's expected gradients, one tensor per input (the input's shape and the row's dtype).
std::vector<Tensor> expected_gradients(const VjpRow& row);

/// INSTANTIATE_TEST_SUITE_P's name generator for row tables: the row id ("E01").
struct RowId {
  template <class Info>
  std::string operator()(const Info& info) const {
    return info.param.id;
  }
};

// Test names and failure messages show the row id, not the bytes of the struct.
void PrintTo(const EinsumValueRow& row, std::ostream* os);
void PrintTo(const EinsumErrorRow& row, std::ostream* os);
void PrintTo(const ReduceValueRow& row, std::ostream* os);
void PrintTo(const ReduceErrorRow& row, std::ostream* os);
void PrintTo(const VjpRow& row, std::ostream* os);

}  // namespace einfuzz::test
