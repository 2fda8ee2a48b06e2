// The multiset oracle of VJP cases (ORACLE §7). STAGING: the any-order VJP oracle is being built;
// until it lands no built-in any-order backend declares `vjp`, so reaching this is a harness bug.
#include "einfuzz/reference/multiset_vjp.hpp"

#include "einfuzz/core/harness_bug.hpp"

namespace einfuzz::reference {

MultisetVjp multiset_vjp_einsum(const CheckedEinsum&, std::span<const Tensor>, const Tensor&) {
  harness_bug("multiset_vjp_einsum: the any-order VJP oracle is not built yet");
}

MultisetVjp multiset_vjp_reduce(const CheckedReduce&, const Tensor&, const Tensor&) {
  harness_bug("multiset_vjp_reduce: the any-order VJP oracle is not built yet");
}

}  // namespace einfuzz::reference
