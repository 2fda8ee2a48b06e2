// The fused kernels instantiated for bf16, computing in Rounded<8> (one file per dtype so they compile in parallel).
#include "kernel.hpp"

namespace einfuzz::fused::detail {

template ChunkFn<Rounded<8>> select_chunk_fn<Rounded<8>>(int operands, const Lane* kinds, int width);

}  // namespace einfuzz::fused::detail
