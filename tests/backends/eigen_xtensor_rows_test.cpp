// The `eigen` and `xtensor` backends on every SEMANTICS §11 row, with the expected verdict per backend
// (the rest of the backend tests: eigen_xtensor_test.cpp).
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>
#include <type_traits>
#include <variant>

#include "einfuzz/backends/eigen.hpp"
#include "einfuzz/backends/xtensor.hpp"
#include "einfuzz/core/case.hpp"
#include "support/conformance_rows.hpp"
#include "support/verdicts.hpp"

namespace einfuzz {
namespace {

using VK = VerdictKind;

std::unique_ptr<Backend> make_row_backend(const std::string& name) {
  return name == "eigen" ? make_eigen_backend() : make_xtensor_backend();
}

// ---------------------------------------------------------------------------------------------
// Expected verdicts of the §11 value rows. Every row not listed passes. Each entry is a verdict
// ORACLE.md allows for that backend, pinned to what these library versions do.

struct Expected {
  VK eigen;
  VK xtensor;
};

/// The §11.1 (E) and §11.3 (R) rows that do not simply pass, by row id.
const std::map<std::string, Expected>& exceptions() {
  static const std::map<std::string, Expected> rows = {
      // Diagonals: Eigen's Tensor module has no diagonal view (xtensor takes xt::diagonal).
      {"E05", {VK::unsupported, VK::pass}},
      {"E06", {VK::unsupported, VK::pass}},
      {"E07", {VK::unsupported, VK::pass}},
      {"E08", {VK::unsupported, VK::pass}},
      {"E17", {VK::unsupported, VK::pass}},
      // Passthrough `i -> i` on -0: Eigen copies (no 0 + x), so -0 stays: ORACLE §2 signed-zero note.
      {"E33", {VK::note_signed_zero, VK::pass}},
      // inf·0 is a NaN term: certain for per-term xtensor, path-dependent for factoring Eigen (§3).
      {"E35", {VK::indeterminate, VK::pass}},
      // 1e308·10·0.1: partial products may overflow, no certificate (§2): inf or 1e308 both accepted.
      {"E37", {VK::indeterminate, VK::indeterminate}},
      {"E38", {VK::indeterminate, VK::indeterminate}},
      // xtensor's amin/amax fold from ±max() with `select(acc > v, acc, v)`: a NaN is kept only when
      // it is the fibre's last value (known divergence, corpus/divergences/README.md).
      {"R16", {VK::pass, VK::mismatch_special}},
      {"R17", {VK::pass, VK::mismatch_special}},
      {"R18", {VK::pass, VK::mismatch_special}},
      // ±0 ties: either sign is a fibre element (ORACLE §5); both libraries take the later value.
      {"R20", {VK::note_signed_zero, VK::note_signed_zero}},
      {"R23", {VK::note_signed_zero, VK::note_signed_zero}},
      // 1e308·10·0.1 without a certificate of no overflow (ORACLE §4).
      {"R29", {VK::indeterminate, VK::indeterminate}},
  };
  return rows;
}

/// The row's expected verdict: its exception, else `pass` (floats, any-order oracle) or
/// `pass(bitwise)` (integers and bools are exact under both oracles).
VK expected_for(const std::string& id, DType dtype, const std::string& backend) {
  const auto it = exceptions().find(id);
  if (it == exceptions().end()) return is_float(dtype) ? VK::pass : VK::pass_bitwise;
  return backend == "eigen" ? it->second.eigen : it->second.xtensor;
}

// ---------------------------------------------------------------------------------------------
// §11 rows, each through each backend

/// One row through one backend: an error row is rejected with the checker's code (agreement, so
/// the verdict is `pass`); a value row gets its expected verdict.
template <class Row>
class RowTest : public ::testing::TestWithParam<Row> {
 protected:
  void check(const std::string& backend_name) {
    const Row& row = this->GetParam();
    auto backend = make_row_backend(backend_name);
    const Case c = test::case_of(row);
    if constexpr (std::is_same_v<Row, test::EinsumErrorRow> || std::is_same_v<Row, test::ReduceErrorRow>) {
      const BackendResult direct = backend->run(c);
      ASSERT_TRUE(std::holds_alternative<Rejected>(direct));
      EXPECT_EQ(std::get<Rejected>(direct).code, code_name(row.code));
      const Verdict v = test::run_on(c, *backend);
      EXPECT_EQ(v.kind, VK::pass) << test::explain(v);
    } else {
      const Verdict v = test::run_on(c, *backend);
      EXPECT_EQ(verdict_name(v.kind), verdict_name(expected_for(row.id, row.dtype, backend_name)))
          << test::explain(v);
    }
  }
};

// Suite SUITE of ROW rows (all of TABLE), test PREFIX/SUITE.Eigen/<row id> and .Xtensor/<row id>.
#define EINFUZZ_ROW_SUITE(PREFIX, SUITE, ROW, TABLE)                                             \
  class SUITE : public RowTest<ROW> {};                                                          \
  TEST_P(SUITE, Eigen) { check("eigen"); }                                                       \
  TEST_P(SUITE, Xtensor) { check("xtensor"); }                                                   \
  INSTANTIATE_TEST_SUITE_P(PREFIX, SUITE, ::testing::ValuesIn(TABLE), test::RowId{})

EINFUZZ_ROW_SUITE(Semantics11_1, EinsumValueRows, test::EinsumValueRow, test::einsum_value_rows());
EINFUZZ_ROW_SUITE(Semantics11_2, EinsumErrorRows, test::EinsumErrorRow, test::einsum_error_rows());
EINFUZZ_ROW_SUITE(Semantics11_3, ReduceValueRows, test::ReduceValueRow, test::reduce_value_rows());
EINFUZZ_ROW_SUITE(Semantics11_4, ReduceErrorRows, test::ReduceErrorRow, test::reduce_error_rows());

}  // namespace
}  // namespace einfuzz
