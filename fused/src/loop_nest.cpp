// Builds the LoopNest of a plan: drop length-1 axes, merge contiguous neighbours (index arithmetic only).
#include "loop_nest.hpp"

namespace einfuzz::fused::detail {
namespace {

// Appends an axis to loops [0, count), or folds it into the previous loop when stepping the previous
// loop once equals stepping this axis `len` times for the output and every operand: then the pair is
// one row-major loop.
template <std::size_t A, std::size_t B>
void push_axis(std::size_t& count, SmallArray<std::int64_t, A>& lens, SmallArray<std::int64_t, A>* ysteps,
               SmallArray<std::int64_t, B>& steps, std::size_t n, std::int64_t len, std::int64_t ystep,
               const std::int64_t* step) {
  if (len == 1) return;
  if (count > 0) {
    const std::size_t prev = count - 1;
    bool contiguous = ysteps == nullptr || (*ysteps)[prev] == len * ystep;
    for (std::size_t k = 0; contiguous && k < n; ++k) contiguous = steps[prev * n + k] == len * step[k];
    if (contiguous) {
      lens[prev] *= len;
      if (ysteps != nullptr) (*ysteps)[prev] = ystep;
      for (std::size_t k = 0; k < n; ++k) steps[prev * n + k] = step[k];
      return;
    }
  }
  lens[count] = len;
  if (ysteps != nullptr) (*ysteps)[count] = ystep;
  for (std::size_t k = 0; k < n; ++k) steps[count * n + k] = step[k];
  ++count;
}

// Fills nest.con_table with every operand's offset at each of the `count` contraction positions,
// walking the contraction loops as an odometer (the last loop fastest).
void build_con_table(LoopNest& nest, std::int64_t count) {
  const auto n = static_cast<std::size_t>(nest.operands);
  const std::size_t q = nest.con_loops;
  nest.con_table.assign(static_cast<std::size_t>(count) * n, 0);
  SmallArray<std::int64_t, 8> index(q);
  SmallArray<std::int64_t, 16> off(n);
  for (std::int64_t c = 0; c < count; ++c) {
    for (std::size_t k = 0; k < n; ++k) nest.con_table[static_cast<std::size_t>(c) * n + k] = off[k];
    for (std::size_t j = q; j-- > 0;) {
      const std::int64_t* step = nest.con_steps(j);
      for (std::size_t k = 0; k < n; ++k) off[k] += step[k];
      if (++index[j] < nest.con_len[j]) break;
      index[j] = 0;
      for (std::size_t k = 0; k < n; ++k) off[k] -= nest.con_len[j] * step[k];
    }
  }
}

}  // namespace

LoopNest::LoopNest(const EinsumPlan& plan) {
  const std::size_t n = plan.operands.size();
  const std::size_t out_rank = plan.output_shape.size();
  const std::size_t con_rank = plan.contraction_shape.size();
  SmallArray<std::int64_t, 16> step(n);

  LoopNest& nest = *this;
  nest.operands = static_cast<int>(n);
  // A space with no loop left (rank 0, or only length-1 axes) is one loop of length 1, steps 0.
  const std::size_t out_cap = out_rank > 0 ? out_rank : 1;
  nest.out_len.assign(out_cap, 1);
  nest.out_ystep.assign(out_cap, 1);
  nest.out_step.assign(out_cap * n, 0);
  std::int64_t ystep = 1;
  SmallArray<std::int64_t, 8> ysteps(out_rank);
  for (std::size_t i = out_rank; i-- > 0;) {
    ysteps[i] = ystep;
    ystep *= plan.output_shape[i];
  }
  for (std::size_t i = 0; i < out_rank; ++i) {
    for (std::size_t k = 0; k < n; ++k) step[k] = plan.operands[k].output_strides[i];
    push_axis(nest.out_loops, nest.out_len, &nest.out_ystep, nest.out_step, n, plan.output_shape[i],
              ysteps[i], step.data());
  }
  if (nest.out_loops == 0) nest.out_loops = 1;

  const std::size_t con_cap = con_rank > 0 ? con_rank : 1;
  nest.con_len.assign(con_cap, 1);
  nest.con_step.assign(con_cap * n, 0);
  for (std::size_t j = 0; j < con_rank; ++j) {
    for (std::size_t k = 0; k < n; ++k) step[k] = plan.operands[k].contract_strides[j];
    push_axis<8, 64>(nest.con_loops, nest.con_len, nullptr, nest.con_step, n, plan.contraction_shape[j], 0,
                     step.data());
  }
  if (nest.con_loops == 0) nest.con_loops = 1;

  // O[0] (when it can be split, i.e. L >= 2) is the head of output loop 0.
  if (out_rank > 0 && plan.output_shape[0] >= 2) nest.outer_unit = nest.out_len[0] / plan.output_shape[0];

  if (nest.con_loops > 1) {
    std::int64_t count = 1;
    for (std::size_t j = 0; j < nest.con_loops; ++j) count *= nest.con_len[j];
    if (static_cast<std::size_t>(count) * n <= kMaxConTable) build_con_table(nest, count);
  }

  // Operands before the first one that moves along the innermost contraction loop form a product
  // prefix that is the same for the whole loop; at least the last operand stays inside.
  const std::int64_t* inner = nest.con_steps(nest.con_loops - 1);
  if (nest.con_len[nest.con_loops - 1] > 1)
    while (nest.hoisted + 1 < nest.operands && inner[nest.hoisted] == 0) ++nest.hoisted;

  // Likewise along the tile: the leading operands every lane of a tile reads alike.
  const std::int64_t* tile = nest.out_steps(nest.out_loops - 1);
  if (nest.out_len[nest.out_loops - 1] > 1)
    while (nest.lane_shared + 1 < nest.operands && tile[nest.lane_shared] == 0) ++nest.lane_shared;

  nest.single_fold = nest.out_loops == 1 && nest.out_len[0] == 1 && nest.con_loops == 1;
}

}  // namespace einfuzz::fused::detail
