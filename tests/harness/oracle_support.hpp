// Small helpers shared by the any-order oracle's test files: building cases from text, a backend
// that returns a fixed tensor, judging one hand-picked result, value profiles and MPFR helpers.
#pragma once

#include <gtest/gtest.h>
#include <mpfr.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <limits>
#include <ostream>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "einfuzz/core/case.hpp"
#include "einfuzz/core/check.hpp"
#include "einfuzz/core/check_reduce.hpp"
#include "einfuzz/core/choice.hpp"
#include "einfuzz/harness/judge.hpp"
#include "einfuzz/harness/run.hpp"
#include "einfuzz/harness/values.hpp"
#include "einfuzz/reference/multiset.hpp"
#include "support/values_text.hpp"
#include "support/verdicts.hpp"

namespace einfuzz::oracle_test {

using reference::ElementTruth;
using reference::MultisetEinsum;
using reference::ValueClass;

struct Input {
  Shape shape;
  std::string values;  ///< values_text notation: "1, -1e16, inf, nan, 3*0.5"
};

inline Case einsum_case(std::string pattern, DType dtype, const std::vector<Input>& inputs) {
  Case c;
  c.pattern = std::move(pattern);
  c.dtype = dtype;
  for (const Input& in : inputs) c.inputs.push_back(test::tensor_from_text(dtype, in.shape, in.values));
  return c;
}

inline Case reduce_case(std::string pattern, std::string reduction, Tensor input) {
  Case c;
  c.op = Op::reduce;
  c.pattern = std::move(pattern);
  c.reduction = std::move(reduction);
  c.dtype = input.dtype();
  c.inputs.push_back(std::move(input));
  return c;
}

inline Case reduce_case(std::string pattern, std::string reduction, DType dtype, const Input& input) {
  return reduce_case(std::move(pattern), std::move(reduction), test::tensor_from_text(dtype, input.shape, input.values));
}

/// A rank-0 or rank-1 tensor of T.
template <class T>
Tensor tensor_of(Shape shape, const std::vector<T>& values) {
  return Tensor(std::move(shape), values);
}

/// "<what> of" and the case as JSON, written only when a failing assertion streams it: the case's
/// text is as long as its inputs, and writing it for every element made the MPFR comparisons
/// (OracleExact) 35 times slower under AddressSanitizer than in release.
struct CaseWhere {
  const Case& c;
  std::string what;  ///< e.g. "element 3"
  friend std::ostream& operator<<(std::ostream& os, const CaseWhere& w) {
    return os << w.what << " of\n" << write_case(w.c);
  }
};

/// The checked einsum of `c` (a test failure, not a crash, when it does not check).
inline CheckedEinsum checked_of(const Case& c) {
  std::vector<Shape> shapes;
  for (const Tensor& t : c.inputs) shapes.push_back(t.shape());
  auto checked = check_einsum(c.pattern, shapes);
  if (!checked) ADD_FAILURE() << render(checked.error());
  return *checked;
}

inline reference::MultisetEinsum einsum_truth(const Case& c) {
  return reference::multiset_einsum(checked_of(c), c.inputs);
}

inline reference::MultisetReduce reduce_truth(const Case& c) {
  auto checked = check_reduce(c.pattern, *c.reduction, c.inputs[0].shape(), c.axis_lengths, c.dtype);
  if (!checked) ADD_FAILURE() << render(checked.error());
  return reference::multiset_reduce(*checked, c.inputs[0]);
}

/// A backend that returns a fixed tensor, with the declared factoring and NaN profile.
class FixedBackend final : public Backend {
 public:
  FixedBackend(Tensor result, bool factoring, NanProfile profile = NanProfile::propagate) : result_(std::move(result)) {
    caps_.ops = {Op::einsum, Op::reduce};
    caps_.reductions = {"sum", "mean", "prod", "min", "max"};
    caps_.dtypes = {DType::f32, DType::f64, DType::f16, DType::bf16};
    caps_.factoring = factoring;
    caps_.nan_profile = profile;
  }
  std::string_view name() const override { return "fixed"; }
  const Capabilities& capabilities() const override { return caps_; }
  BackendResult run(const Case&) override { return result_; }

