// The fused kernels instantiated for f16, computing in Rounded<11> (one file per dtype so they compile in parallel).
#include "kernel.hpp"

namespace einfuzz::fused::detail {

template ChunkFn<Rounded<11>> select_chunk_fn<Rounded<11>>(int operands, const Lane* kinds, int width);

}  // namespace einfuzz::fused::detail
