// Compiles a checked reduce into its stride plan (fused/reduce.hpp): strides per elementary axis,
// then the output and fibre loop nests, simplified.
#include <cstdint>
#include <vector>

#include "einfuzz/fused/reduce.hpp"

namespace einfuzz::fused {
namespace {

/// Drops length-1 loops and merges a loop into its inner neighbour when together they walk one
/// arithmetic progression: the sequence of offsets, hence every fold, is unchanged.
std::vector<ReduceLoop> simplify(const std::vector<ReduceLoop>& loops) {
  std::vector<ReduceLoop> out;
  for (const ReduceLoop& l : loops) {
    if (l.length == 1) continue;
    if (!out.empty() && out.back().stride == l.stride * l.length) {
      out.back() = {out.back().length * l.length, l.stride};
    } else {
      out.push_back(l);
    }
  }
  return out;
}

/// Largest offset the loop nests of `plan` reach from offset 0.
std::int64_t max_offset(const ReducePlan& plan) {
  std::int64_t sum = 0;
  for (const auto* loops : {&plan.output_loops, &plan.fibre_loops}) {
    for (const ReduceLoop& l : *loops) sum += (l.length - 1) * l.stride;
  }
  return sum;
}

}  // namespace

ReducePlan compile(const CheckedReduce& r) {
  ReducePlan plan;
  plan.kind = r.kind;
  plan.dtype = r.dtype;
  plan.input_shape = r.input_shape;
  plan.output_shape = r.output_shape;
  plan.output_size = r.output_size;
  plan.fibre_size = r.fibre_size;
  // Nothing is read: with a zero-length axis the other lengths' products may overflow, so no
  // strides are computed. With every axis nonempty each stride is bounded by the input's size.
  if (r.output_size == 0 || r.fibre_size == 0) return plan;

  // A composite group (x y z) is row-major: z has the dimension's stride, y that times |z|, ….
  std::vector<std::int64_t> stride(r.axes.size(), 0);
  std::int64_t dim_stride = 1;
  for (std::size_t d = r.input_groups.size(); d-- > 0;) {
    std::int64_t s = dim_stride;
    const std::vector<int>& group = r.input_groups[d];
    for (std::size_t k = group.size(); k-- > 0;) {
      const auto a = static_cast<std::size_t>(group[k]);
      stride[a] = s;
      s *= r.axes[a].length;
    }
    dim_stride *= r.input_shape[d];
  }
  const auto loop = [&](int a) {
    const auto i = static_cast<std::size_t>(a);
    return ReduceLoop{r.axes[i].length, stride[i]};
  };
  std::vector<ReduceLoop> out;
  for (const auto& group : r.output_groups) {
    for (int a : group) out.push_back(loop(a));
  }
  std::vector<ReduceLoop> fibre;
  for (int a : r.reduced) fibre.push_back(loop(a));
  plan.output_loops = simplify(out);
  plan.fibre_loops = simplify(fibre);
  plan.max_offset = max_offset(plan);
  return plan;
}

}  // namespace einfuzz::fused
