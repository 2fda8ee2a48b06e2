// The Eigen expressions of the C++ reproducer (repro_cxx.cpp): eigen.cpp's einsum chain and its
// reductions, replayed at generation time on the case's axes.
#include <algorithm>
#include <numeric>
#include <string>
#include <vector>

#include "einfuzz/backends/eigen.hpp"
#include "repro_detail.hpp"

namespace einfuzz::detail {
namespace {

/// The einsum chain of eigen.cpp, replayed at generation time on the axes only: each step emits the
/// Eigen expression the adapter evaluates (broadcast, shuffle, sum, contract), on named buffers.
class EigenChain {
 public:
  struct Part {
    std::string var;          ///< the buffer holding it, row-major
    std::vector<int> axes;    ///< global axes, one per dimension
    std::vector<long> dims;   ///< their lengths
  };

  std::string code;

  Part fresh(std::vector<int> axes, std::vector<long> dims) { return {"p" + std::to_string(next_++), std::move(axes), std::move(dims)}; }

  static long count(const std::vector<long>& dims) { return element_count(dims); }

  static long length_of(const Part& p, const std::vector<int>& axes) {
    long n = 1;
    for (int a : axes) n *= p.dims[index_of(p, a)];
    return n;
  }

  static std::size_t index_of(const Part& p, int axis) {
    return static_cast<std::size_t>(std::find(p.axes.begin(), p.axes.end(), axis) - p.axes.begin());
  }

  static std::vector<long> permutation_to(const Part& p, const std::vector<int>& order) {
    std::vector<long> perm;
    for (int a : order) perm.push_back(static_cast<long>(index_of(p, a)));
    return perm;
  }

  static bool identity(const std::vector<long>& perm) {
    for (std::size_t i = 0; i < perm.size(); ++i) {
      if (perm[i] != static_cast<long>(i)) return false;
    }
    return true;
  }

  static std::size_t pick_layout(const Part& p, const std::vector<std::vector<int>>& candidates) {
    for (std::size_t i = 0; i < candidates.size(); ++i) {
      if (identity(permutation_to(p, candidates[i]))) return i;
    }
    return 0;
  }

  static std::vector<int> concat(std::initializer_list<const std::vector<int>*> parts) {
    std::vector<int> out;
    for (const auto* v : parts) out.insert(out.end(), v->begin(), v->end());
    return out;
  }

  static std::string dims_args(const std::vector<long>& dims) {
    std::string s;
    for (long d : dims) s += ", " + std::to_string(d);
    return s;
  }

  /// relayout: a shuffle into a new buffer unless the order is already the layout.
  Result<Part> relayout(Part p, const std::vector<int>& order) {
    const std::vector<long> perm = permutation_to(p, order);
    if (identity(perm)) return p;
    Part r = fresh(order, {});
    for (long s : perm) r.dims.push_back(p.dims[static_cast<std::size_t>(s)]);
    code += "  std::vector<A> " + r.var + "(" + p.var + ".size());\n";
    if (count(p.dims) != 0) {
      if (p.dims.size() > 6) return not_reproducible("the eigen adapter's relayout here exceeds what repro writes (rank > 6)");
      const std::string R = std::to_string(p.dims.size());
      code += "  {  // shuffle (the adapter merges adjacent axes first: the same elements move)\n";
      code += "    Eigen::TensorMap<Eigen::Tensor<const A, " + R + ", Eigen::RowMajor>> src(" + p.var + ".data()" +
              dims_args(p.dims) + ");\n";
      code += "    Eigen::TensorMap<Eigen::Tensor<A, " + R + ", Eigen::RowMajor>> dst(" + r.var + ".data()" +
              dims_args(r.dims) + ");\n";
      code += "    dst = src.shuffle(Eigen::array<Index, " + R + ">" + c_list(perm) + ");\n  }\n";
    }
    return r;
  }

