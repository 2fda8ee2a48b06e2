// Executes an EinsumPlan: checks preconditions, allocates the output, splits O[0] into chunks, runs kernels.
#include <algorithm>
#include <cstdint>
#include <string>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <thread>
#include <type_traits>
#include <vector>

#include "einfuzz/core/scalar.hpp"
#include "einfuzz/core/harness_bug.hpp"
#include "einfuzz/fused/einsum.hpp"
#include "compiled.hpp"
#include "gemm.hpp"
#include "kernel.hpp"
#include "loop_nest.hpp"
#include "parallel.hpp"

namespace einfuzz::fused {
namespace detail {

extern template ChunkFn<float> select_chunk_fn<float>(int, const Lane*, int);
extern template ChunkFn<double> select_chunk_fn<double>(int, const Lane*, int);
extern template ChunkFn<std::int32_t> select_chunk_fn<std::int32_t>(int, const Lane*, int);
extern template ChunkFn<std::int64_t> select_chunk_fn<std::int64_t>(int, const Lane*, int);
extern template ChunkFn<Rounded<11>> select_chunk_fn<Rounded<11>>(int, const Lane*, int);
extern template ChunkFn<Rounded<8>> select_chunk_fn<Rounded<8>>(int, const Lane*, int);

}  // namespace detail

namespace {

// A violated precondition is a harness bug (STYLE: print and abort), never a backend verdict.
[[noreturn]] void precondition_violated(const char* what) {
  harness_bug(std::string("fused::execute: precondition violated: ") + what);
}

// Largest flat index operand k can read, from its plan alone; false on overflow.
bool max_read_index(const OperandPlan& operand, const EinsumPlan& plan, std::int64_t& out) {
  std::int64_t sum = 0;
  const auto add_axis = [&](std::int64_t stride, std::int64_t len) {
    std::int64_t term = 0;
    return !__builtin_mul_overflow(stride, len - 1, &term) && !__builtin_add_overflow(sum, term, &sum);
  };
  for (std::size_t i = 0; i < plan.output_shape.size(); ++i)
    if (!add_axis(operand.output_strides[i], plan.output_shape[i])) return false;
  for (std::size_t j = 0; j < plan.contraction_shape.size(); ++j)
    if (!add_axis(operand.contract_strides[j], plan.contraction_shape[j])) return false;
  out = sum;
  return true;
}

/// Operand k's values, after checking that they hold every element its plan reads (O(operands)
/// against the bounds compiled with the plan).
template <class T>
const T* checked_values(const detail::CompiledLoops& compiled, const Tensor& input, std::size_t k) {
  const std::span<const T> values = input.values<T>();
  const std::int64_t last = compiled.last_read[k];
  if (last < 0 || static_cast<std::uint64_t>(last) >= values.size())
    precondition_violated("an input holds fewer elements than its plan reads");
  return values.data();
}

unsigned resolve_threads(unsigned requested) {
  if (requested != 0) return requested;
  return std::max(1u, std::thread::hardware_concurrency());
}

/// False when no product of a single-term f32/f64 contraction of two operands can meet two NaNs, so
/// that the kernels' pass over its outputs for NaNs to repair (run_chunk_rows) has nothing to find.
/// The hardware's `·` returns the NaN operand when one operand is NaN, whichever order the compiler
/// chose, and its default NaN when neither is (∞ · 0): only two NaN operands leave the payload to
/// the order. So when the smaller operand holds no NaN among the elements its plan may read, every
/// output's NaN is already the reference's. Only a smaller operand is scanned: with operands as
/// large as the output, the scan would cost what it saves.
template <class T>
bool may_pair_nans(const EinsumPlan& plan, const detail::CompiledLoops& compiled, const T* const* x) {
  if constexpr (!is_float_type_v<T> || detail::is_rounded_v<T>) {
    return true;
  } else {
    const detail::LoopNest& nest = compiled.nest;
    if (nest.operands != 2 || nest.con_loops != 1 || nest.con_len[0] != 1) return true;
    const std::size_t k = compiled.last_read[0] <= compiled.last_read[1] ? 0 : 1;
    const std::int64_t count = compiled.last_read[k] + 1;  // checked_values: last_read[k] >= 0
    if (count >= plan.output_size) return true;
    return detail::any_nan(x[k], count);
  }
}

/// Runs the kernels over every chunk, operand k read from x[k], the output written to y (row-major);
/// true when some chunk wrote a NaN.
template <class T>
bool run(const EinsumPlan& plan, const detail::CompiledLoops& compiled, const T* const* x, T* y,
         const ExecOptions& options) {
  const detail::LoopNest& nest = compiled.nest;
  const detail::GemmShape& gemm = compiled.gemm;
  // The GEMM path's vector micro-kernels have no rounding to a 16-bit format: f16/bf16 GEMMs run
  // through the generic kernels (the same §6 order, so the same bits).
  const bool use_gemm = compiled.is_gemm && !detail::is_rounded_v<T>;
  // The tile loads are specialised on each operand's step along the tile (last) output loop.
  const detail::ChunkFn<T> loops = use_gemm ? nullptr : compiled.chunk_fn<T>(options.tile_width);
  const auto chunk = [&](const detail::ChunkArgs<T>& args) {
    if (use_gemm) {
      if constexpr (!detail::is_rounded_v<T>) detail::run_gemm_chunk<T>(gemm, args, options.simd_dispatch);
    } else {
      loops(args);
    }
  };

  const std::int64_t outer = plan.output_shape.empty() ? 1 : plan.output_shape[0];
  const bool serial = options.tasks == 1 || (options.tasks == 0 && compiled.serial_by_policy);
  const unsigned tasks = serial ? 1 : chunk_count(plan, options);
  const bool pair_nans = use_gemm || may_pair_nans<T>(plan, compiled, x);
  if (tasks <= 1) {
    bool nan_seen = false;
    chunk({&nest, x, y, 0, nest.out_len[0], &nan_seen, pair_nans});
    return nan_seen;
  }

  // Contiguous balanced chunks of O[0]: the first outer % tasks chunks get one more coordinate.
  const std::int64_t base = outer / tasks;
  const std::int64_t extra = outer % tasks;
  std::vector<detail::ChunkArgs<T>> chunks;
  chunks.reserve(tasks);
  const std::unique_ptr<bool[]> nan_seen(new bool[tasks]());  // one flag per chunk: no shared writes
  std::int64_t lo = 0;
  for (unsigned t = 0; t < tasks; ++t) {
    const std::int64_t hi = lo + base + (t < extra ? 1 : 0);
    chunks.push_back({&nest, x, y, lo * nest.outer_unit, hi * nest.outer_unit, &nan_seen[t], pair_nans});
    lo = hi;
  }
  auto task = [&](unsigned t) { chunk(chunks[t]); };
  detail::run_tasks(tasks, task);
  return std::any_of(nan_seen.get(), nan_seen.get() + tasks, [](bool b) { return b; });
}

/// The kernels use the hardware's `+` and `·`, which may return either NaN when both operands are
/// NaN (the compiler commutes them). So every NaN output element is evaluated again in the exact
/// order with scalar_add / scalar_mul, which keep the left operand's NaN (SEMANTICS §13.10): NaN
/// payloads then match the reference's too. Elements that are not NaN are already exact; the
/// kernels report whether they wrote a NaN at all, so a NaN-free result costs nothing here.
template <class T>
void repair_nan_payloads(const EinsumPlan& plan, std::span<const Tensor> inputs, Tensor& result) {
  if constexpr (is_float_type_v<T>) {
    const auto y = result.values<T>();
    const std::size_t n = plan.operands.size();
    const std::size_t out_rank = plan.output_shape.size();
    const std::size_t c_rank = plan.contraction_shape.size();
    std::vector<std::int64_t> coords(std::max(out_rank, c_rank)), off(n);
    std::vector<const T*> x(n);
    for (std::size_t m = 0; m < n; ++m) x[m] = inputs[m].values<T>().data();
    for (std::int64_t o = 0; o < plan.output_size; ++o) {
      if (!(y[static_cast<std::size_t>(o)] != y[static_cast<std::size_t>(o)])) continue;
      std::int64_t rest = o;  // output coordinates, row-major
      for (std::size_t a = out_rank; a-- > 0;) {
        coords[a] = rest % plan.output_shape[a];
        rest /= plan.output_shape[a];
      }
      for (std::size_t m = 0; m < n; ++m) {
        off[m] = 0;
        for (std::size_t a = 0; a < out_rank; ++a) off[m] += coords[a] * plan.operands[m].output_strides[a];
      }
      // S := +0, then ((0 + P_0) + P_1) + … over C row-major (§6): the contraction coordinates step
      // like an odometer (the last fastest), each operand's offset with them.
      std::fill(coords.begin(), coords.begin() + static_cast<std::ptrdiff_t>(c_rank), 0);
      T sum{};
      for (std::int64_t j = 0; j < plan.contraction_size; ++j) {
        T product = x[0][static_cast<std::size_t>(off[0])];
        for (std::size_t m = 1; m < n; ++m) product = scalar_mul(product, x[m][static_cast<std::size_t>(off[m])]);
        sum = scalar_add(sum, product);
        for (std::size_t a = c_rank; a-- > 0;) {
          for (std::size_t m = 0; m < n; ++m) off[m] += plan.operands[m].contract_strides[a];
          if (++coords[a] < plan.contraction_shape[a]) break;
          for (std::size_t m = 0; m < n; ++m) off[m] -= coords[a] * plan.operands[m].contract_strides[a];
          coords[a] = 0;
        }
      }
      y[static_cast<std::size_t>(o)] = sum;
    }
  }
}

template <class T>
Tensor finish(const EinsumPlan& plan, const detail::CompiledLoops& compiled, std::span<const Tensor> inputs,
              const ExecOptions& options) {
  // Built from its values directly: Tensor(dtype, shape) would count the shape again and go
  // through the dtype variant, which costs a small einsum as much as its loops.
  Tensor result(plan.output_shape, std::vector<T>(static_cast<std::size_t>(plan.output_size)));
  detail::SmallArray<const T*, 16> x(inputs.size(), detail::Unfilled{});
  for (std::size_t k = 0; k < inputs.size(); ++k) x[k] = checked_values<T>(compiled, inputs[k], k);
  if (run<T>(plan, compiled, x.data(), result.values<T>().data(), options)) {
    repair_nan_payloads<T>(plan, inputs, result);
  }
  return result;
}

/// A single fold (LoopNest::single_fold: one output element, one contraction loop — a dot, a trace,
/// a full sum) of Ops::kCount <= 3 operands: run_chunk's single_fold_sum, called by execute itself.
/// The general path's layers before it (finish, run, the kernel's chunk set-up) cost a 64-term
/// trace half again its additions.
template <class T, class Ops>
Tensor fold_once(const EinsumPlan& plan, const detail::CompiledLoops& compiled, std::span<const Tensor> inputs) {
  Tensor result(plan.output_shape, std::vector<T>(1));
  const T* x[Ops::kCount];
  for (std::size_t k = 0; k < Ops::kCount; ++k) x[k] = checked_values<T>(compiled, inputs[k], k);
  const T sum = detail::single_fold_sum<Ops>(compiled.nest, x);
  result.values<T>()[0] = sum;
  if (sum != sum) repair_nan_payloads<T>(plan, inputs, result);
  return result;
}

/// fold_once for one to three operands of T (f32, f64, i32, i64).
template <class T>
Tensor single_fold(const EinsumPlan& plan, const detail::CompiledLoops& compiled, std::span<const Tensor> inputs) {
  using detail::FixedOps;
  using detail::Lane;
  switch (inputs.size()) {
    case 1: return fold_once<T, FixedOps<Lane::any>>(plan, compiled, inputs);
    case 2: return fold_once<T, FixedOps<Lane::any, Lane::any>>(plan, compiled, inputs);
    default: return fold_once<T, FixedOps<Lane::any, Lane::any, Lane::any>>(plan, compiled, inputs);
  }
}

/// f16/bf16 (H): the inputs widened once to binary32 (exact), the kernels run on Rounded values
/// (every + and · rounded to the format, ORACLE §8), the output narrowed back (exact). NaN outputs
/// are evaluated again in H itself with scalar_add / scalar_mul, as for the other float types.
template <class H>
Tensor finish_half(const EinsumPlan& plan, const detail::CompiledLoops& compiled, std::span<const Tensor> inputs,
                   const ExecOptions& options) {
  using R = detail::Rounded<H::kDigits>;
  Tensor result(plan.output_shape, std::vector<H>(static_cast<std::size_t>(plan.output_size)));
  std::vector<std::vector<R>> wide(inputs.size());
  detail::SmallArray<const R*, 16> x(inputs.size(), detail::Unfilled{});
  for (std::size_t k = 0; k < inputs.size(); ++k) {
    const std::span<const H> v(checked_values<H>(compiled, inputs[k], k), inputs[k].values<H>().size());
    wide[k].resize(v.size());
    for (std::size_t i = 0; i < v.size(); ++i) wide[k][i] = R::of(v[i]);
    x[k] = wide[k].data();
  }
  const auto y = result.values<H>();
  std::vector<R> out(y.size());
  const bool nan = run<R>(plan, compiled, x.data(), out.data(), options);
  for (std::size_t i = 0; i < y.size(); ++i) y[i] = detail::narrow_exact<H::kDigits>(out[i].v);
  if (nan) repair_nan_payloads<H>(plan, inputs, result);
  return result;
}

}  // namespace

namespace detail {

CompiledLoops::CompiledLoops(const EinsumPlan& plan) : nest(plan) {
  is_gemm = match_gemm(nest, gemm);
  const std::int64_t* lane_step = nest.out_steps(nest.out_loops - 1);
  lane_kinds.resize_unfilled(static_cast<std::size_t>(nest.operands));
  for (int k = 0; k < nest.operands; ++k)
    lane_kinds[static_cast<std::size_t>(k)] = lane_step[k] == 0   ? Lane::zero
                                              : lane_step[k] == 1 ? Lane::unit
                                                                  : Lane::any;
  const std::int64_t outer = plan.output_shape.empty() ? 1 : plan.output_shape[0];
  std::int64_t work = 0;
  if (__builtin_mul_overflow(plan.output_size, plan.contraction_size, &work)) work = INT64_MAX;
  serial_by_policy = task_count(outer, work, 2) <= 1;
  last_read.reserve(plan.operands.size());
  for (const OperandPlan& operand : plan.operands) {
    std::int64_t last = 0;
    last_read.push_back(max_read_index(operand, plan, last) ? last : -1);
  }
}

}  // namespace detail

unsigned chunk_count(const EinsumPlan& plan, const ExecOptions& options) noexcept {
  if (plan.output_size == 0 || plan.contraction_size == 0) return 0;
  const std::int64_t outer = plan.output_shape.empty() ? 1 : plan.output_shape[0];
  std::int64_t work = 0;
  if (__builtin_mul_overflow(plan.output_size, plan.contraction_size, &work)) work = INT64_MAX;
  // Asking the OS for the core count costs microseconds: only when the answer can matter.
  if (outer <= 1 || (options.tasks == 0 && task_count(outer, work, 2) <= 1)) return 1;
  const unsigned threads = resolve_threads(options.threads);
  return options.tasks != 0 ? static_cast<unsigned>(std::min<std::int64_t>({options.tasks, outer, threads}))
                            : task_count(outer, work, threads);
}

Tensor execute(const EinsumPlan& plan, std::span<const Tensor> inputs, const ExecOptions& options) {
  if (plan.operands.empty()) precondition_violated("an einsum needs at least one operand");
  if (inputs.size() != plan.operands.size()) precondition_violated("input count differs from the plan's");
  const DType dtype = inputs[0].dtype();
  if (dtype == DType::boolean) precondition_violated("einsum inputs must be numeric (f16, bf16, f32, f64, i32, i64)");
  for (const Tensor& input : inputs)
    if (input.dtype() != dtype) precondition_violated("einsum inputs must share one dtype");

  // Zero-filled: +0 is the value of an empty contraction; nothing is read.
  if (plan.output_size == 0 || plan.contraction_size == 0) return Tensor(dtype, plan.output_shape);
  // A plan from compile() carries its loops; one built by hand gets them here (the same bits).
  std::unique_ptr<const detail::CompiledLoops> local;
  const detail::CompiledLoops* compiled = plan.compiled.get();
  if (compiled == nullptr) {
    local = std::make_unique<const detail::CompiledLoops>(plan);
    compiled = local.get();
  }
  if (compiled->nest.single_fold && inputs.size() <= 3) {
    switch (dtype) {
      case DType::f32: return single_fold<float>(plan, *compiled, inputs);
      case DType::f64: return single_fold<double>(plan, *compiled, inputs);
      case DType::i32: return single_fold<std::int32_t>(plan, *compiled, inputs);
      case DType::i64: return single_fold<std::int64_t>(plan, *compiled, inputs);
      default: break;  // f16/bf16: finish_half widens them, and run_chunk folds in the 16-bit format
    }
  }
  switch (dtype) {  // visit_dtype without the bool case
    case DType::f32: return finish<float>(plan, *compiled, inputs, options);
    case DType::f64: return finish<double>(plan, *compiled, inputs, options);
    case DType::i32: return finish<std::int32_t>(plan, *compiled, inputs, options);
    case DType::i64: return finish<std::int64_t>(plan, *compiled, inputs, options);
    case DType::f16: return finish_half<Float16>(plan, *compiled, inputs, options);
    case DType::bf16: return finish_half<BFloat16>(plan, *compiled, inputs, options);
    case DType::boolean: break;
  }
  return Tensor(dtype, plan.output_shape);  // unreachable: booleans were refused above
}

}  // namespace einfuzz::fused
