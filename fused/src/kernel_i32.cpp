// The fused kernels instantiated for i32 (one file per dtype so they compile in parallel).
#include "kernel.hpp"

namespace einfuzz::fused::detail {

template ChunkFn<std::int32_t> select_chunk_fn<std::int32_t>(int operands, const Lane* kinds, int width);

}  // namespace einfuzz::fused::detail
