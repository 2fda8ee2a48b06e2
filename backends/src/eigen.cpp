// The eigen backend: einsum as a chain of Eigen::Tensor contractions, reductions with Eigen's
// reducers. The only translation unit of the project that includes Eigen.
#include "einfuzz/backends/eigen.hpp"

// With NDEBUG, Eigen compiles its assertions out and a mis-sized contraction silently returns
// garbage: keep them, as exceptions the run boundary turns into a `crash` verdict. Defined before
// any Eigen header, and no other TU includes Eigen, so every instantiation sees this definition.
#define eigen_assert(x)                                                              \
  do {                                                                               \
    if (!(x)) throw ::einfuzz::EigenAssertionFailure("eigen_assert failed: " #x);    \
  } while (false)

#include <algorithm>
#include <cstring>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <unsupported/Eigen/CXX11/Tensor>

#include "einfuzz/backends/adapter.hpp"
#include "einfuzz/core/check.hpp"
#include "einfuzz/core/check_reduce.hpp"
#include "arith.hpp"

namespace einfuzz {
namespace {

using Index = Eigen::Index;

/// Highest rank dispatched to a compile-time Eigen rank (broadcast and shuffle).
constexpr int kMaxRank = 6;

/// Thrown inside the adapter when a relayout needs a rank beyond kMaxRank; becomes Unsupported.
struct RankTooHigh {
  std::size_t rank;
};

template <class T, int R>
using ConstMap = Eigen::TensorMap<Eigen::Tensor<const T, R, Eigen::RowMajor>>;
template <class T, int R>
using Map = Eigen::TensorMap<Eigen::Tensor<T, R, Eigen::RowMajor>>;

using adapter_detail::Arith;
using adapter_detail::arith;

/// The Eigen scalar a core element type is computed as: Eigen::half and Eigen::bfloat16 for the
/// 16-bit floats (Eigen's own types, with Eigen's own arithmetic and accumulation), T otherwise.
template <class T>
struct EigenScalarOf {
  using type = T;
};
template <> struct EigenScalarOf<Float16> { using type = Eigen::half; };
template <> struct EigenScalarOf<BFloat16> { using type = Eigen::bfloat16; };
template <class T>
using EigenScalar = typename EigenScalarOf<T>::type;

/// Core's value as Eigen's scalar and back, bit for bit (both 16-bit formats are the same encoding
/// in core and in Eigen; the other types pass through).
template <class T>
EigenScalar<T> to_eigen(T v) {
  if constexpr (is_half_type_v<T>) {
    return Eigen::numext::bit_cast<EigenScalar<T>>(v.bits());
  } else {
    return v;
  }
}
template <class T>
T from_eigen(EigenScalar<T> e) {
  if constexpr (is_half_type_v<T>) {
    return T::from_bits(Eigen::numext::bit_cast<std::uint16_t>(e));
  } else {
    return e;
  }
}

/// The element count of `dims`. A zero-length dimension makes it 0 whatever the others are: the
/// checker bounds only the count, so the lengths beside a 0 may multiply past int64.
Index product(const std::vector<Index>& dims) { return element_count(dims); }

template <int R>
Eigen::array<Index, R> to_array(const std::vector<Index>& v) {
  Eigen::array<Index, R> a;
  for (int i = 0; i < R; ++i) a[static_cast<std::size_t>(i)] = v[static_cast<std::size_t>(i)];
  return a;
}

// ---------------------------------------------------------------------------------------------
// Relayouts: shuffle (any rank up to kMaxRank after simplification) and broadcast.

/// Calls fn(std::integral_constant<int, R>{}) with R = rank, for 1 <= rank <= kMaxRank (Eigen's
/// tensor rank is a template parameter); throws RankTooHigh for any other rank.
template <class Fn>
void with_rank(std::size_t rank, Fn&& fn) {
  static_assert(kMaxRank == 6, "one case per rank");
  switch (rank) {
    case 1: return fn(std::integral_constant<int, 1>{});
    case 2: return fn(std::integral_constant<int, 2>{});
    case 3: return fn(std::integral_constant<int, 3>{});
    case 4: return fn(std::integral_constant<int, 4>{});
    case 5: return fn(std::integral_constant<int, 5>{});
    case 6: return fn(std::integral_constant<int, 6>{});
    default: throw RankTooHigh{rank};
  }
}

template <class T, int R>
void shuffle_rank(const T* src, const std::vector<Index>& dims, const std::vector<Index>& perm, T* dst) {
  std::vector<Index> out(dims.size());
  for (std::size_t i = 0; i < dims.size(); ++i) out[i] = dims[static_cast<std::size_t>(perm[i])];
  ConstMap<T, R> in(src, to_array<R>(dims));
  Map<T, R> o(dst, to_array<R>(out));
  o = in.shuffle(to_array<R>(perm));
}

/// Drops length-1 dimensions and merges runs that stay adjacent, so the dispatched rank is the
/// permutation's real complexity, not the pattern's.
void simplify(std::vector<Index>& dims, std::vector<Index>& perm) {
  std::vector<Index> renumber(dims.size(), -1);
  std::vector<Index> kept_dims;
  for (std::size_t d = 0; d < dims.size(); ++d) {
    if (dims[d] == 1) continue;
    renumber[d] = static_cast<Index>(kept_dims.size());
    kept_dims.push_back(dims[d]);
  }
  std::vector<Index> p;
  for (Index s : perm) {
    if (renumber[static_cast<std::size_t>(s)] >= 0) p.push_back(renumber[static_cast<std::size_t>(s)]);
  }
  // Runs of consecutive source axes in destination order become one axis.
  std::vector<Index> head(kept_dims.size(), 1);  // 1 when the source axis starts a run
  for (std::size_t i = 1; i < p.size(); ++i) {
    if (p[i] == p[i - 1] + 1) head[static_cast<std::size_t>(p[i])] = 0;
  }
  std::vector<Index> merged_index(kept_dims.size());
  std::vector<Index> merged_dims;
  for (std::size_t s = 0; s < kept_dims.size(); ++s) {
    if (head[s]) {
      merged_dims.push_back(kept_dims[s]);
    } else {
      merged_dims.back() *= kept_dims[s];
    }
    merged_index[s] = static_cast<Index>(merged_dims.size()) - 1;
  }
  std::vector<Index> merged_perm;
  for (std::size_t i = 0; i < p.size(); ++i) {
    if (head[static_cast<std::size_t>(p[i])]) merged_perm.push_back(merged_index[static_cast<std::size_t>(p[i])]);
  }
  dims = std::move(merged_dims);
  perm = std::move(merged_perm);
}

/// dst = src.shuffle(perm) (row-major; dst's dimension i is src's dimension perm[i]).
template <class T>
void shuffle(const T* src, std::vector<Index> dims, std::vector<Index> perm, T* dst) {
  const Index n = product(dims);
  if (n == 0) return;
  simplify(dims, perm);
  bool identity = true;
  for (std::size_t i = 0; i < perm.size(); ++i) identity = identity && perm[i] == static_cast<Index>(i);
  if (identity) {
    std::copy(src, src + n, dst);
    return;
  }
  // Rank 1 is always the identity, handled above.
  with_rank(dims.size(), [&](auto rank) { shuffle_rank<T, decltype(rank)::value>(src, dims, perm, dst); });
}

template <class T, int R>
void broadcast_rank(const T* src, const std::vector<Index>& dims, const std::vector<Index>& factors, T* dst) {
  std::vector<Index> out(dims.size());
  for (std::size_t i = 0; i < dims.size(); ++i) out[i] = dims[i] * factors[i];
  ConstMap<T, R> in(src, to_array<R>(dims));
  Map<T, R> o(dst, to_array<R>(out));
  o = in.broadcast(to_array<R>(factors));
}

template <class T>
void broadcast(const T* src, const std::vector<Index>& dims, const std::vector<Index>& factors, T* dst) {
  with_rank(dims.size(), [&](auto rank) { broadcast_rank<T, decltype(rank)::value>(src, dims, factors, dst); });
}

// ---------------------------------------------------------------------------------------------
// einsum

/// An operand or intermediate of the chain: dense, row-major over its (distinct) global axes.
template <class T>
struct Partial {
  std::vector<int> axes;    ///< global axis indices, one per dimension
  std::vector<Index> dims;  ///< their lengths
  std::vector<T> values;    ///< row-major
};

template <class T>
std::vector<Index> permutation_to(const Partial<T>& p, const std::vector<int>& order) {
  std::vector<Index> perm;
  for (int a : order) {
    perm.push_back(static_cast<Index>(std::find(p.axes.begin(), p.axes.end(), a) - p.axes.begin()));
  }
  return perm;
}

bool is_identity(const std::vector<Index>& perm) {
  for (std::size_t i = 0; i < perm.size(); ++i) {
    if (perm[i] != static_cast<Index>(i)) return false;
  }
  return true;
}

/// `p` with its dimensions in `order` (a permutation of p.axes), through `shuffle`.
template <class T>
Partial<T> relayout(Partial<T> p, const std::vector<int>& order) {
  const std::vector<Index> perm = permutation_to(p, order);
  if (is_identity(perm)) return p;
  Partial<T> r;
  r.axes = order;
  for (Index s : perm) r.dims.push_back(p.dims[static_cast<std::size_t>(s)]);
  r.values.resize(p.values.size());
  shuffle(p.values.data(), p.dims, perm, r.values.data());
  return r;
}

template <class T>
Index length_of(const Partial<T>& p, const std::vector<int>& axes) {
  Index n = 1;
  for (int a : axes) {
    n *= p.dims[static_cast<std::size_t>(std::find(p.axes.begin(), p.axes.end(), a) - p.axes.begin())];
  }
  return n;
}

std::vector<int> concat(std::initializer_list<const std::vector<int>*> parts) {
  std::vector<int> out;
  for (const auto* v : parts) out.insert(out.end(), v->begin(), v->end());
  return out;
}

/// The first layout among `candidates` that needs no shuffle, else the first.
template <class T>
std::size_t pick_layout(const Partial<T>& p, const std::vector<std::vector<int>>& candidates) {
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    if (is_identity(permutation_to(p, candidates[i]))) return i;
  }
  return 0;
}

/// Sums `summed` (axes private to this partial) out with Eigen's `sum` on a rank-2 view.
template <class T>
Partial<T> sum_out(Partial<T> p, const std::vector<int>& summed) {
  std::vector<int> keep;
  for (int a : p.axes) {
    if (std::find(summed.begin(), summed.end(), a) == summed.end()) keep.push_back(a);
  }
  const Index nk = length_of(p, keep);
  const Index ns = length_of(p, summed);
  // [keep, summed] reduces the inner dimension, [summed, keep] the outer one: both are Eigen paths.
  const std::size_t layout = pick_layout(p, {concat({&keep, &summed}), concat({&summed, &keep})});
  p = relayout(std::move(p), layout == 0 ? concat({&keep, &summed}) : concat({&summed, &keep}));
  Partial<T> r;
  r.axes = keep;
  for (int a : keep) r.dims.push_back(length_of(p, {a}));
  r.values.resize(static_cast<std::size_t>(nk));
  using A = Arith<T>;
  const ConstMap<A, 2> in(arith(p.values.data()), layout == 0 ? nk : ns, layout == 0 ? ns : nk);
  Map<A, 1> out(arith(r.values.data()), nk);
  const Eigen::array<Index, 1> dim{layout == 0 ? 1 : 0};
  out = in.sum(dim);
  return r;
}

/// One link of the chain: contracts the labels `a` and `b` share that nothing later needs; shared
/// labels still needed (batch) loop over rank-2 slices. Result axes: [batch, free a, free b].
template <class T>
Partial<T> contract_pair(Partial<T> a, Partial<T> b, const std::vector<bool>& needed_later) {
  const EigenPairSplit split = eigen_pair_split(a.axes, b.axes, needed_later);
  const std::vector<int>& batch = split.batch;
  const std::vector<int>& contracted = split.contracted;
  const std::vector<int>& free_a = split.free_a;
  const std::vector<int>& free_b = split.free_b;
  const Index nb = length_of(a, batch), m = length_of(a, free_a), k = length_of(a, contracted),
              n = length_of(b, free_b);
  // Index pair (1, 0) is a plain matrix product; the other three orientations avoid a shuffle when
  // an operand already has its contracted labels first (a) or last (b).
  const std::size_t la = pick_layout(a, {concat({&batch, &free_a, &contracted}), concat({&batch, &contracted, &free_a})});
  const std::size_t lb = pick_layout(b, {concat({&batch, &contracted, &free_b}), concat({&batch, &free_b, &contracted})});
  a = relayout(std::move(a), la == 0 ? concat({&batch, &free_a, &contracted}) : concat({&batch, &contracted, &free_a}));
  b = relayout(std::move(b), lb == 0 ? concat({&batch, &contracted, &free_b}) : concat({&batch, &free_b, &contracted}));

  Partial<T> r;
  r.axes = concat({&batch, &free_a, &free_b});
  for (int x : batch) r.dims.push_back(length_of(a, {x}));
  for (int x : free_a) r.dims.push_back(length_of(a, {x}));
  for (int x : free_b) r.dims.push_back(length_of(b, {x}));
  r.values.resize(static_cast<std::size_t>(nb * m * n));
  if (r.values.empty()) return r;
  using A = Arith<T>;
  const Eigen::array<Eigen::IndexPair<Index>, 1> pairs = {
      Eigen::IndexPair<Index>(la == 0 ? 1 : 0, lb == 0 ? 0 : 1)};
  for (Index q = 0; q < nb; ++q) {
    const ConstMap<A, 2> ma(arith(a.values.data()) + q * m * k, la == 0 ? m : k, la == 0 ? k : m);
    const ConstMap<A, 2> mb(arith(b.values.data()) + q * k * n, lb == 0 ? k : n, lb == 0 ? n : k);
    Map<A, 2> mc(arith(r.values.data()) + q * m * n, m, n);
    mc = ma.contract(mb, pairs);
  }
  return r;
}

/// Operand m with every size-1 dimension broadcast to its label's length (Eigen `broadcast`), as
/// Eigen scalars E.
template <class T, class E = EigenScalar<T>>
Partial<E> operand(const CheckedEinsum& e, std::size_t m, const Tensor& input) {
  const CheckedOperand& op = e.operands[m];
  Partial<E> p;
  p.axes = op.axes;
  std::vector<Index> physical, factors;
  bool broadcast_needed = false;
  for (std::size_t d = 0; d < op.shape.size(); ++d) {
    const Index length = e.axes[static_cast<std::size_t>(op.axes[d])].length;
    physical.push_back(op.shape[d]);
    p.dims.push_back(length);
    factors.push_back(op.shape[d] == length ? 1 : length);
    broadcast_needed = broadcast_needed || op.shape[d] != length;
  }
  const auto values = input.values<T>();
  std::vector<E> converted;
  if constexpr (!std::is_same_v<E, T>) {
    converted.reserve(values.size());
    for (const T v : values) converted.push_back(to_eigen(v));
  }
  const E* data = nullptr;
  if constexpr (std::is_same_v<E, T>) {
    data = values.data();
  } else {
    data = converted.data();
  }
  if (!broadcast_needed) {
    p.values.assign(data, data + values.size());
    return p;
  }
  p.values.resize(static_cast<std::size_t>(product(p.dims)));
  broadcast(data, physical, factors, p.values.data());
  return p;
}

template <class T>
BackendResult run_einsum(const CheckedEinsum& e, const std::vector<Tensor>& inputs) {
  for (std::size_t m = 0; m < e.operands.size(); ++m) {
    const std::vector<int>& axes = e.operands[m].axes;
    for (std::size_t d = 0; d < axes.size(); ++d) {
      if (std::find(axes.begin() + static_cast<std::ptrdiff_t>(d) + 1, axes.end(), axes[d]) != axes.end()) {
        return Unsupported{"eigen: operand " + std::to_string(m) + " repeats a label (diagonal)"};
      }
    }
    if (axes.size() > static_cast<std::size_t>(kMaxRank)) {
      return Unsupported{"eigen: operand " + std::to_string(m) + " has rank " + std::to_string(axes.size()) +
                         " > " + std::to_string(kMaxRank)};
    }
  }
  Tensor out(dtype_of_v<T>, e.output_shape);  // +0 / 0 everywhere
  // Nothing to compute, or no term at all (+0 on every path; see the header).
  if (e.output_size == 0 || e.contraction_size == 0) return out;
  using E = EigenScalar<T>;
  std::vector<Partial<E>> parts;
  for (std::size_t m = 0; m < e.operands.size(); ++m) parts.push_back(operand<T>(e, m, inputs[m]));

  // Labels private to one operand (contracted, used nowhere else) are summed inside it first.
  for (auto& p : parts) {
    std::vector<int> own;
    for (int a : p.axes) {
      if (e.roles[static_cast<std::size_t>(a)] == AxisRole::private_contracted) own.push_back(a);
    }
    if (!own.empty()) p = sum_out(std::move(p), own);
  }
  std::vector<bool> in_output(e.axes.size(), false);
  for (int a : e.output) in_output[static_cast<std::size_t>(a)] = true;

  Partial<E> acc = std::move(parts[0]);
  for (std::size_t m = 1; m < parts.size(); ++m) {
    std::vector<bool> needed = in_output;
    for (std::size_t q = m + 1; q < parts.size(); ++q) {
      for (int a : parts[q].axes) needed[static_cast<std::size_t>(a)] = true;
    }
    acc = contract_pair(std::move(acc), std::move(parts[m]), needed);
  }
  acc = relayout(std::move(acc), e.output);
  std::transform(acc.values.begin(), acc.values.end(), out.values<T>().begin(), from_eigen<T>);
  return out;
}

// ---------------------------------------------------------------------------------------------
// reduce

template <class T>
BackendResult run_reduce(const CheckedReduce& r, const Tensor& input) {
  std::vector<Index> dims;
  for (const ElementaryAxis& a : r.axes) dims.push_back(a.length);
  std::vector<int> kept;  // elementary axes in output order
  for (const auto& group : r.output_groups) kept.insert(kept.end(), group.begin(), group.end());
  const std::vector<int>& reduced = r.reduced;
  const Index nk = r.output_size;
  const Index nr = r.fibre_size;

  using E = EigenScalar<T>;
  Partial<E> p;
  for (std::size_t i = 0; i < dims.size(); ++i) p.axes.push_back(static_cast<int>(i));
  p.dims = dims;
  const auto values = input.values<T>();
  p.values.reserve(values.size());
  for (const T v : values) p.values.push_back(to_eigen(v));
  const std::size_t layout = pick_layout(p, {concat({&kept, &reduced}), concat({&reduced, &kept})});
  p = relayout(std::move(p), layout == 0 ? concat({&kept, &reduced}) : concat({&reduced, &kept}));

  Tensor out(r.kind == Reduction::any || r.kind == Reduction::all ? DType::boolean : dtype_of_v<T>, r.output_shape);
  const Eigen::array<Index, 1> dim{layout == 0 ? 1 : 0};
  const Index rows = layout == 0 ? nk : nr;
  const Index cols = layout == 0 ? nr : nk;
  if constexpr (std::is_same_v<T, Bool8>) {
    const ConstMap<Bool8, 2> in(p.values.data(), rows, cols);
    Eigen::Tensor<bool, 1, Eigen::RowMajor> result;
    if (r.kind == Reduction::any) {
      result = in.any(dim);
    } else {
      result = in.all(dim);
    }
    auto o = out.values<Bool8>();
    for (Index i = 0; i < nk; ++i) o[static_cast<std::size_t>(i)] = result(i) ? 1 : 0;
  } else {
    using A = Arith<E>;
    // The result in Eigen's scalar, then converted into the output (the identity but for halves).
    std::vector<E> result(static_cast<std::size_t>(nk));
    const ConstMap<A, 2> in(arith(p.values.data()), rows, cols);
    Map<A, 1> o(arith(result.data()), nk);
    const ConstMap<E, 2> signed_in(p.values.data(), rows, cols);
    Map<E, 1> signed_o(result.data(), nk);
    if (!numeric_reduction<T>(r.kind)) return unsupported_reduction("eigen", r.kind, dtype_of_v<T>);
    switch (r.kind) {
      case Reduction::sum: o = in.sum(dim); break;
      case Reduction::prod: o = in.prod(dim); break;
      case Reduction::min:
        signed_o = signed_in.template minimum<Eigen::array<Index, 1>, Eigen::PropagateNaN>(dim);
        break;
      case Reduction::max:
        signed_o = signed_in.template maximum<Eigen::array<Index, 1>, Eigen::PropagateNaN>(dim);
        break;
      case Reduction::mean:
        if constexpr (is_float_type_v<T>) o = in.mean(dim);
        break;
      default: break;  // any/all: not reached (numeric_reduction)
    }
    std::transform(result.begin(), result.end(), out.values<T>().begin(), from_eigen<T>);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------

std::string eigen_version() {
  return "Eigen " + std::to_string(EIGEN_WORLD_VERSION) + "." + std::to_string(EIGEN_MAJOR_VERSION) + "." +
         std::to_string(EIGEN_MINOR_VERSION) + " Tensor module";
}

class EigenBackend final : public Backend {
 public:
  explicit EigenBackend(const Limits& limits)
      : limits_(limits), caps_(full_capabilities(Semantics::any_order, NanProfile::propagate, true, eigen_version())) {
    // Eigen::half and Eigen::bfloat16, accumulated in themselves (the default profile): sums and
    // contractions of ones stop at 2048 and 256 (declared_profiles_test.cpp).
    caps_.dtypes.push_back(DType::f16);
    caps_.dtypes.push_back(DType::bf16);
  }
  std::string_view name() const override { return "eigen"; }
  const Capabilities& capabilities() const override { return caps_; }

  BackendResult run(const Case& c) override {
    try {
      return run_checked</*kHalfTypes=*/true>(
          c, limits_,
          [](auto tag, const CheckedEinsum& e, const Case& x) { return run_einsum<decltype(tag)>(e, x.inputs); },
          [](auto tag, const CheckedReduce& r, const Case& x) { return run_reduce<decltype(tag)>(r, x.inputs[0]); });
    } catch (const RankTooHigh& t) {
      return Unsupported{"eigen: a relayout of rank " + std::to_string(t.rank) + " > " + std::to_string(kMaxRank)};
    }
  }

 private:
  Limits limits_;
  Capabilities caps_;
};

}  // namespace

EigenPairSplit eigen_pair_split(const std::vector<int>& a, const std::vector<int>& b,
                                const std::vector<bool>& needed_later) {
  EigenPairSplit s;
  for (int x : a) {
    if (std::find(b.begin(), b.end(), x) == b.end()) {
      s.free_a.push_back(x);
    } else if (needed_later[static_cast<std::size_t>(x)]) {
      s.batch.push_back(x);
    } else {
      s.contracted.push_back(x);
    }
  }
  for (int x : b) {
    if (std::find(a.begin(), a.end(), x) == a.end()) s.free_b.push_back(x);
  }
  return s;
}

std::unique_ptr<Backend> make_eigen_backend(const Limits& limits) { return std::make_unique<EigenBackend>(limits); }

namespace detail {

Tensor eigen_contract_unchecked(const Tensor& a, const Tensor& b) {
  const Index m = a.shape().at(0), k = a.shape().at(1), k2 = b.shape().at(0), n = b.shape().at(1);
  Tensor out(DType::f64, Shape{m, n});
  const ConstMap<double, 2> ma(a.values<double>().data(), m, k);
  const ConstMap<double, 2> mb(b.values<double>().data(), k2, n);
  Map<double, 2> mc(out.values<double>().data(), m, n);
  const Eigen::array<Eigen::IndexPair<Index>, 1> pairs = {Eigen::IndexPair<Index>(1, 0)};
  mc = ma.contract(mb, pairs);
  return out;
}

}  // namespace detail
}  // namespace einfuzz
