// The byte layout shared by the structured fuzz targets, the artifact converter and the seed maker:
// bytes → (case, execution knobs), a case → bytes, and where the value bytes start.
//
// Layout (every read is total: missing bytes read as 0, so every byte string decodes):
//
//   byte 0   kind:  bit 0 op (0 einsum, 1 reduce); bits 1-3 dtype (f32 f64 i32 i64 bool f16 bf16 i32);
//                   bits 4-6 reduction (sum prod mean min max any all, 7 = an unknown name)
//   byte 1   knobs: bit 0 generated; bits 1-2 tile width (8 4 1 8); bits 3-4 tasks
//   generated:  a little-endian uint16 L, then L bytes for the case generator's ByteChoices face
//               (generate_case: the target's op, a share deliberately invalid; the dtype byte is
//               ignored), then value bytes
//   encoded:    the pattern up to '\n' (or the end), then
//                 einsum: operand count (& 15), per operand: rank (& 15), rank × LEB128 length
//                 reduce: axis-length count (& 7), per entry: name up to '\n', LEB128 length;
//                         then the input's rank (& 15), rank × LEB128 length
//               then value bytes
//   values:  little-endian, dtype width (bool: 1 byte, bit 0), row-major over the inputs in order;
//            they override the generated values / fill the encoded tensors; when they run out the
//            generated values stay and encoded tensors continue with small integers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "einfuzz/core/case.hpp"
#include "einfuzz/fused/einsum.hpp"
#include "einfuzz/harness/run.hpp"

namespace einfuzz::fuzz {

/// Which op a target decodes; `any` follows bit 0 of the kind byte.
enum class OpChoice { any, einsum, reduce };

/// The structure of one input before any tensor exists: what the parse/check target needs.
struct Structure {
  Op op = Op::einsum;
  DType dtype = DType::f64;
  std::string reduction;                                          ///< reduce only, verbatim
  std::string pattern;
  std::vector<Shape> shapes;                                      ///< einsum operands / the reduce input
  std::vector<std::pair<std::string, std::int64_t>> axis_lengths; ///< reduce only
  fused::ExecOptions exec;                                        ///< knobs: tile width, tasks
  bool generated = false;                                         ///< drawn by the case generator
  std::size_t choices_offset = 0;                                 ///< generated: the generator's bytes
  std::size_t choices_size = 0;                                   ///<   start here, and are this many
  std::size_t value_offset = 0;                                   ///< first value byte (may be > size)
};

/// Decodes the structure. Never fails: every byte string has one. For generated inputs only the
/// knobs and offsets are filled (pattern and shapes need the generator: use decode_case).
Structure decode_structure(std::span<const std::uint8_t> data, OpChoice op);

/// Upper bound on any one decoded tensor: larger shapes make decode_case return nullopt, so the
/// differential targets stay fast (SEMANTICS' own limits are far larger).
inline constexpr std::int64_t kMaxFuzzElements = 4096;

/// The harness limits of the fuzz targets: an empty input can still have a huge output (`a b -> a`
/// on [18874366, 0]), and the any-order oracle keeps exact data per output element, so outputs and
/// materialised spaces are bounded well inside libFuzzer's 2 GB RSS limit. A case over them is
/// skipped (a verdict on nobody), and a converted artifact's command carries them.
inline Limits fuzz_limits() {
  Limits l;
  l.max_tensor_elements = std::int64_t{1} << 20;
  l.max_materialised_elements = std::int64_t{1} << 22;
  return l;
}

/// A decoded input of a differential target.
struct Decoded {
  Case c;                    ///< the case (its origin says when the generator drew it)
  fused::ExecOptions exec;   ///< how the fused backend is asked to run it
};

/// How a differential target runs one decoded input: its backends, as the CLI spells them, and
/// every option that decides their verdicts. The targets and einfuzz_artifact_to_case both read it,
/// so a converted artifact's `einfuzz check` command reproduces the target's verdicts.
struct TargetSetup {
  std::vector<std::string> backends;
  RunOptions run;
};

/// fuzz_einsum_diff and fuzz_reduce_diff: fused with the decoded knobs (tile width, tasks, 2 threads)
/// and shuffle seeded with input_hash(data) (differential.hpp); the default profile's einsum truth
/// computed with shuffle's (RunOptions::storage_truth), for the reference check.
TargetSetup differential_setup(const fused::ExecOptions& exec, std::span<const std::uint8_t> data);

/// fuzz_external's share of generated inputs whose tensors are strided views (draw_layouts: permuted,
/// gapped, reversed, expanded, offset, with a fill): a backend declaring `strided_inputs` gets them as
/// views, so its stride handling is fuzzed too. The in-process targets' backends read logical values
/// only, and their inputs get no layout (0).
inline constexpr int kExternalLayoutPercent = 25;

/// Decodes a whole case with values; nullopt when some tensor would exceed kMaxFuzzElements or has
/// a negative or overflowing shape (such inputs are skipped, not judged). A generated input gets
/// input layouts in `layout_percent` percent of cases (drawn after the case from the generator's
/// bytes, so the case is the same with 0; the value bytes then keep every expanded view consistent).
std::optional<Decoded> decode_case(std::span<const std::uint8_t> data, OpChoice op, int layout_percent = 0);

/// Where value bytes start and how wide one element is, for the value-aware mutator (width 0 when
/// the input decodes to no case).
struct ValueLayout {
  std::size_t offset = 0;
  std::size_t width = 0;
  DType dtype = DType::f64;
};
/// A generated input's layout needs the generator (its dtype): decode_case records the layouts of
/// the generated inputs it decodes (a fixed-size table per thread, by the bytes' hash), and
/// value_layout returns a recorded one instead of running the generator again.
ValueLayout value_layout(std::span<const std::uint8_t> data, OpChoice op);
/// value_layout without the recorded layouts (it still records one it decodes): what a recorded
/// layout must equal.
ValueLayout value_layout_uncached(std::span<const std::uint8_t> data, OpChoice op);

/// The encoded (non-generated) bytes of a case, or nullopt when the layout cannot express it
/// (a pattern containing '\n', more than 15 operands or dimensions, more than 7 axis lengths, a
/// dtype without a code in the kind byte: f16, bf16).
/// decode_case(encode_case(c)) reproduces c's op, dtype, reduction, pattern, shapes and values.
std::optional<std::vector<std::uint8_t>> encode_case(const Case& c);

/// Prints `message` and the case as a case file, then aborts: a finding (or a harness bug).
[[noreturn]] void fail(const std::string& message, const Case* c = nullptr);

/// fail() unless `condition` (a literal message keeps the passing path free of allocations).
inline void require(bool condition, const char* message, const Case* c = nullptr) {
  if (!condition) fail(message, c);
}

}  // namespace einfuzz::fuzz
