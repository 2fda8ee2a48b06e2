// libFuzzer target: einsum differential. Either every implementation rejects the case or none does;
// reference and fused agree bit for bit (NaN as NaN), the shuffle backend never gets a failing
// verdict from the multiset oracle, and the ordered reference lies in the multiset enclosure.
#include "differential.hpp"

EINFUZZ_DIFFERENTIAL_TARGET(einfuzz::fuzz::run_builtin_differential, einfuzz::fuzz::OpChoice::einsum)
