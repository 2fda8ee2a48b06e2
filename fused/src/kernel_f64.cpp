// The fused kernels instantiated for f64 (one file per dtype so they compile in parallel).
#include "kernel.hpp"

namespace einfuzz::fused::detail {

template ChunkFn<double> select_chunk_fn<double>(int operands, const Lane* kinds, int width);

}  // namespace einfuzz::fused::detail