  /// sum_out: labels private to this part summed with Eigen's sum on a rank-2 view.
  Result<Part> sum_out(Part p, const std::vector<int>& summed) {
    std::vector<int> keep;
    for (int a : p.axes) {
      if (std::find(summed.begin(), summed.end(), a) == summed.end()) keep.push_back(a);
    }
    const long nk = length_of(p, keep), ns = length_of(p, summed);
    const std::size_t layout = pick_layout(p, {concat({&keep, &summed}), concat({&summed, &keep})});
    auto moved = relayout(std::move(p), layout == 0 ? concat({&keep, &summed}) : concat({&summed, &keep}));
    if (!moved) return moved;
    Part r = fresh(keep, {});
    for (int a : keep) r.dims.push_back(length_of(*moved, {a}));
    code += "  std::vector<A> " + r.var + "(" + std::to_string(nk) + ");  // sum over the labels private to it\n";
    code += "  {\n    const Eigen::TensorMap<Eigen::Tensor<const A, 2, Eigen::RowMajor>> in(" + moved->var + ".data(), " +
            std::to_string(layout == 0 ? nk : ns) + ", " + std::to_string(layout == 0 ? ns : nk) + ");\n";
    code += "    Eigen::TensorMap<Eigen::Tensor<A, 1, Eigen::RowMajor>> out(" + r.var + ".data(), " + std::to_string(nk) + ");\n";
    code += "    out = in.sum(Eigen::array<Index, 1>{" + std::to_string(layout == 0 ? 1 : 0) + "});\n  }\n";
    return r;
  }

  /// contract_pair: contracts what a and b share and nothing later needs; batch labels loop.
  Result<Part> contract_pair(Part a, Part b, const std::vector<bool>& needed_later) {
    const EigenPairSplit split = eigen_pair_split(a.axes, b.axes, needed_later);
    const std::vector<int>& batch = split.batch;
    const std::vector<int>& contracted = split.contracted;
    const std::vector<int>& free_a = split.free_a;
    const std::vector<int>& free_b = split.free_b;
    const long nb = length_of(a, batch), m = length_of(a, free_a), k = length_of(a, contracted), n = length_of(b, free_b);
    const std::size_t la = pick_layout(a, {concat({&batch, &free_a, &contracted}), concat({&batch, &contracted, &free_a})});
    const std::size_t lb = pick_layout(b, {concat({&batch, &contracted, &free_b}), concat({&batch, &free_b, &contracted})});
    auto ra = relayout(std::move(a), la == 0 ? concat({&batch, &free_a, &contracted}) : concat({&batch, &contracted, &free_a}));
    if (!ra) return ra;
    auto rb = relayout(std::move(b), lb == 0 ? concat({&batch, &contracted, &free_b}) : concat({&batch, &free_b, &contracted}));
    if (!rb) return rb;
    Part r = fresh(concat({&batch, &free_a, &free_b}), {});
    for (int x : batch) r.dims.push_back(length_of(*ra, {x}));
    for (int x : free_a) r.dims.push_back(length_of(*ra, {x}));
    for (int x : free_b) r.dims.push_back(length_of(*rb, {x}));
    code += "  std::vector<A> " + r.var + "(" + std::to_string(nb * m * n) + ");  // contract " + ra->var + " with " +
            rb->var + "\n";
    if (nb * m * n == 0) return r;
    const std::string M = std::to_string(m), K = std::to_string(k), N = std::to_string(n);
    code += "  {\n    const Eigen::array<Eigen::IndexPair<Index>, 1> pairs = {Eigen::IndexPair<Index>(" +
            std::to_string(la == 0 ? 1 : 0) + ", " + std::to_string(lb == 0 ? 0 : 1) + ")};\n";
    code += "    for (Index q = 0; q < " + std::to_string(nb) + "; ++q) {\n";
    code += "      const Eigen::TensorMap<Eigen::Tensor<const A, 2, Eigen::RowMajor>> ma(" + ra->var + ".data() + q * " + M +
            " * " + K + ", " + (la == 0 ? M + ", " + K : K + ", " + M) + ");\n";
    code += "      const Eigen::TensorMap<Eigen::Tensor<const A, 2, Eigen::RowMajor>> mb(" + rb->var + ".data() + q * " + K +
            " * " + N + ", " + (lb == 0 ? K + ", " + N : N + ", " + K) + ");\n";
    code += "      Eigen::TensorMap<Eigen::Tensor<A, 2, Eigen::RowMajor>> mc(" + r.var + ".data() + q * " + M + " * " + N +
            ", " + M + ", " + N + ");\n";
    code += "      mc = ma.contract(mb, pairs);\n    }\n  }\n";
    return r;
  }

