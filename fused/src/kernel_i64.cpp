// The fused kernels instantiated for i64 (one file per dtype so they compile in parallel).
#include "kernel.hpp"

namespace einfuzz::fused::detail {

template ChunkFn<std::int64_t> select_chunk_fn<std::int64_t>(int operands, const Lane* kinds, int width);

}  // namespace einfuzz::fused::detail
