// Compiles a checked einsum into per-operand stride plans (SEMANTICS §7) and picks the task count (§9).
#include <bit>
#include <cstdint>
#include <memory>
#include <vector>

#include "einfuzz/fused/einsum.hpp"
#include "compiled.hpp"

namespace einfuzz::fused {
namespace {

// Wrapping unsigned arithmetic: an operand with a zero-length dimension may have later dimensions
// whose product overflows int64. Such a plan is never evaluated (its axis makes the output or the
// contraction empty), so any value will do as long as computing it is defined behaviour.
std::int64_t wrap_mul(std::int64_t a, std::int64_t b) noexcept {
  return static_cast<std::int64_t>(static_cast<std::uint64_t>(a) * static_cast<std::uint64_t>(b));
}
std::int64_t wrap_add(std::int64_t a, std::int64_t b) noexcept {
  return static_cast<std::int64_t>(static_cast<std::uint64_t>(a) + static_cast<std::uint64_t>(b));
}

OperandPlan compile_operand(const CheckedOperand& operand, std::span<const int> output_position,
                            std::span<const int> contract_position, std::size_t output_rank,
                            std::size_t contract_rank) {
  OperandPlan plan;
  plan.output_strides.assign(output_rank, 0);
  plan.contract_strides.assign(contract_rank, 0);
  const std::size_t rank = operand.shape.size();
  std::vector<std::int64_t> stride(rank, 1);
  for (std::size_t i = rank; i-- > 1;) stride[i - 1] = wrap_mul(stride[i], operand.shape[i]);
  for (std::size_t i = 0; i < rank; ++i) {
    if (operand.shape[i] == 1) continue;  // broadcast: its coordinate is always 0
    const auto axis = static_cast<std::size_t>(operand.axes[i]);
    const bool from_output = output_position[axis] >= 0;
    const int position = from_output ? output_position[axis] : contract_position[axis];
    plan.triples.push_back(PlanTriple{from_output, position, stride[i]});
    auto& sum = from_output ? plan.output_strides[static_cast<std::size_t>(position)]
                            : plan.contract_strides[static_cast<std::size_t>(position)];
    sum = wrap_add(sum, stride[i]);  // a repeated label (diagonal) adds its strides
  }
  return plan;
}

}  // namespace

EinsumPlan compile(const CheckedEinsum& einsum) {
  // Classify every global axis once: free (output position) or contracted (position in C).
  std::vector<int> output_position(einsum.axes.size(), -1);
  std::vector<int> contract_position(einsum.axes.size(), -1);
  for (std::size_t i = 0; i < einsum.output.size(); ++i)
    output_position[static_cast<std::size_t>(einsum.output[i])] = static_cast<int>(i);
  for (std::size_t i = 0; i < einsum.contracted.size(); ++i)
    contract_position[static_cast<std::size_t>(einsum.contracted[i])] = static_cast<int>(i);

  EinsumPlan plan;
  plan.operands.reserve(einsum.operands.size());
  for (const CheckedOperand& operand : einsum.operands)
    plan.operands.push_back(compile_operand(operand, output_position, contract_position,
                                            einsum.output.size(), einsum.contracted.size()));
  plan.output_shape = einsum.output_shape;
  plan.contraction_shape = einsum.contraction_shape;
  plan.output_size = einsum.output_size;
  plan.contraction_size = einsum.contraction_size;
  if (plan.output_size > 0 && plan.contraction_size > 0) plan.compiled = std::make_shared<const detail::CompiledLoops>(plan);
  return plan;
}

unsigned task_count(std::int64_t outer, std::int64_t work, unsigned max_threads) noexcept {
  constexpr std::int64_t kMinParallelWork = 1'000'000;
  if (outer <= 1 || max_threads <= 1 || work < kMinParallelWork) return 1;
  // floor(log2(work / 1e6)) equals floor(log2(floor(work / 1e6))) because work / 1e6 >= 1.
  const auto ratio = static_cast<std::uint64_t>(work / kMinParallelWork);
  const std::int64_t tasks = 4 + (std::bit_width(ratio) - 1);
  std::int64_t result = tasks < outer ? tasks : outer;
  if (result > static_cast<std::int64_t>(max_threads)) result = max_threads;
  return static_cast<unsigned>(result);
}

}  // namespace einfuzz::fused
