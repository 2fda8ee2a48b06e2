// The canonical writer of `einfuzz-case/1` (CASES.md): stable key order, one input per line, and the
// content-derived file name hashed from that text.
#include <string>

#include "case_values.hpp"
#include "einfuzz/core/case.hpp"
#include "einfuzz/core/text.hpp"

namespace einfuzz {

namespace {

void append_values(std::string& out, const Tensor& t) {
  const std::int64_t n = t.size();
  for (std::int64_t i = 0; i < n; ++i) {
    if (i) out += ", ";
    if (t.dtype() == DType::boolean) {
      out += format_value(t, i);
    } else {
      out += '"';
      out += format_value(t, i);
      out += '"';
    }
  }
}

void append_tensor(std::string& out, const Tensor& t) {
  out += "{\"shape\": [";
  const Shape& shape = t.shape();
  for (std::size_t d = 0; d < shape.size(); ++d) {
    if (d) out += ", ";
    out += std::to_string(shape[d]);
  }
  out += "], \"values\": [";
  append_values(out, t);
  out += "]";
}

void append_layout(std::string& out, const InputLayout& layout) {
  out += ", \"layout\": {\"strides\": [";
  for (std::size_t d = 0; d < layout.strides.size(); ++d) {
    if (d) out += ", ";
    out += std::to_string(layout.strides[d]);
  }
  out += "], \"offset\": " + std::to_string(layout.offset) + ", \"storage\": " + std::to_string(layout.storage);
  if (layout.fill && layout.fill->size() == 1) {
    out += ", \"fill\": ";
    out += layout.fill->dtype() == DType::boolean ? format_value(*layout.fill, 0)
                                                  : "\"" + format_value(*layout.fill, 0) + "\"";
  }
  out += "}";
}

std::string write_case_text(const Case& c, bool with_origin) {
  std::string out = "{\n  \"format\": " + json_quote(detail::kCaseFormat) + ",\n  \"op\": " +
                    (c.is_vjp() ? "\"vjp\",\n  \"of\": " : "") + json_quote(op_name(c.op)) +
                    ",\n  \"pattern\": " + json_quote(c.pattern) +
                    ",\n  \"reduction\": " + (c.reduction ? json_quote(*c.reduction) : "null") +
                    ",\n  \"axis_lengths\": {";
  for (std::size_t i = 0; i < c.axis_lengths.size(); ++i) {
    if (i) out += ", ";
    out += json_quote(c.axis_lengths[i].first) + ": " + std::to_string(c.axis_lengths[i].second);
  }
  out += "},\n  \"dtype\": " + json_quote(dtype_name(c.dtype)) + ",\n  \"inputs\": [";
  // A tensor whose dtype differs from c.dtype is written in its own spelling; the reader rejects it.
  for (std::size_t i = 0; i < c.inputs.size(); ++i) {
    out += i ? ",\n    " : "\n    ";
    append_tensor(out, c.inputs[i]);
    if (i < c.layouts.size() && c.layouts[i]) append_layout(out, *c.layouts[i]);
    out += "}";
  }
  out += c.inputs.empty() ? "]" : "\n  ]";
  if (c.cotangent) {
    out += ",\n  \"cotangent\": ";
    append_tensor(out, *c.cotangent);
    out += "}";
  }
  if (c.expect_error) {
    out +=
        ",\n  \"expect\": {\"error\": " + (c.expect_error->empty() ? "null" : json_quote(*c.expect_error)) + "}";
  }
  if (with_origin && !c.origin.empty()) {
    out += ",\n  \"origin\": {";
    for (std::size_t i = 0; i < c.origin.size(); ++i) {
      if (i) out += ", ";
      out += json_quote(c.origin[i].first) + ": " + json_quote(c.origin[i].second);
    }
    out += "}";
  }
  out += "\n}\n";
  return out;
}

}  // namespace

std::string_view op_name(Op op) noexcept {
  switch (op) {
    case Op::einsum: return "einsum";
    case Op::reduce: return "reduce";
  }
  return "?";
}

std::string case_kind_name(const Case& c) {
  return (c.is_vjp() ? "vjp-" : "") + std::string(op_name(c.op));
}

std::string write_case(const Case& c) { return write_case_text(c, /*with_origin=*/true); }

std::string case_file_name(const Case& c) {
  // 64-bit FNV-1a over the canonical UTF-8 text without `origin`: a fixed byte-level hash, so the
  // name is the same on every platform.
  std::uint64_t hash = 0xcbf29ce484222325u;
  for (const char ch : write_case_text(c, /*with_origin=*/false)) {
    hash ^= static_cast<unsigned char>(ch);
    hash *= 0x100000001b3u;
  }
  return case_kind_name(c) + "-" + detail::hex_bits(hash, 16) + ".case.json";
}

}  // namespace einfuzz
