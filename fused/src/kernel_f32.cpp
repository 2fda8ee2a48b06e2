// The fused kernels instantiated for f32 (one file per dtype so they compile in parallel).
#include "kernel.hpp"

namespace einfuzz::fused::detail {

template ChunkFn<float> select_chunk_fn<float>(int operands, const Lane* kinds, int width);

}  // namespace einfuzz::fused::detail
