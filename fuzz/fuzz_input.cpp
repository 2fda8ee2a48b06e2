// Bytes ↔ cases for the fuzz targets (see fuzz_input.hpp for the layout).
#include "fuzz_input.hpp"

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string_view>
#include <type_traits>

#include "einfuzz/core/check_reduce.hpp"
#include "einfuzz/harness/generate.hpp"
#include "differential.hpp"

namespace einfuzz::fuzz {
namespace {

/// The kind byte's dtype bits 1-3. 0-4 and 7 keep what `% 5` gave them before f16/bf16 existed (7
/// was i32), so existing seeds decode as before except 5 and 6, which were f32 and f64 again.
constexpr std::array<DType, 8> kDTypes = {DType::f32, DType::f64,  DType::i32,  DType::i64,
                                          DType::boolean, DType::f16, DType::bf16, DType::i32};
/// Byte values 0..6 pick the reduction table's kinds, 7 an unknown name (the checker must reject it).
std::string_view reduction_spelling(std::size_t i) {
  const auto table = reduction_table();
  return i < table.size() ? table[i].name : std::string_view("median");
}
constexpr std::array<int, 4> kTileWidths = {8, 4, 1, 8};

/// Total reads over the input: past the end every read gives 0 / an empty string.
class Reader {
 public:
  explicit Reader(std::span<const std::uint8_t> data) : data_(data) {}

  std::uint8_t byte() noexcept { return pos_ < data_.size() ? data_[pos_++] : 0; }

  /// Bytes up to (not including) '\n', which is consumed; or up to the end.
  std::string line() {
    std::string out;
    while (pos_ < data_.size() && data_[pos_] != '\n') out.push_back(static_cast<char>(data_[pos_++]));
    if (pos_ < data_.size()) ++pos_;
    return out;
  }

  /// LEB128, at most 10 bytes; the bits wrap into int64 (so huge encodings give negative lengths).
  std::int64_t varint() noexcept {
    std::uint64_t v = 0;
    for (int shift = 0; shift < 64 && pos_ < data_.size(); shift += 7) {
      const std::uint8_t b = data_[pos_++];
      v |= static_cast<std::uint64_t>(b & 0x7f) << shift;
      if (!(b & 0x80)) break;
    }
    return static_cast<std::int64_t>(v);
  }

  std::size_t position() const noexcept { return pos_; }

 private:
  std::span<const std::uint8_t> data_;
  std::size_t pos_ = 0;
};

Shape read_shape(Reader& in) {
  Shape shape(in.byte() & 15);
  for (std::int64_t& d : shape) d = in.varint();
  return shape;
}

void write_varint(std::vector<std::uint8_t>& out, std::int64_t value) {
  auto v = static_cast<std::uint64_t>(value);
  do {
    const auto b = static_cast<std::uint8_t>(v & 0x7f);
    v >>= 7;
    out.push_back(v ? (b | 0x80) : b);
  } while (v);
}

bool write_shape(std::vector<std::uint8_t>& out, const Shape& shape) {
  if (shape.size() > 15) return false;
  out.push_back(static_cast<std::uint8_t>(shape.size()));
  for (std::int64_t d : shape) write_varint(out, d);
  return true;
}

/// Overrides (or fills) the values of `inputs` from `bytes`; past the bytes, `fill` decides.
void apply_values(std::vector<Tensor>& inputs, std::span<const std::uint8_t> bytes, bool fill) {
  std::size_t pos = 0;
  std::int64_t index = 0;
  for (Tensor& t : inputs) {
    visit_dtype(t.dtype(), [&](auto tag) {
      using T = decltype(tag);
      for (T& v : t.values<T>()) {
        if (pos + sizeof(T) <= bytes.size()) {
          if constexpr (std::is_same_v<T, Bool8>) {
            v = static_cast<Bool8>(bytes[pos] & 1);
          } else {
            std::memcpy(&v, bytes.data() + pos, sizeof(T));  // little-endian on every supported target
          }
          pos += sizeof(T);
        } else if (fill) {
          // Small integers, exact in every dtype, so encoded inputs without value bytes still add up.
          const std::int64_t small = (index * 5 + 3) % 9 - 4;
          if constexpr (std::is_same_v<T, Bool8>) {
            v = static_cast<Bool8>(index & 1);
          } else {
            v = static_cast<T>(small);
          }
        }
        ++index;
      }
    });
  }
}

/// The layouts of the generated-mode inputs decoded last, by the hash of the bytes the generator
/// reads (the kind and knobs, the length and the choices: the value bytes after them decide
/// nothing of the layout) and the op. For a generated input the layout needs the whole generator
/// (every value drawn: 13% of fuzz_einsum_diff's samples under ASan + UBSan, docs/performance.md),
/// and the value-aware mutator asks for the layout of an input libFuzzer ran just before (each
/// step of a mutation chain runs before the next mutates it), or of a corpus input run when it was
/// added, or of one that differs from such an input only in its values. decode_case records each
/// generated input's layout here; value_layout finds it instead of generating the case again.
/// Direct-mapped and fixed in size (a newer input takes an older one's slot). The layout is a
/// function of those bytes and the op, so a hit gives what decoding again would, unless two inputs
/// share a 64-bit hash; then a mutation would treat the values at the wrong width, nothing worse.
class LayoutCache {
 public:
  /// `head`: the input's bytes up to its first value byte (decode_structure's choices' end).
  void put(std::span<const std::uint8_t> head, OpChoice op, const ValueLayout& layout) noexcept {
    const std::uint64_t h = key(head, op);
    slots_[h % kSlots] = {h, head.size(), true, layout};
  }
  std::optional<ValueLayout> find(std::span<const std::uint8_t> head, OpChoice op) const noexcept {
    const std::uint64_t h = key(head, op);
    const Slot& s = slots_[h % kSlots];
    if (!s.used || s.hash != h || s.size != head.size()) return std::nullopt;
    return s.layout;
  }

