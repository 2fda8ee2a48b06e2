// The SEMANTICS §11 conformance tables, transcribed row by row.
#include "support/conformance_rows.hpp"

#include <cstdlib>
#include <iostream>

#include "einfuzz/harness/check_command.hpp"
#include "support/values_text.hpp"

namespace einfuzz::test {

constexpr DType kBool = DType::boolean;

const std::vector<EinsumValueRow>& einsum_value_rows() {
  static const std::vector<EinsumValueRow> rows = {
      {"E01", "a b, b c -> a c", "2x3,3x2", {"1..6", "1,0,0,1,1,1"}, "2x2", "4,5,10,11"},
      {"E02", "a b -> b a", "2x3", {"1..6"}, "3x2", "1,4,2,5,3,6"},
      {"E03", "a b ->", "2x3", {"1..6"}, "()", "21"},
      {"E04", "a b -> a", "2x3", {"1..6"}, "2", "6,15"},
      {"E05", "i i -> i", "3x3", {"0..8"}, "3", "0,4,8"},
      {"E06", "i i ->", "3x3", {"0..8"}, "()", "12"},
      {"E07", "i i j -> i j", "2x2x2", {"0..7"}, "2x2", "0,1,6,7"},
      {"E08", "i i, i -> i", "1x1,3", {"2", "1,2,3"}, "3", "2,4,6"},
      {"E09", "i, i -> i", "1,3", {"2", "1,2,3"}, "3", "2,4,6"},
      {"E10", "i j, j k -> i k", "2x1,3x2", {"1,2", "1..6"}, "2x2", "9,12,18,24"},
      {"E11", "i, i -> i", "0,1", {"", "5"}, "0", ""},
      {"E12", "i, i -> i", "1,0", {"5", ""}, "0", ""},
      {"E13", "i, i ->", "0,1", {"", "5"}, "()", "0"},
      {"E14", "i j -> i", "2x0", {""}, "2", "0,0"},
      {"E15", "i j -> j", "2x0", {""}, "0", ""},
      {"E16", "i, j -> i j", "0,3", {"", "1,2,3"}, "0x3", ""},
      {"E17", "i i ->", "0x0", {""}, "()", "0"},
      {"E18", "i j, j -> i", "2x0,1", {"", "7"}, "2", "0,0"},
      {"E19", "->", "()", {"3"}, "()", "3"},
      {"E20", ", ->", "(),()", {"3", "4"}, "()", "12"},
      {"E21", "a, -> a", "2,()", {"1,2", "10"}, "2", "10,20"},
      {"E22", "a, a, a, a, a -> a", "2,2,2,1,2", {"1,2", "3,4", "5,6", "2", "1,-1"}, "2", "30,-96"},
      {"E23", "a b, b c, c d, d e -> a e", "1x2,2x2,2x1,1x2", {"1,2", "1,0,0,1", "3,4", "1,10"}, "1x2", "11,110"},
      {"E24", "... ->", "2x3", {"1..6"}, "()", "21"},
      {"E25", "... i -> ...", "2x3", {"1..6"}, "2", "6,15"},
      {"E26", "... i -> i", "2x3", {"1..6"}, "3", "5,7,9"},
      {"E27", "i j -> ... i j", "2x3", {"1..6"}, "2x3", "1..6"},
      {"E28", "o i, ... i -> ... o", "2x3,2x3", {"1,0,0,0,1,1", "1..6"}, "2x2", "1,5,4,11"},
      {"E29", "... i, ... i -> ... i", "2x1x2,3x2", {"1,2,3,4", "1,1,2,2,3,3"}, "2x3x2", "1,2,2,4,3,6,3,4,6,8,9,12"},
      {"E30", "i j ->", "2x2", {"1e16,1,-1e16,1"}, "()", "1"},
      {"E31", "j i, i j ->", "2x2,2x2", {"1,1,1,1", "1e16,1,-1e16,1"}, "()", "2"},
      {"E32", "... i, ... j -> i j", "3x1,2x3x1", {"1,1,1", "1e16,-1e16,0,1,1,0"}, "1x1", "1"},
      {"E33", "i -> i", "1", {"-0"}, "1", "0"},
      {"E34", "i, i ->", "1,1", {"-0", "1"}, "()", "0"},
      {"E35", "i, i -> i", "2,2", {"inf,0", "0,1"}, "2", "nan,0"},
      {"E36", "i ->", "2", {"1,nan"}, "()", "nan"},
      {"E37", "a, a, a -> a", "1,1,1", {"1e308", "10", "0.1"}, "1", "inf"},
      {"E38", "a, a, a -> a", "1,1,1", {"0.1", "10", "1e308"}, "1", "1e308"},
      {"E39", "batch inner, inner out -> batch out", "1x2,2x1", {"1,2", "3,4"}, "1x1", "11"},
      {"E40", "(a) b -> a", "2x3", {"1..6"}, "2", "6,15"},
      {"E41", "a (b 1) -> a", "2x3", {"1..6"}, "2", "6,15"},
      {"E42", "_ b -> _", "2x3", {"1..6"}, "2", "6,15"},
      {"E43", "i, j -> j i", "2,3", {"1,2", "1,10,100"}, "3x2", "1,2,10,20,100,200"},
      {"E44", "b i j, b j k -> b i k", "2x1x2,2x2x1", {"1,2,3,4", "1,1,1,-1"}, "2x1x1", "3,-1"},
      {"E45", "i ->", "9", {"16777216,8*1"}, "()", "16777216", DType::f32},
  };
  return rows;
}

const std::vector<EinsumErrorRow>& einsum_error_rows() {
  static const std::vector<EinsumErrorRow> rows = {
      {"X01", "a b", "2x3", Code::missingArrow},
      {"X02", "", "()", Code::missingArrow},
      {"X03", "a -> b -> c", "2", Code::duplicateArrow},
      {"X04", "a$ -> a", "2", Code::unknownCharacter},
      {"X05", "a\tb -> a", "2x3", Code::unknownCharacter},
      {"X06", "a... -> a", "2x3", Code::unknownCharacter},
      {"X07", "_x b -> b", "2x3", Code::invalidIdentifier},
      {"X08", "2a -> ", "2", Code::invalidIdentifier},
      {"X09", "0 -> ", "1", Code::invalidAnonymousAxis},
      {"X10", "((a)) -> a", "2", Code::nestedParenthesis},
      {"X11", "(a -> a", "2", Code::unbalancedParenthesis},
      {"X12", "a * b -> a", "2x3", Code::unexpectedToken},
      {"X13", "a b -> a, b", "2x3", Code::unexpectedToken},
      {"X14", "... ... ->", "2x3", Code::duplicateEllipsis},
      {"X15", "a b -> a a", "2x3", Code::duplicateAxis},
      {"X16", "a, b -> a", "2", Code::einsumOperandCountMismatch},
      {"X17", "->", "", Code::einsumOperandCountMismatch},
      {"X18", "(a b) -> a", "6", Code::unsupportedEinsumAxis},
      {"X19", "1 a -> a", "1x3", Code::unsupportedEinsumAxis},
      {"X20", "() a -> a", "1x3", Code::unsupportedEinsumAxis},
      {"X21", "2 a -> a", "2x3", Code::unsupportedEinsumAxis},
      {"X22", "(...) a -> a", "2x3", Code::unsupportedEinsumAxis},
      {"X23", "a b -> a", "2", Code::rankMismatch},
      {"X24", "a b ... -> a", "2", Code::rankMismatch},
      {"X25", "i i -> i", "2x3", Code::repeatedEinsumDimensionMismatch},
      {"X26", "i i -> i", "1x3", Code::repeatedEinsumDimensionMismatch},
      {"X27", "_ _ b -> _ _", "2x2x3", Code::duplicateEinsumOutputAxis},
      {"X28", "a -> b", "2", Code::unknownEinsumOutputAxis},
      {"X29", "i, i -> i", "2,3", Code::incompatibleEinsumBroadcast},
      {"X30", "i, i -> i", "0,3", Code::incompatibleEinsumBroadcast},
      {"X31", "a b -> c", "3", Code::rankMismatch},
  };
  return rows;
}

const std::vector<ReduceValueRow>& reduce_value_rows() {
  static const std::vector<ReduceValueRow> rows = {
      {"R01", "a b -> a", "sum", {}, {2, 3}, "1..6", {2}, "6,15"},
      {"R02", "a b -> a", "prod", {}, {2, 3}, "1..6", {2}, "6,120"},
      {"R03", "a b -> a", "mean", {}, {2, 3}, "1..6", {2}, "2,5"},
      {"R04", "a b -> a", "min", {}, {2, 3}, "1..6", {2}, "1,4"},
      {"R05", "a b -> a", "max", {}, {2, 3}, "1..6", {2}, "3,6"},
      {"R06", "a b -> b", "mean", {}, {2, 3}, "1..6", {3}, "2.5,3.5,4.5"},
      {"R07", "a b ->", "mean", {}, {2, 2}, "1,2,4,0", {}, "1.75"},
      {"R08", "a ->", "mean", {}, {3}, "1,2,4", {}, "2.3333333333333335"},
      {"R09", "a b -> a", "sum", {}, {2, 0}, "", {2}, "0,0"},
      {"R10", "a b -> a", "prod", {}, {2, 0}, "", {2}, "1,1"},
      {"R11", "a b -> a", "any", {}, {2, 0}, "", {2}, "0,0", kBool},
      {"R12", "a b -> a", "all", {}, {2, 0}, "", {2}, "1,1", kBool},
      {"R13", "a b -> a", "max", {}, {0, 3}, "", {0}, ""},
      {"R14", "a b -> a", "any", {}, {2, 2}, "1,0,0,0", {2}, "1,0", kBool},
      {"R15", "a b -> a", "all", {}, {2, 2}, "1,1,1,0", {2}, "1,0", kBool},
      {"R16", "a ->", "max", {}, {3}, "1,nan,0.5", {}, "1"},
      {"R17", "a ->", "max", {}, {3}, "nan,1,0.5", {}, "nan"},
      {"R18", "a ->", "min", {}, {3}, "1,nan,0.5", {}, "0.5"},
      {"R19", "a ->", "min", {}, {3}, "1,0.5,nan", {}, "nan"},
      {"R20", "a ->", "max", {}, {2}, "0,-0", {}, "-0"},
      {"R21", "a ->", "max", {}, {2}, "-0,0", {}, "0"},
      {"R22", "a ->", "min", {}, {2}, "0,-0", {}, "0"},
      {"R23", "a ->", "min", {}, {2}, "-0,0", {}, "-0"},
      {"R24", "a -> a", "sum", {}, {1}, "-0", {1}, "0"},
      {"R25", "a -> a", "min", {}, {1}, "-0", {1}, "-0"},
      {"R26", "a -> a", "prod", {}, {1}, "-0", {1}, "-0"},
      {"R27", "a -> a", "mean", {}, {1}, "-0", {1}, "0"},
      {"R28", "a ->", "sum", {}, {4}, "1e16,1,-1e16,1", {}, "1"},
      {"R29", "a ->", "prod", {}, {3}, "1e308,10,0.1", {}, "inf"},
      {"R30", "(a b) c -> a c", "sum", {{"b", 2}}, {4, 2}, "1..8", {2, 2}, "4,6,12,14"},
      {"R31", "a b c -> (c a)", "sum", {}, {2, 3, 2}, "0..11", {4}, "6,24,9,27"},
      {"R32", "b (h 2) (w 2) -> b h w", "max", {}, {1, 2, 4}, "1,5,2,0,3,4,7,6", {1, 1, 2}, "5,7"},
      {"R33", "a b -> a 1", "sum", {}, {2, 3}, "1..6", {2, 1}, "6,15"},
      {"R34", "a b -> () a ()", "sum", {}, {2, 3}, "1..6", {1, 2, 1}, "6,15"},
      {"R35", "a ... -> a", "sum", {}, {2, 1, 2}, "1,2,3,4", {2}, "3,7"},
      {"R36", "... b -> b ...", "min", {}, {2, 3}, "1..6", {3, 2}, "1,4,2,5,3,6"},
      {"R37", "a (b c) -> c", "sum", {{"b", 2}}, {2, 4}, "1..8", {2}, "16,20"},
      {"R38", "(h 2) -> h", "mean", {}, {4}, "1,2,3,4", {2}, "1.5,3.5"},
      {"R39", "a ->", "sum", {}, {9}, "16777216,8*1", {}, "16777216", DType::f32},
  };
  return rows;
}

const std::vector<ReduceErrorRow>& reduce_error_rows() {
  static const std::vector<ReduceErrorRow> rows = {
      {"Y01", "a b -> a", "mean", {}, {2, 0}, Code::emptyFiber, "undefined on empty fibers"},
      {"Y02", "a b -> a", "min", {}, {2, 0}, Code::emptyFiber, "undefined on empty fibers"},
      {"Y03", "a b -> b", "max", {}, {0, 3}, Code::emptyFiber, "undefined on empty fibers"},
      {"Y04", "a b -> a c", "sum", {}, {2, 3}, Code::axisMismatch},
      {"Y05", "a b -> a 2", "sum", {}, {2, 3}, Code::axisMismatch},
      {"Y06", "a a -> a", "sum", {}, {2, 2}, Code::duplicateAxis},
      {"Y07", "a b -> b a a", "sum", {}, {2, 3}, Code::duplicateAxis},
      {"Y08", "_ ->", "sum", {}, {2}, Code::invalidIdentifier},
      {"Y09", "a, b -> a", "sum", {}, {2, 3}, Code::unexpectedToken},
      {"Y10", "a b c -> a", "sum", {}, {2, 3}, Code::rankMismatch},
      {"Y11", "(...) b -> b", "sum", {}, {2, 3}, Code::invalidEllipsis},
      {"Y12", "a b -> ... a", "sum", {}, {2, 3}, Code::invalidEllipsis},
      {"Y13", "(a b) -> a", "sum", {}, {6}, Code::cannotInferAxis},
      {"Y14", "(a b) -> a", "sum", {{"b", 4}}, {6}, Code::dimensionMismatch},
      {"Y15", "(a b) -> a", "sum", {{"b", 0}}, {0}, Code::cannotInferAxis},
      {"Y16", "(a b) -> a", "sum", {{"b", 0}}, {4}, Code::dimensionMismatch},
      {"Y17", "a -> a", "sum", {{"z", 3}}, {6}, Code::unusedAxisLength},
      {"Y18", "(a b) -> a", "sum", {{"b", 3}, {"b", 3}}, {6}, Code::duplicateAxisLength},
      {"Y19", "a b -> a", "sum", {{"a", 5}}, {6, 3}, Code::dimensionMismatch},
      {"Y20", "1 a -> a", "sum", {}, {2, 3}, Code::dimensionMismatch},
      {"Y21", "a b -> a", "any", {}, {2, 2}, Code::unsupportedDtype, "requires a Boolean tensor"},
      {"Y22", "a b -> a", "mean", {}, {2, 2}, Code::unsupportedDtype, "", DType::i32},
  };
  return rows;
}

// VJP rows (docs/semantics.md, "VJPs"), each gradient derived by hand from SEMANTICS §13.8; the
// derivation of the less obvious ones is in the note column of the docs table.
const std::vector<VjpRow>& vjp_rows() {
  static const std::vector<VjpRow> rows = {
      {"V01", "a b -> a", "sum", "2x3", {"1..6"}, "2", "10,20", {"10,10,10,20,20,20"}, "pullback"},
      {"V02", "a b ->", "sum", "2x2", {"1..4"}, "()", "-0", {"-0,-0,-0,-0"}, "g copied, no arithmetic"},
      {"V03", "a b -> a", "mean", "2x3", {"1..6"}, "2", "6,1",
       {"2,2,2,0.3333333333333333,0.3333333333333333,0.3333333333333333"}, "g / n, one division"},
      {"V04", "a ->", "mean", "3", {"1,2,3"}, "()", "1",
       {"0.3333333432674408,0.3333333432674408,0.3333333432674408"}, "1/3 rounded to binary32", DType::f32},
      {"V05", "a ->", "prod", "4", {"2,0,3,5"}, "()", "10", {"0,300,0,0"}, "one zero: leave-one-out"},
      {"V06", "a ->", "prod", "4", {"2,0,3,-0"}, "()", "10", {"-0,-0,-0,0"}, "two zeros"},
      {"V07", "a b -> a", "max", "2x3", {"1,5,5,2,2,2"}, "2", "6,9", {"0,3,3,3,3,3"}, "ties share"},
      {"V08", "a ->", "min", "3", {"0,-0,1"}, "()", "1", {"0.5,0.5,0"}, "±0 tie"},
      {"V09", "a ->", "max", "3", {"-0,-1,0"}, "()", "3", {"1.5,0,1.5"}, "±0 tie"},
      {"V10", "a b -> a", "max", "2x3", {"1,nan,3,nan,nan,2"}, "2", "4,8", {"0,0,4,4,4,0"}, "NaN fibre"},
      {"V11", "a ->", "min", "4", {"nan,1,nan,nan"}, "()", "3", {"1,0,1,1"}, "NaN fibre"},
      {"V12", "i j, i j -> i j", "", "1x3,2x3", {"1,2,3", "1..6"}, "2x3", "1,1,1,10,10,10",
       {"41,52,63", "1,2,3,10,20,30"}, "size-1 broadcast"},
      {"V13", "i i -> i", "", "3x3", {"0..8"}, "3", "1,2,3", {"1,0,0,0,2,0,0,0,3"}, "diagonal"},
      {"V14", "i i ->", "", "3x3", {"0..8"}, "()", "5", {"5,0,0,0,5,0,0,0,5"}, "trace"},
      {"V15", "i i, i -> i", "", "1x1,3", {"2", "1,2,3"}, "3", "1,10,100", {"321", "2,20,200"},
       "diagonal + broadcast"},
      {"V16", "... i, i -> ...", "", "2x3,3", {"1..6", "1,2,3"}, "2", "1,10", {"1,2,3,10,20,30", "41,52,63"},
       "ellipsis"},
      {"V17", "... i, i -> i", "", "2x3,3", {"1..6", "1,1,2"}, "3", "1,2,3", {"1,2,6,1,2,6", "5,14,27"},
       "ellipsis summed"},
      {"V18", "i j, j -> i", "", "2x0,1", {"", "7"}, "2", "1,2", {"", "0"}, "zero-length axis"},
      {"V19", "a, -> a", "", "2,()", {"1,2", "-0"}, "2", "1,1", {"0,0", "3"}, "S starts at +0"},
      {"V20", "a b, b a ->", "", "1x1,2x2", {"2", "1e16,-1e16,1,1"}, "()", "1", {"1", "2,2,2,2"},
       "global order, not memory order"},
  };
  return rows;
}

// f16/bf16 rows (docs/semantics.md, "f16 and bf16"), derived by hand from SEMANTICS §6/§8 with
// ORACLE §8's arithmetic: every + and · is exact, then rounded once to nearest even in the format.
// f16 has 11 significand bits (integers exact up to 2048, ulp 2^-10 in [1, 2), largest finite
// 65504, subnormals multiples of 2^-24 below 2^-14); bf16 has 8 (integers exact up to 256).
constexpr DType kF16 = DType::f16;
constexpr DType kBF16 = DType::bf16;

const std::vector<EinsumValueRow>& half_einsum_value_rows() {
  static const std::vector<EinsumValueRow> rows = {
      // S runs 1, 2, …, 2048 exactly; 2048 + 1 = 2049 lies halfway between 2048 (even significand)
      // and 2050, so it rounds back to 2048, and every later + 1 does the same.
      {"H01", "i ->", "3000", {"3000*1"}, "()", "2048", kF16},
      // P0 = (1 + 2^-5)(1 + 2^-6) = 1 + 48·2^-10 + 2^-11: a half-ulp tie, to the even 1 + 48·2^-10 =
      // 0x1.0cp+0. P1 = (1 + 2^-10)·1.5 = 1 + 513·2^-10 + 2^-11: a tie, to the even 1 + 514·2^-10 =
      // 0x1.808p+0. S = 1072·2^-10 + 1538·2^-10 = 1305·2^-9 = 0x1.464p+1, exact.
      {"H02", "i, i ->", "2,2", {"0x1.08p+0,0x1.004p+0", "0x1.04p+0,0x1.8p+0"}, "()", "0x1.464p+1", kF16},
      // 65504 + 16 = 65520 is halfway between 65504 (odd significand 0x3ff) and 2^16, so it rounds to
      // 2^16, beyond the largest finite: +inf. 65504 + 15 = 65519 is below the tie: 65504.
      {"H03", "i j -> i", "2x2", {"65504,16,65504,15"}, "2", "inf,65504", kF16},
      // Products below 2^-14: 2^-12·2^-12 = 2^-24 (the smallest subnormal); 2^-20·2^-5 = 2^-25 is
      // halfway between +0 (even) and 2^-24: +0; 2^-14·0.5 = 2^-15 exactly; 1.5·2^-14·2^-11 =
      // 0.75·2^-24 rounds up to 2^-24. S = 0 + P keeps them.
      {"H04", "i, i -> i", "4,4", {"0x1p-12,0x1p-20,0x1p-14,0x1.8p-14", "0x1p-12,0x1p-5,0.5,0x1p-11"}, "4",
       "0x1p-24,0,0x1p-15,0x1p-24", kF16},
      // C[0,0] = ((0 + 2048·1) + 1·1) + 1·1: 2048, 2049 → 2048 (tie, even), 2048. C[0,1] = 2048 + 2 + 0
      // = 2050 exactly; C[1,0] = 1 + 1 + 2048 = 2050 exactly; C[1,1] = 1 + 2 + 0 = 3. The same sum in
      // another order (C[1,0]) keeps what C[0,0] loses.
      {"H05", "a b, b c -> a c", "2x3,3x2", {"2048,1,1,1,1,2048", "1,1,1,2,1,0"}, "2x2", "2048,2050,2050,3", kF16},
      // H05 in bf16 with 256 (bf16's 2048): 256 + 1 = 257 → 256 (tie, even), 256 + 2 = 258 exactly.
      {"H06", "a b, b c -> a c", "2x3,3x2", {"256,1,1,1,1,256", "1,1,1,2,1,0"}, "2x2", "256,258,258,3", kBF16},
  };
  return rows;
}

const std::vector<ReduceValueRow>& half_reduce_value_rows() {
  static const std::vector<ReduceValueRow> rows = {
      // Along the outer axis: each column's fold is H01's, 2048 (numpy's pairwise sum gives 3000).
      {"H07", "a b -> b", "sum", {}, {3000, 2}, "6000*1", {2}, "2048,2048", kF16},
      // bf16: S runs 1..256 exactly; 256 + 1 = 257 is halfway between 256 (even) and 258: 256.
      {"H08", "a ->", "sum", {}, {300}, "300*1", {}, "256", kBF16},
      // S = 2048 + 0 + … = 2048; n = 2049 converted to f16 is 2048 (a tie, to even), so the mean is
      // 2048 / 2048 = 1 (dividing by the exact 2049 would give 0x1.ffcp-1).
      {"H09", "a ->", "mean", {}, {2049}, "2048,2048*0", {}, "1", kF16},
      // SEMANTICS §8.4's ±0 ties: min keeps the earlier, max takes the later.
      {"H10", "a b -> a", "min", {}, {2, 2}, "0,-0,-0,0", {2}, "0,-0", kBF16},
      {"H11", "a b -> a", "max", {}, {2, 2}, "0,-0,-0,0", {2}, "-0,0", kBF16},
  };
  return rows;
}

std::vector<Shape> shapes_of(const char* text) {
  auto shapes = parse_shapes(text, Limits{});
  if (!shapes) {
    std::cerr << "conformance_rows: bad shapes '" << text << "': " << render(shapes.error()) << "\n";
    std::abort();
  }
  return *shapes;
}

Case reduce_case(const char* pattern, const char* kind, const Lengths& lengths, DType dtype, Tensor input) {
  Case c;
  c.op = Op::reduce;
  c.pattern = pattern;
  c.reduction = kind;
  c.axis_lengths = lengths;
  c.dtype = dtype;
  c.inputs.push_back(std::move(input));
  return c;
}

Case case_of(const EinsumValueRow& row) {
  Case c;
  c.pattern = row.pattern;
  c.dtype = row.dtype;
  const std::vector<Shape> shapes = shapes_of(row.shapes);
  for (std::size_t k = 0; k < shapes.size(); ++k) {
    c.inputs.push_back(tensor_from_text(row.dtype, shapes[k], row.values.at(k)));
  }
  return c;
}

Case case_of(const EinsumErrorRow& row) {
  Case c;
  c.pattern = row.pattern;
  c.dtype = DType::f64;
  for (const Shape& s : shapes_of(row.shapes)) c.inputs.emplace_back(DType::f64, s);
  return c;
}

Case case_of(const ReduceValueRow& row) {
  return reduce_case(row.pattern, row.kind, row.lengths, row.dtype, tensor_from_text(row.dtype, row.shape, row.values));
}

// Y21 (any on floats) and Y22 (mean on integers) carry their dtype in the row.
Case case_of(const ReduceErrorRow& row) {
  return reduce_case(row.pattern, row.kind, row.lengths, row.dtype, Tensor(row.dtype, row.shape));
}

Case case_of(const VjpRow& row) {
  const std::vector<Shape> shapes = shapes_of(row.shapes);
  Case c;
  if (*row.kind == '\0') {
    c.pattern = row.pattern;
    c.dtype = row.dtype;
    for (std::size_t k = 0; k < shapes.size(); ++k) c.inputs.push_back(tensor_from_text(row.dtype, shapes[k], row.values.at(k)));
  } else {
    c = reduce_case(row.pattern, row.kind, {}, row.dtype, tensor_from_text(row.dtype, shapes.at(0), row.values.at(0)));
  }
  c.cotangent = tensor_from_text(row.dtype, shapes_of(row.out_shape).at(0), row.cotangent);
  return c;
}

std::vector<Tensor> expected_gradients(const VjpRow& row) {
  const std::vector<Shape> shapes = shapes_of(row.shapes);
  std::vector<Tensor> out;
  for (std::size_t k = 0; k < shapes.size(); ++k) out.push_back(tensor_from_text(row.dtype, shapes[k], row.gradients.at(k)));
  return out;
}

void PrintTo(const EinsumValueRow& row, std::ostream* os) { *os << row.id << " '" << row.pattern << "'"; }
void PrintTo(const EinsumErrorRow& row, std::ostream* os) { *os << row.id << " '" << row.pattern << "'"; }
void PrintTo(const ReduceValueRow& row, std::ostream* os) {
  *os << row.id << " '" << row.pattern << "' " << row.kind;
}
void PrintTo(const VjpRow& row, std::ostream* os) {
  *os << row.id << " vjp '" << row.pattern << "' " << (*row.kind == '\0' ? "einsum" : row.kind);
}
void PrintTo(const ReduceErrorRow& row, std::ostream* os) {
  *os << row.id << " '" << row.pattern << "' " << row.kind;
}

}  // namespace einfuzz::test
