// Test-only any-order backends whose precision differs from the profile they declare (ORACLE §8):
// the planted precision bugs of issue 14, each to be caught by the profile-aware judge.
#pragma once

#include <memory>

#include "einfuzz/backends/backend.hpp"

namespace einfuzz::test {

/// The three planted precision bugs. Each is an einsum backend (every pattern) on its dtypes that
/// evaluates every element as a plain sequential fold over its terms.
enum class PrecisionBug {
  /// (a) f16/bf16: products and partial sums in the storage type while declaring accumulate f32.
  half_sums_declared_f32,
  /// (b) f32: inputs rounded to TF32 before multiplying, products and sums in f32, while declaring
  /// the default profile (no input rounding).
  undeclared_tf32,
  /// (c) f16/bf16: products and sums of chunks of 64 terms in f32, but the chunk results added into
  /// a storage-type accumulator, while declaring accumulate f32.
  half_chunk_accumulator,
};

/// The backend with `bug`, named "planted-half-sums", "planted-tf32" or "planted-half-chunks".
std::unique_ptr<Backend> make_precision_bug_backend(PrecisionBug bug);

/// What `bug` really does, as a profile: (a) and (c) accumulate f16 (for f16) / bf16; (b) rounds
/// inputs to TF32 (and accumulates f32) — the profile `einfuzz profile` should detect.
PrecisionProfile real_profile(PrecisionBug bug, DType dtype);

}  // namespace einfuzz::test