 private:
  static std::uint64_t key(std::span<const std::uint8_t> head, OpChoice op) noexcept {
    return input_hash(head) ^ (static_cast<std::uint64_t>(op) * 0x9e3779b97f4a7c15ULL);
  }
  struct Slot {
    std::uint64_t hash = 0;
    std::size_t size = 0;
    bool used = false;
    ValueLayout layout;
  };
  static constexpr std::size_t kSlots = 4096;  // a 60 s run's corpus holds about 4000 inputs
  std::array<Slot, kSlots> slots_{};
};

/// A generated input's bytes that decide its layout (decode_structure's `s`).
std::span<const std::uint8_t> generated_head(std::span<const std::uint8_t> data, const Structure& s) {
  return data.first(s.choices_offset + s.choices_size);
}

/// This thread's table, on the heap: a thread_local of its size (192 kB) would be in every thread's
/// static TLS, fused's worker threads included.
LayoutCache& layout_cache() {
  thread_local const std::unique_ptr<LayoutCache> cache = std::make_unique<LayoutCache>();
  return *cache;
}

}  // namespace

Structure decode_structure(std::span<const std::uint8_t> data, OpChoice op) {
  Reader in(data);
  Structure s;
  const std::uint8_t kind = in.byte();
  const std::uint8_t knobs = in.byte();
  s.op = op == OpChoice::einsum ? Op::einsum
         : op == OpChoice::reduce ? Op::reduce
         : (kind & 1) ? Op::reduce : Op::einsum;
  s.dtype = kDTypes[(kind >> 1) & 7];
  s.exec.threads = 2;  // the machine's cores; tasks > 1 then really runs chunks in parallel
  s.exec.tile_width = kTileWidths[(knobs >> 1) & 3];
  s.exec.tasks = (knobs >> 3) & 3;
  if (s.op == Op::reduce) s.reduction = std::string(reduction_spelling((kind >> 4) & 7));

  s.generated = knobs & 1;
  if (s.generated) {
    const std::size_t length = in.byte() | (std::size_t{in.byte()} << 8);
    s.choices_offset = std::min<std::size_t>(4, data.size());
    s.choices_size = std::min(length, data.size() - s.choices_offset);
    s.value_offset = 4 + length;
    return s;
  }
  s.pattern = in.line();
  if (s.op == Op::einsum) {
    const int count = in.byte() & 15;
    for (int k = 0; k < count; ++k) s.shapes.push_back(read_shape(in));
  } else {
    const int count = in.byte() & 7;
    for (int k = 0; k < count; ++k) {
      std::string name = in.line();
      s.axis_lengths.emplace_back(std::move(name), in.varint());
    }
    s.shapes.push_back(read_shape(in));
  }
  s.value_offset = in.position();
  return s;
}

TargetSetup differential_setup(const fused::ExecOptions& exec, std::span<const std::uint8_t> data) {
  TargetSetup setup;
  setup.backends = {"fused", "shuffle"};
  setup.run.exec = exec;
  setup.run.limits = fuzz_limits();  // every implementation checks against the same ones
  setup.run.shuffle_seed = input_hash(data);
  // require_reference_admitted judges the ordered reference against the default profile's truth:
  // computed in the same pass as shuffle's (RunOptions::storage_truth).
  setup.run.storage_truth = true;
  return setup;
}

std::optional<Decoded> decode_case(std::span<const std::uint8_t> data, OpChoice op, int layout_percent) {
  Structure s = decode_structure(data, op);
  Decoded out;
  out.exec = s.exec;
  if (s.generated) {
    ByteChoices choices(data.subspan(s.choices_offset, s.choices_size));
    GenOptions options;
    options.reduce_percent = s.op == Op::reduce ? 100 : 0;
    options.reduce.max_elements = kMaxFuzzElements;
    options.layout_percent = layout_percent;
    out.c = generate_case(choices, options);
    out.c.origin = {{"generator", std::string(kGeneratorVersion) + " from fuzzer bytes"}};
    for (const Tensor& t : out.c.inputs) {
      if (t.size() > kMaxFuzzElements) {
        layout_cache().put(generated_head(data, s), op, {s.value_offset, 0, DType::f64});
        return std::nullopt;
      }
    }
    layout_cache().put(generated_head(data, s), op, {s.value_offset, dtype_size(out.c.dtype), out.c.dtype});
  } else {
    out.c.op = s.op;
    out.c.dtype = s.dtype;
    out.c.pattern = std::move(s.pattern);
    if (s.op == Op::reduce) {
      out.c.reduction = s.reduction;
      out.c.axis_lengths = std::move(s.axis_lengths);
    }
    for (const Shape& shape : s.shapes) {
      const std::optional<std::int64_t> count = checked_element_count(shape);
      if (!count || *count > kMaxFuzzElements) return std::nullopt;
      out.c.inputs.emplace_back(s.dtype, shape);
    }
  }
  const std::span<const std::uint8_t> values =
      s.value_offset < data.size() ? data.subspan(s.value_offset) : std::span<const std::uint8_t>{};
  if (s.generated && !values.empty()) out.c.origin.emplace_back("values", "overridden by fuzzer bytes");
  apply_values(out.c.inputs, values, !s.generated);
  if (!values.empty()) fit_values_to_layouts(out.c);
  return out;
}

namespace {

/// The layout of `data`, whose structure is `s`: a generated input's dtype from decoding it (which
/// records the layout).
ValueLayout decoded_layout(std::span<const std::uint8_t> data, OpChoice op, const Structure& s) {
  if (!s.generated) return {s.value_offset, dtype_size(s.dtype), s.dtype};
  const std::optional<Decoded> d = decode_case(data, op);
  if (!d) return {s.value_offset, 0, DType::f64};
  return {s.value_offset, dtype_size(d->c.dtype), d->c.dtype};
}

}  // namespace

ValueLayout value_layout(std::span<const std::uint8_t> data, OpChoice op) {
  const Structure s = decode_structure(data, op);
  // The generator picks the dtype: the layout decode_case recorded, else decode it (and record it).
  if (s.generated) {
    if (const std::optional<ValueLayout> known = layout_cache().find(generated_head(data, s), op)) return *known;
  }
  return decoded_layout(data, op, s);
}

ValueLayout value_layout_uncached(std::span<const std::uint8_t> data, OpChoice op) {
  return decoded_layout(data, op, decode_structure(data, op));
}

std::optional<std::vector<std::uint8_t>> encode_case(const Case& c) {
  if (c.pattern.find('\n') != std::string::npos) return std::nullopt;
  // The kind byte has no code for f16/bf16 (kDTypes): such a case is not expressible.
  if (std::find(kDTypes.begin(), kDTypes.end(), c.dtype) == kDTypes.end()) return std::nullopt;
  std::uint8_t kind = c.op == Op::reduce ? 1 : 0;
  for (std::size_t i = 0; i < kDTypes.size(); ++i) {
    if (kDTypes[i] == c.dtype) {
      kind |= static_cast<std::uint8_t>(i << 1);
      break;  // i32 has two spellings: the first
    }
  }
  std::size_t reduction = reduction_table().size();  // "median": not a kind
  if (const auto k = c.reduction ? reduction_from_name(*c.reduction) : std::nullopt) {
    reduction = static_cast<std::size_t>(*k);
  }
  if (c.op == Op::reduce) kind |= static_cast<std::uint8_t>(reduction << 4);
  std::vector<std::uint8_t> out = {kind, 0};
  out.insert(out.end(), c.pattern.begin(), c.pattern.end());
  out.push_back('\n');
  if (c.op == Op::einsum) {
    if (c.inputs.size() > 15) return std::nullopt;
    out.push_back(static_cast<std::uint8_t>(c.inputs.size()));
    for (const Tensor& t : c.inputs) {
      if (!write_shape(out, t.shape())) return std::nullopt;
    }
  } else {
    if (c.axis_lengths.size() > 7 || c.inputs.size() != 1) return std::nullopt;
    out.push_back(static_cast<std::uint8_t>(c.axis_lengths.size()));
    for (const auto& [name, length] : c.axis_lengths) {
      if (name.find('\n') != std::string::npos) return std::nullopt;
      out.insert(out.end(), name.begin(), name.end());
      out.push_back('\n');
      write_varint(out, length);
    }
    if (!write_shape(out, c.inputs[0].shape())) return std::nullopt;
  }
  for (const Tensor& t : c.inputs) {
    if (t.dtype() != c.dtype) return std::nullopt;
    const std::span<const std::byte> bytes = t.bytes();
    for (std::byte b : bytes) out.push_back(static_cast<std::uint8_t>(b));
  }
  return out;
}

void fail(const std::string& message, const Case* c) {
  std::fprintf(stderr, "einfuzz fuzz finding: %s\n", message.c_str());
  if (c) std::fprintf(stderr, "the case (einfuzz_artifact_to_case turns the crash artifact into this):\n%s\n",
                      write_case(*c).c_str());
  std::fflush(stderr);
  std::abort();
}

}  // namespace einfuzz::fuzz
