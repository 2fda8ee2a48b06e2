// libFuzzer target: VJP differential (issue 13). The input decodes as fuzz_einsum_diff's and
// fuzz_reduce_diff's do, plus a cotangent read after the inputs' values; the reference computes its
// ordered VJP (SEMANTICS §13.8), every implementation rejects the case or none does (any/all, an
// integer dtype, a forward error: never a crash), and no backend that answers VJPs fails.
#include "differential.hpp"

EINFUZZ_DIFFERENTIAL_TARGET(einfuzz::fuzz::run_vjp_differential, einfuzz::fuzz::OpChoice::any)