 private:
  Tensor result_;
  Capabilities caps_;
};

using test::run_on;

/// Runs `c` on a FixedBackend returning the rank-0 or rank-1 `values`.
template <class T>
Verdict run_fixed(const Case& c, Shape shape, std::vector<T> values, bool factoring,
                  NanProfile profile = NanProfile::propagate) {
  FixedBackend backend(Tensor(std::move(shape), std::move(values)), factoring, profile);
  return run_on(c, backend);
}

/// The verdict with its first element's numbers and the case, for a failure message.
inline std::string explain(const Verdict& v, const Case& c) {
  std::string s = v.label() + ": " + v.detail;
  if (v.first) {
    s += "\n  element " + std::to_string(v.first->flat_index) + ": expected " + v.first->expected + ", actual " +
         v.first->actual + ", exact " + v.first->exact + ", bound " + v.first->bound_text + ", reachable " +
         v.first->reachable;
  }
  return s + "\ncase:\n" + write_case(c);
}

/// How the exactness test and the edge-value soundness property redraw a generated case's values.
enum class Profile { generator, full_range, tiny, huge, cancellation, small, edges, mixed };
constexpr Profile kProfiles[] = {Profile::generator, Profile::full_range, Profile::tiny,   Profile::huge,
                                 Profile::cancellation, Profile::small,  Profile::edges, Profile::mixed};

template <class T>
inline T draw_value(Rng& rng, Profile profile) {
  using L = std::numeric_limits<T>;
  constexpr int p = L::digits;
  const T sign = rng.chance(1, 2) ? T(1) : T(-1);
  // 1.f with p-1 random fraction bits: exactly p significant bits.
  const T mantissa = T(1) + static_cast<T>(rng.next() >> (64 - (p - 1))) * std::ldexp(T(1), -(p - 1));
  switch (profile) {
    case Profile::generator: break;
    case Profile::full_range:  // every binade, subnormals included
      return sign * std::ldexp(mantissa, static_cast<int>(rng.between(L::min_exponent - p, L::max_exponent - 1)));
    case Profile::tiny:  // subnormals and the lowest normal binades: products underflow deeply
      return sign * std::ldexp(mantissa, static_cast<int>(rng.between(L::min_exponent - p, L::min_exponent + 3)));
    case Profile::huge:  // near Ω: sums and products overflow
      if (rng.chance(1, 2)) return sign * std::ldexp(mantissa, L::max_exponent - 1 - static_cast<int>(rng.below(3)));
      return sign * static_cast<T>(rng.between(1, 4));
    case Profile::cancellation: {
      const T pool[] = {T(1e16), T(-1e16), T(1), T(-1), std::ldexp(T(1), p), -std::ldexp(T(1), p),
                        std::nextafter(T(1), T(2)), std::nextafter(T(1), T(0)), T(3), T(0.1), T(-0.1), T(0.5)};
      return pool[rng.below(std::size(pool))];
    }
    case Profile::small:
      return static_cast<T>(rng.between(-8, 8)) / static_cast<T>(std::int64_t{1} << rng.below(3));
    case Profile::edges: {
      static const std::vector<T> edges = edge_values<T>();
      return edges[rng.below(edges.size())];
    }
    case Profile::mixed: {
      if (rng.chance(1, 30)) {
        const T specials[] = {L::quiet_NaN(), L::infinity(), -L::infinity(), T(0), -T(0)};
        return specials[rng.below(std::size(specials))];
      }
      return draw_value<T>(rng, kProfiles[1 + rng.below(5)]);
    }
  }
  return T(0);
}

inline void redraw_values(Case& c, Rng& rng, Profile profile) {
  if (profile == Profile::generator) return;
  for (Tensor& t : c.inputs) {
    visit_dtype(t.dtype(), [&](auto tag) {
      using T = decltype(tag);
      if constexpr (std::is_floating_point_v<T>) {
        for (T& v : t.values<T>()) v = draw_value<T>(rng, profile);
      }
    });
  }
}

/// An MPFR number that frees itself.
class Mp {
 public:
  explicit Mp(mpfr_prec_t precision) { mpfr_init2(v_, precision); }
  ~Mp() { mpfr_clear(v_); }
  Mp(const Mp&) = delete;
  Mp& operator=(const Mp&) = delete;
  mpfr_ptr get() { return v_; }
  mpfr_srcptr get() const { return v_; }

 private:
  mpfr_t v_;
};

/// x rounded once to T (or, for the bounds, to double) as IEEE does: precision p, subnormals and
/// overflow emulated with emin/emax and mpfr_subnormalize.
template <class T>
inline T round_ieee(mpfr_srcptr x, mpfr_rnd_t rnd) {
  using L = std::numeric_limits<T>;
  Mp r(L::digits);
  int ternary = mpfr_set(r.get(), x, rnd);  // in the default (huge) exponent range
  const mpfr_exp_t emin = mpfr_get_emin(), emax = mpfr_get_emax();
  mpfr_set_emin(L::min_exponent - L::digits + 1);  // MPFR's emin of denorm_min: -1073 / -148
  mpfr_set_emax(L::max_exponent);                  // 1024 / 128
  ternary = mpfr_check_range(r.get(), ternary, rnd);
  mpfr_subnormalize(r.get(), ternary, rnd);
  T out;
  if constexpr (std::is_same_v<T, float>) {
    out = mpfr_get_flt(r.get(), MPFR_RNDN);
  } else {
    out = mpfr_get_d(r.get(), MPFR_RNDN);
  }
  mpfr_set_emin(emin);
  mpfr_set_emax(emax);
  return out;
}

template <class T>
inline bool same_bits(T a, T b) {
  if (std::isnan(a) && std::isnan(b)) return true;
  return std::memcmp(&a, &b, sizeof(T)) == 0;
}
}  // namespace einfuzz::oracle_test