 private:
  int next_ = 0;
};

}  // namespace

Result<std::string> eigen_einsum(const CheckedEinsum& e) {
  for (std::size_t m = 0; m < e.operands.size(); ++m) {
    const std::vector<int>& axes = e.operands[m].axes;
    for (std::size_t d = 0; d < axes.size(); ++d) {
      if (std::find(axes.begin() + static_cast<std::ptrdiff_t>(d) + 1, axes.end(), axes[d]) != axes.end()) {
        return not_reproducible("the eigen adapter reports a repeated label (diagonal) as unsupported: no Eigen call");
      }
    }
    if (axes.size() > 6) return not_reproducible("the eigen adapter reports an operand of rank > 6 as unsupported");
  }
  if (e.output_size == 0 || e.contraction_size == 0) {
    return not_reproducible("the eigen adapter answers an empty output or an empty contraction itself (+0), "
                            "without calling Eigen: nothing of Eigen to reproduce");
  }
  EigenChain chain;
  chain.code += "  using Index = Eigen::Index;\n";
  std::vector<EigenChain::Part> parts;
  for (std::size_t m = 0; m < e.operands.size(); ++m) {
    const CheckedOperand& op = e.operands[m];
    const std::string in = "reinterpret_cast<const A*>(in" + std::to_string(m) + ".data())";
    std::vector<long> physical, dims, factors;
    bool broadcast = false;
    for (std::size_t d = 0; d < op.shape.size(); ++d) {
      const long length = static_cast<long>(e.axes[static_cast<std::size_t>(op.axes[d])].length);
      physical.push_back(static_cast<long>(op.shape[d]));
      dims.push_back(length);
      factors.push_back(op.shape[d] == length ? 1 : length);
      broadcast = broadcast || op.shape[d] != length;
    }
    EigenChain::Part p = chain.fresh(op.axes, dims);
    if (!broadcast) {
      chain.code += "  std::vector<A> " + p.var + "(" + in + ", " + in + " + in" + std::to_string(m) + ".size());  // operand " +
                    std::to_string(m) + "\n";
    } else {
      const std::string R = std::to_string(dims.size());
      chain.code += "  std::vector<A> " + p.var + "(" + std::to_string(EigenChain::count(dims)) + ");  // operand " +
                    std::to_string(m) + ", its size-1 dimensions broadcast\n";
      chain.code += "  {\n    Eigen::TensorMap<Eigen::Tensor<const A, " + R + ", Eigen::RowMajor>> src(" + in +
                    EigenChain::dims_args(physical) + ");\n";
      chain.code += "    Eigen::TensorMap<Eigen::Tensor<A, " + R + ", Eigen::RowMajor>> dst(" + p.var + ".data()" +
                    EigenChain::dims_args(dims) + ");\n";
      chain.code += "    dst = src.broadcast(Eigen::array<Index, " + R + ">" + c_list(factors) + ");\n  }\n";
    }
    parts.push_back(std::move(p));
  }
  std::vector<bool> in_output(e.axes.size(), false);
  for (int a : e.output) in_output[static_cast<std::size_t>(a)] = true;
  for (auto& p : parts) {
    std::vector<int> own;  // summed inside this operand first, as the adapter does (CheckedEinsum::roles)
    for (int a : p.axes) {
      if (e.roles[static_cast<std::size_t>(a)] == AxisRole::private_contracted) own.push_back(a);
    }
    if (own.empty()) continue;
    auto summed = chain.sum_out(std::move(p), own);
    if (!summed) return std::move(summed).error();
    p = std::move(*summed);
  }
  EigenChain::Part acc = std::move(parts[0]);
  for (std::size_t m = 1; m < parts.size(); ++m) {
    std::vector<bool> needed = in_output;
    for (std::size_t q = m + 1; q < parts.size(); ++q) {
      for (int a : parts[q].axes) needed[static_cast<std::size_t>(a)] = true;
    }
    auto next = chain.contract_pair(std::move(acc), std::move(parts[m]), needed);
    if (!next) return std::move(next).error();
    acc = std::move(*next);
  }
  auto last = chain.relayout(std::move(acc), e.output);
  if (!last) return std::move(last).error();
  chain.code += "  std::copy(" + last->var + ".begin(), " + last->var + ".end(), reinterpret_cast<A*>(out.data()));\n";
  return chain.code;
}

Result<std::string> eigen_reduce(const CheckedReduce& r) {
  const std::size_t rank = r.axes.size();
  std::vector<long> dims;
  for (const ElementaryAxis& a : r.axes) dims.push_back(static_cast<long>(a.length));
  std::vector<int> kept;
  for (const auto& group : r.output_groups) kept.insert(kept.end(), group.begin(), group.end());
  std::vector<int> first = kept, second = r.reduced;
  first.insert(first.end(), r.reduced.begin(), r.reduced.end());
  second.insert(second.end(), kept.begin(), kept.end());
  const auto identity = [](const std::vector<int>& v) {
    for (std::size_t i = 0; i < v.size(); ++i) {
      if (v[i] != static_cast<int>(i)) return false;
    }
    return true;
  };
  // [kept, reduced] reduces the inner dimension, [reduced, kept] the outer one (eigen.cpp pick_layout).
  const int layout = identity(first) || !identity(second) ? 0 : 1;
  const std::vector<int>& perm = layout == 0 ? first : second;
  std::string s;
  s += "  using Index = Eigen::Index;\n";
  const long nk = static_cast<long>(r.output_size), nr = static_cast<long>(r.fibre_size);
  std::string data = "in0.data()";
  const bool empty = std::find(dims.begin(), dims.end(), 0L) != dims.end();
  if (!identity(perm) && !empty) {
    if (rank > 6) return not_reproducible("the eigen adapter's relayout here exceeds rank 6 (unsupported)");
    std::vector<long> out_dims;
    for (int p : perm) out_dims.push_back(dims[static_cast<std::size_t>(p)]);
    const std::string R = std::to_string(rank);
    s += "  // The adapter's relayout (Eigen shuffle; it merges adjacent axes first, moving the same elements).\n";
    s += "  std::vector<T> relaid(in0.size());\n";
    s += "  {\n    Eigen::TensorMap<Eigen::Tensor<const T, " + R + ", Eigen::RowMajor>> src(in0.data()";
    for (long d : dims) s += ", " + std::to_string(d);
    s += ");\n    Eigen::TensorMap<Eigen::Tensor<T, " + R + ", Eigen::RowMajor>> dst(relaid.data()";
    for (long d : out_dims) s += ", " + std::to_string(d);
    s += ");\n    dst = src.shuffle(Eigen::array<Index, " + R + ">" + c_list(perm) + ");\n  }\n";
    data = "relaid.data()";
  }
  const long rows = layout == 0 ? nk : nr, cols = layout == 0 ? nr : nk;
  s += "  const Eigen::array<Index, 1> dim{" + std::to_string(layout == 0 ? 1 : 0) + "};\n";
  const std::string map2 = "Eigen::TensorMap<Eigen::Tensor<const ";
  if (r.kind == Reduction::any || r.kind == Reduction::all) {
    s += "  const " + map2 + "std::uint8_t, 2, Eigen::RowMajor>> in(" + data + ", " + std::to_string(rows) + ", " +
         std::to_string(cols) + ");\n";
    s += "  Eigen::Tensor<bool, 1, Eigen::RowMajor> result = in." + std::string(reduction_name(r.kind)) + "(dim);\n";
    s += "  for (Index i = 0; i < " + std::to_string(nk) + "; ++i) out[static_cast<std::size_t>(i)] = result(i) ? 1 : 0;\n";
    return s;
  }
  s += "  const " + map2 + "A, 2, Eigen::RowMajor>> in(reinterpret_cast<const A*>(" + data + "), " +
       std::to_string(rows) + ", " + std::to_string(cols) + ");\n";
  s += "  Eigen::TensorMap<Eigen::Tensor<A, 1, Eigen::RowMajor>> o(reinterpret_cast<A*>(out.data()), " +
       std::to_string(nk) + ");\n";
  s += "  const " + map2 + "T, 2, Eigen::RowMajor>> signed_in(" + data + ", " + std::to_string(rows) + ", " +
       std::to_string(cols) + ");\n";
  s += "  Eigen::TensorMap<Eigen::Tensor<T, 1, Eigen::RowMajor>> signed_o(out.data(), " + std::to_string(nk) + ");\n";
  switch (r.kind) {
    case Reduction::sum: s += "  o = in.sum(dim);\n"; break;
    case Reduction::prod: s += "  o = in.prod(dim);\n"; break;
    case Reduction::mean: s += "  o = in.mean(dim);\n"; break;
    case Reduction::min: s += "  signed_o = signed_in.minimum<Eigen::array<Index, 1>, Eigen::PropagateNaN>(dim);\n"; break;
    case Reduction::max: s += "  signed_o = signed_in.maximum<Eigen::array<Index, 1>, Eigen::PropagateNaN>(dim);\n"; break;
    default: break;
  }
  return s;
}

}  // namespace einfuzz::detail
