// Internal to the eigen and xtensor adapters: the unsigned type their integer arithmetic runs in,
// so that wrapping is defined, and views of the signed data as that type.
#pragma once

#include <cstdint>

namespace einfuzz::adapter_detail {

/// The type arithmetic runs in: integers wrap, so they are computed unsigned (same bits, no UB).
template <class T>
struct ArithOf {
  using type = T;
};
template <> struct ArithOf<std::int32_t> { using type = std::uint32_t; };
template <> struct ArithOf<std::int64_t> { using type = std::uint64_t; };
template <class T>
using Arith = typename ArithOf<T>::type;

/// Signed and unsigned variants of one integer type may alias each other ([basic.lval]).
template <class T>
const Arith<T>* arith(const T* p) {
  return reinterpret_cast<const Arith<T>*>(p);
}
template <class T>
Arith<T>* arith(T* p) {
  return reinterpret_cast<Arith<T>*>(p);
}

}  // namespace einfuzz::adapter_detail
