// The `torch` backends (built only when libtorch is found): at::einsum, optionally with an explicit
// contraction path, and the at:: reductions. Only backends/src/torch.cpp includes ATen; it is built as
// the module einfuzz_torch.so, opened with dlopen on the first make_torch_backend call, so programs
// that never ask for torch never load libtorch (loading it costs ~0.6 s per process).
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "einfuzz/backends/backend.hpp"

namespace einfuzz {

/// The order in which a `torch-path-*` backend asks at::einsum to contract operands (its `path`
/// argument: pairs of operand positions; each result is appended at the end of the list).
enum class TorchPath {
  automatic,   ///< no path: torch's own order (left to right in 1.13)
  right_first, ///< always the last two operands first: (n-2, n-1), (n-3, n-2), …
  outer_first, ///< the first and the last operand first: (0, n-1), then (0, n-2), …
};

/// How a torch backend computes min and max (and so, for VJPs, its tie rule, ORACLE §7).
enum class TorchMinMax {
  amax,     ///< at::amax / at::amin over all reduced dimensions: tie rule `equal-share`
  max_dim,  ///< at::max(dim) / at::min(dim) over the reduced dimensions flattened into one: tie rule `one`
};

/// `torch`, `torch-path-right`, `torch-path-outer`, and `torch-maxdim` (TorchMinMax::max_dim, no path). einsum: the pattern in numpy notation
/// (numpy_subscripts) through at::einsum; a pattern that does not parse or uses groups, unit or
/// anonymous axes is rejected as einops would (bool: `unsupportedDtype`), more than 52 labels is
/// `Unsupported`;
/// cases with fewer than three operands need no path and run as `torch`. reduce: einops-style
/// (check_reduce), then at::sum / mean / prod (one axis at a time, last first) / amin / amax / any /
/// all with the input's dtype kept; nothing reduced passes values through. Inputs with a layout
/// and non-negative strides are handed over as strided views. Any-order, factoring, NaN `propagate`.
/// VJP cases (f32/f64, every kind but any/all) go through autograd: the inputs as leaves that
/// require grad, the same forward calls, `backward(g)`, each leaf's grad() (none: zeros); the VJP
/// rules of check_case are the checker's; what torch raises in backward is `Unsupported`.
/// Null when the module cannot be loaded; torch_unavailable_reason() then says why.
std::unique_ptr<Backend> make_torch_backend(TorchPath path = TorchPath::automatic,
                                            TorchMinMax minmax = TorchMinMax::amax);

/// The built-in names this build provides: {"torch", "torch-path-right", "torch-path-outer",
/// "torch-maxdim"} when the
/// module was built (its path is fixed at build time; the environment variable EINFUZZ_TORCH_MODULE
/// overrides it), else none.
std::vector<std::string> torch_backend_names();

/// Why make_torch_backend returned null: not built here, or dlopen's message.
std::string torch_unavailable_reason();

}  // namespace einfuzz
