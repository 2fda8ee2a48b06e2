// libFuzzer target: reduce differential. Either every implementation rejects the case or none does;
// reference and fused agree bit for bit (NaN as NaN); any-order backends that support reduce (the
// shuffle backend) are judged by the multiset oracle, which must also admit the
// ordered reference for sum, mean and prod.
#include "differential.hpp"

EINFUZZ_DIFFERENTIAL_TARGET(einfuzz::fuzz::run_builtin_differential, einfuzz::fuzz::OpChoice::reduce)
