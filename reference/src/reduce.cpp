// Reference reduce: the input read as its elementary axes, a materialised permuted copy with the
// output axes first and the reduced axes last, then one sequential fold per contiguous fibre
// (SEMANTICS §8.1–§8.4, §13.5–§13.7). Deliberately naive: coordinates are walked one element at a
// time (materialise.hpp: a row-major step, then ravel), never through a stride plan.
#include "einfuzz/reference/reduce.hpp"
#include "einfuzz/core/harness_bug.hpp"

#include <cstdio>
#include <cstdlib>
#include <span>
#include <type_traits>
#include <vector>

#include "einfuzz/core/scalar.hpp"
#include "materialise.hpp"

namespace einfuzz::reference {
namespace {

[[noreturn]] void precondition_violated(const char* what) {
  harness_bug(std::string("reference::evaluate_reduce: precondition violated: ") + what);
}

/// §8.3: the ordered fold of one fibre, accumulator always on the left (§13.10).
template <class T>
T fold(Reduction kind, std::span<const T> fibre) {
  if constexpr (std::is_same_v<T, Bool8>) {
    if (kind != Reduction::any && kind != Reduction::all) precondition_violated("only any/all reduce bool tensors");
    bool acc = kind == Reduction::all;
    for (T v : fibre) acc = kind == Reduction::all ? (acc && v != 0) : (acc || v != 0);
    return acc ? Bool8{1} : Bool8{0};
  } else {
    switch (kind) {
      case Reduction::sum:
      case Reduction::mean: {
        T acc = T(0);
        for (T v : fibre) acc = scalar_add(acc, v);
        if (kind == Reduction::sum) return acc;
        if constexpr (is_float_type_v<T>) return acc / static_cast<T>(fibre.size());
        precondition_violated("mean needs a floating-point tensor");
      }
      case Reduction::prod: {
        T acc = T(1);
        for (T v : fibre) acc = scalar_mul(acc, v);
        return acc;
      }
      case Reduction::min:
      case Reduction::max: {
        if (fibre.empty()) precondition_violated("min/max of an empty fibre");
        T acc = fibre[0];
        for (std::size_t i = 1; i < fibre.size(); ++i) {
          const T v = fibre[i];
          if (kind == Reduction::min) {
            acc = (acc <= v) ? acc : v;
          } else {
            acc = (acc <= v) ? v : acc;
          }
        }
        return acc;
      }
      case Reduction::any:
      case Reduction::all: break;
    }
    precondition_violated("any/all need a bool tensor");
  }
}

template <class T>
Tensor evaluate(const CheckedReduce& r, const Tensor& input) {
  if (static_cast<std::size_t>(r.output_size) * static_cast<std::size_t>(r.fibre_size) !=
      static_cast<std::size_t>(input.size())) {
    precondition_violated("output and reduced axes do not cover the input axes");
  }
  const std::vector<T> permuted = detail::fibre_rows<T>(r, input.values<T>());
  const auto fibre = static_cast<std::size_t>(r.fibre_size);
  std::vector<T> out(static_cast<std::size_t>(r.output_size));
  for (std::size_t o = 0; o < out.size(); ++o) {
    // The fibre of output o is the contiguous row o of the permuted copy.
    out[o] = fold<T>(r.kind, std::span<const T>(permuted).subspan(fibre == 0 ? 0 : o * fibre, fibre));
  }
  return Tensor(r.output_shape, std::move(out));
}

}  // namespace

Tensor evaluate_reduce(const CheckedReduce& reduce, const Tensor& input) {
  if (input.dtype() != reduce.dtype) precondition_violated("the input's dtype differs from the checked dtype");
  if (input.shape() != reduce.input_shape) precondition_violated("the input's shape differs from the checked shape");
  return visit_dtype(reduce.dtype, [&](auto tag) { return evaluate<decltype(tag)>(reduce, input); });
}

}  // namespace einfuzz::reference
