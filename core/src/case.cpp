// The case format `einfuzz-case/1` (CASES.md): a strict, never-throwing reader and a canonical writer.
#include "einfuzz/core/case.hpp"
#include "einfuzz/core/harness_bug.hpp"

#include <algorithm>
#include <bit>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <fstream>
#include <limits>
#include <new>
#include <nlohmann/json.hpp>
#include <set>
#include <system_error>
#include <type_traits>
#include <utility>
#include <variant>

namespace einfuzz {

namespace {

// std::map-backed DOM: member order is recorded separately by CaseSax (below), so lookups stay
// logarithmic whatever the input (ordered_json's lookups are linear, quadratic over a document).
using Json = nlohmann::json;

constexpr std::string_view kFormat = "einfuzz-case/1";
/// Case files larger than this are refused before they are read.
constexpr std::uintmax_t kMaxCaseFileBytes = std::uintmax_t{1} << 30;

// ---------------------------------------------------------------------------------------------
// Value spelling

template <class F>
struct FloatBits;
template <>
struct FloatBits<float> {
  using Bits = std::uint32_t;
  static constexpr Bits kDefaultNan = 0x7fc00000u;
  static constexpr Bits kExponentMask = 0x7f800000u;
  static constexpr Bits kMantissaMask = 0x007fffffu;
  static constexpr int kHexDigits = 8;
};
template <>
struct FloatBits<double> {
  using Bits = std::uint64_t;
  static constexpr Bits kDefaultNan = 0x7ff8000000000000u;
  static constexpr Bits kExponentMask = 0x7ff0000000000000u;
  static constexpr Bits kMantissaMask = 0x000fffffffffffffu;
  static constexpr int kHexDigits = 16;
};

constexpr char kHexDigitChars[] = "0123456789abcdef";

template <class U>
std::string hex_bits(U bits, int digits) {
  std::string out(static_cast<std::size_t>(digits), '0');
  for (int i = digits - 1; i >= 0; --i, bits >>= 4)
    out[static_cast<std::size_t>(i)] = kHexDigitChars[bits & 0xf];
  return out;
}

// %a as glibc prints a double, computed from the bits so the spelling (and every file name hashed
// from it) is identical on every platform and locale: "0x1.8p+1", "-0x0p+0",
// "0x0.0000000000001p-1022" for subnormals.
std::string hex_float(double v) {
  const auto bits = std::bit_cast<std::uint64_t>(v);
  const int biased = static_cast<int>((bits >> 52) & 0x7ff);
  std::uint64_t mantissa = bits & FloatBits<double>::kMantissaMask;
  std::string out = (bits >> 63) ? "-0x" : "0x";
  if (biased == 0 && mantissa == 0) return out + "0p+0";
  out += biased == 0 ? '0' : '1';
  const int exponent = biased == 0 ? -1022 : biased - 1023;
  if (mantissa != 0) {
    std::string digits = hex_bits(mantissa, 13);
    digits.erase(digits.find_last_not_of('0') + 1);
    out += '.';
    out += digits;
  }
  out += exponent < 0 ? "p-" : "p+";
  out += std::to_string(exponent < 0 ? -exponent : exponent);
  return out;
}

template <class F>
std::string format_float(F v) {
  using B = FloatBits<F>;
  const auto bits = std::bit_cast<typename B::Bits>(v);
  if (std::isnan(v)) return bits == B::kDefaultNan ? "nan" : "nan:0x" + hex_bits(bits, B::kHexDigits);
  if (std::isinf(v)) return v < 0 ? "-inf" : "inf";
  return hex_float(static_cast<double>(v));  // float -> double is exact
}

int hex_value(char c) noexcept {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

bool is_digit(char c) noexcept { return c >= '0' && c <= '9'; }

/// A C99 hex float decomposed exactly: ±significand × 2^exponent with an odd significand (or 0).
struct HexFloat {
  enum class Status { ok, malformed, too_many_bits } status = Status::malformed;
  bool negative = false;
  std::uint64_t significand = 0;
  std::int64_t exponent = 0;
};

// Strict syntax: [-]0x<hex>[.<hex>]p[+-]<dec>, at least one hex digit, nothing before or after.
// Parsed by hand rather than with strtod: strtod tolerates leading spaces, decimal floats and
// partial consumption, its radix character depends on the locale, and it rounds silently where
// this format must reject.
HexFloat parse_hex_float(std::string_view s) {
  HexFloat r;
  std::size_t i = 0;
  if (i < s.size() && s[i] == '-') {
    r.negative = true;
    ++i;
  }
  if (s.size() - i < 2 || s[i] != '0' || (s[i + 1] != 'x' && s[i + 1] != 'X')) return r;
  i += 2;
  const std::size_t int_begin = i;
  while (i < s.size() && hex_value(s[i]) >= 0) ++i;
  const std::size_t int_digits = i - int_begin;
  std::size_t frac_begin = i;
  if (i < s.size() && s[i] == '.') frac_begin = ++i;
  while (i < s.size() && hex_value(s[i]) >= 0) ++i;
  const std::size_t frac_digits = i - frac_begin;
  if (int_digits + frac_digits == 0) return r;
  if (i >= s.size() || (s[i] != 'p' && s[i] != 'P')) return r;
  ++i;
  bool exponent_negative = false;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) exponent_negative = s[i++] == '-';
  if (i >= s.size() || !is_digit(s[i])) return r;
  // Saturate: any exponent beyond 2^40 is out of every dtype's range anyway.
  constexpr std::int64_t kExponentCap = std::int64_t{1} << 40;
  std::int64_t exponent = 0;
  for (; i < s.size() && is_digit(s[i]); ++i) exponent = std::min(kExponentCap, exponent * 10 + (s[i] - '0'));
  if (i != s.size()) return r;

  const auto digit = [&](std::size_t j) {
    return hex_value(j < int_digits ? s[int_begin + j] : s[frac_begin + (j - int_digits)]);
  };
  const std::size_t n = int_digits + frac_digits;
  std::size_t first = n;
  std::size_t last = 0;
  for (std::size_t j = 0; j < n; ++j) {
    if (digit(j) != 0) {
      if (first == n) first = j;
      last = j;
    }
  }
  r.status = HexFloat::Status::ok;
  if (first == n) return r;  // ±0, whatever the exponent
  // 15 hex digits from a non-zero one to a non-zero one span at least 54 bits: more than f64 holds.
  if (last - first + 1 > 14) {
    r.status = HexFloat::Status::too_many_bits;
    return r;
  }
  std::uint64_t significand = 0;
  for (std::size_t j = first; j <= last; ++j)
    significand = significand * 16 + static_cast<std::uint64_t>(digit(j));
  const int trailing = std::countr_zero(significand);
  r.significand = significand >> trailing;
  r.exponent = (exponent_negative ? -exponent : exponent) +
               4 * (static_cast<std::int64_t>(int_digits) - 1 - static_cast<std::int64_t>(last)) + trailing;
  return r;
}

/// Parses one float spelling into `out`; returns why it is rejected, or an empty string.
template <class F>
std::string parse_float(std::string_view s, F& out) {
  using B = FloatBits<F>;
  using L = std::numeric_limits<F>;
  if (s == "inf" || s == "-inf") {
    out = s[0] == '-' ? -L::infinity() : L::infinity();
    return {};
  }
  if (s == "nan") {
    out = std::bit_cast<F>(B::kDefaultNan);
    return {};
  }
  constexpr std::string_view kNanPrefix = "nan:0x";
  if (s.substr(0, kNanPrefix.size()) == kNanPrefix) {
    const std::string_view digits = s.substr(kNanPrefix.size());
    typename B::Bits bits = 0;
    bool ok = digits.size() == static_cast<std::size_t>(B::kHexDigits);
    for (char c : digits) {
      const int d = hex_value(c);
      ok = ok && d >= 0 && !(c >= 'A' && c <= 'F');
      bits = static_cast<typename B::Bits>((bits << 4) | static_cast<typename B::Bits>(d < 0 ? 0 : d));
    }
    if (!ok) {
      return "a NaN is spelled \"nan:0x\" followed by exactly " + std::to_string(B::kHexDigits) +
             " lowercase hex digits (its raw bits)";
    }
    if ((bits & B::kExponentMask) != B::kExponentMask || (bits & B::kMantissaMask) == 0) {
      return "the bits 0x" + std::string(digits) + " are not a NaN";
    }
    out = std::bit_cast<F>(bits);
    return {};
  }
  const HexFloat h = parse_hex_float(s);
  if (h.status == HexFloat::Status::malformed) {
    return "not a float spelling: expected a C99 hex float such as \"0x1.8p+1\", or \"inf\", \"-inf\", "
           "\"nan\", \"nan:0x<raw bits>\"";
  }
  // Representable iff the significand fits the precision, its lowest bit is no finer than the
  // smallest subnormal and its highest bit no coarser than the largest finite exponent.
  const int bits = h.significand == 0 ? 0 : std::bit_width(h.significand);
  const bool exact = h.status == HexFloat::Status::ok &&
                     (h.significand == 0 || (bits <= L::digits && h.exponent >= L::min_exponent - L::digits &&
                                             h.exponent + bits - 1 <= L::max_exponent - 1));
  if (!exact) {
    return std::string("not exactly representable in ") + (std::is_same_v<F, float> ? "f32" : "f64") +
           " (the format is bit-exact: no rounding, no overflow, no underflow)";
  }
  // ldexp of a significand below 2^53 is exact for a representable result.
  const double magnitude =
      h.significand == 0 ? 0.0 : std::ldexp(static_cast<double>(h.significand), static_cast<int>(h.exponent));
  out = static_cast<F>(h.negative ? -magnitude : magnitude);
  return {};
}

template <class I>
std::string parse_integer(std::string_view s, I& out, std::string_view dtype) {
  const char* end = s.data() + s.size();
  const auto [ptr, ec] = std::from_chars(s.data(), end, out);
  if (ec == std::errc::result_out_of_range && ptr == end) return "out of range for " + std::string(dtype);
  if (s.empty() || ec != std::errc() || ptr != end) return "not a decimal integer";
  return {};
}

// ---------------------------------------------------------------------------------------------
// Writing

std::string quote(std::string_view s) {
  // JSON needs UTF-8: invalid bytes become U+FFFD rather than an exception.
  return Json(std::string(s)).dump(-1, ' ', false, Json::error_handler_t::replace);
}

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
  std::string out = "{\n  \"format\": " + quote(kFormat) + ",\n  \"op\": " + quote(op_name(c.op)) +
                    ",\n  \"pattern\": " + quote(c.pattern) +
                    ",\n  \"reduction\": " + (c.reduction ? quote(*c.reduction) : "null") +
                    ",\n  \"axis_lengths\": {";
  for (std::size_t i = 0; i < c.axis_lengths.size(); ++i) {
    if (i) out += ", ";
    out += quote(c.axis_lengths[i].first) + ": " + std::to_string(c.axis_lengths[i].second);
  }
  out += "},\n  \"dtype\": " + quote(dtype_name(c.dtype)) + ",\n  \"inputs\": [";
  // A tensor whose dtype differs from c.dtype is written in its own spelling; the reader rejects it.
  for (std::size_t i = 0; i < c.inputs.size(); ++i) {
    out += i ? ",\n    " : "\n    ";
    out += "{\"shape\": [";
    const Shape& shape = c.inputs[i].shape();
    for (std::size_t d = 0; d < shape.size(); ++d) {
      if (d) out += ", ";
      out += std::to_string(shape[d]);
    }
    out += "], \"values\": [";
    append_values(out, c.inputs[i]);
    out += "]";
    if (i < c.layouts.size() && c.layouts[i]) append_layout(out, *c.layouts[i]);
    out += "}";
  }
  out += c.inputs.empty() ? "]" : "\n  ]";
  if (c.expect_error) {
    out +=
        ",\n  \"expect\": {\"error\": " + (c.expect_error->empty() ? "null" : quote(*c.expect_error)) + "}";
  }
  if (with_origin && !c.origin.empty()) {
    out += ",\n  \"origin\": {";
    for (std::size_t i = 0; i < c.origin.size(); ++i) {
      if (i) out += ", ";
      out += quote(c.origin[i].first) + ": " + quote(c.origin[i].second);
    }
    out += "}";
  }
  out += "\n}\n";
  return out;
}

// ---------------------------------------------------------------------------------------------
// Reading

/// SAX handler: builds the DOM and records what a std::map DOM loses — the file order and
/// duplicates of `axis_lengths` and `origin` members (duplicate axis lengths are kept for the
/// checker's `duplicateAxisLength`) — and the first duplicate key anywhere else that matters.
/// The strings of one `inputs[i].values` array, packed end to end: about 4 bytes per value beyond
/// the text, where a JSON DOM takes some 90 (a node, a string object and its heap buffer each). A
/// case file near the size limit thus takes about three times its size to read, not ten.
struct PackedStrings {
  std::string bytes;
  std::vector<std::uint32_t> ends;  // ends[k]: one past string k in `bytes` (a case file is < 4 GiB)
  std::size_t size() const { return ends.size(); }
  std::string_view operator[](std::size_t k) const {
    const std::size_t begin = k == 0 ? 0 : ends[k - 1];
    return std::string_view(bytes).substr(begin, ends[k] - begin);
  }
};

class CaseSax {
 public:
  using Members = std::vector<std::pair<std::string, Json>>;

  explicit CaseSax(Json& root) : dom_(root, /*allow_exceptions_=*/false) {}

  bool null() { return unpack() && on_value(Json(nullptr)) && dom_.null(); }
  bool boolean(bool v) { return unpack() && on_value(Json(v)) && dom_.boolean(v); }
  bool number_integer(Json::number_integer_t v) { return unpack() && on_value(Json(v)) && dom_.number_integer(v); }
  bool number_unsigned(Json::number_unsigned_t v) {
    return unpack() && on_value(Json(v)) && dom_.number_unsigned(v);
  }
  bool number_float(Json::number_float_t v, const Json::string_t& s) {
    return unpack() && on_value(Json(v)) && dom_.number_float(v, s);
  }
  bool string(Json::string_t& v) {
    if (packing_ && depth_ == 4) {
      packing_->bytes += v;
      packing_->ends.push_back(static_cast<std::uint32_t>(packing_->bytes.size()));
      return true;
    }
    return on_value(Json(v)) && dom_.string(v);
  }
  bool binary(Json::binary_t& v) { return unpack() && on_value(Json(nullptr)) && dom_.binary(v); }
  bool start_object(std::size_t n) { return unpack() && on_container(true) && dom_.start_object(n); }
  bool start_array(std::size_t n) {
    if (!unpack() || !on_container(false) || !dom_.start_array(n)) return false;
    if (depth_ == 4 && where_ == Where::inputs && input_key_ == "values") {
      // inputs[i].values: strings go to packed_[i] (an empty array in the DOM) until anything
      // else appears, which unpack() hands to the DOM in order, as if never packed.
      packed_.resize(static_cast<std::size_t>(std::max<std::int64_t>(input_count_, 1)));
      packing_ = &packed_.back().emplace();
    }
    return true;
  }
  bool end_object() { return on_end() && dom_.end_object(); }
  bool end_array() {
    if (packing_ && depth_ == 4) packing_ = nullptr;  // the packed array is complete
    return on_end() && dom_.end_array();
  }
  bool key(Json::string_t& k) {
    on_key(k);
    return dom_.key(k);
  }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& e) {
    syntax_error_ = e.what();
    return false;
  }

  const std::string& syntax_error() const { return syntax_error_; }
  const std::string& duplicate() const { return duplicate_; }
  const std::vector<std::string>& top_keys() const { return top_order_; }
  const Members& axis_members() const { return axis_members_; }
  const Members& origin_members() const { return origin_members_; }
  /// Per input (by index), its `values` strings when they were packed (the DOM array is empty then).
  std::vector<std::optional<PackedStrings>>& packed() { return packed_; }

 private:
  /// What the level-1 container (a top-level member's value) being parsed is.
  enum class Where { other, axis_lengths, origin, expect, inputs };

  /// A `values` element that is not a string: give the DOM the strings packed so far, then this.
  bool unpack() {
    if (!packing_ || depth_ != 4) return true;
    PackedStrings strings = std::move(*packing_);
    packing_ = nullptr;
    packed_.back().reset();
    for (std::size_t k = 0; k < strings.size(); ++k) {
      Json::string_t v(strings[k]);
      if (!dom_.string(v)) return false;
    }
    return true;
  }

  // Primitive values and container starts sit at level depth_ (1 = a top-level member's value).
  bool on_value(Json v) {
    if (depth_ == 2) record_element(std::move(v));
    return true;
  }
  bool on_container(bool is_object) {
    if (depth_ == 1) {
      where_ = !is_object                   ? (top_key_ == "inputs" ? Where::inputs : Where::other)
               : top_key_ == "axis_lengths" ? Where::axis_lengths
               : top_key_ == "origin"       ? Where::origin
               : top_key_ == "expect"       ? Where::expect
                                            : Where::other;
      member_keys_.clear();
      if (where_ == Where::axis_lengths) axis_members_.clear();
      if (where_ == Where::origin) origin_members_.clear();
    } else if (depth_ == 2) {
      record_element(is_object ? Json::object() : Json::array());
      if (where_ == Where::inputs) member_keys_.clear();  // a new inputs[i] object
    }
    ++depth_;
    return true;
  }
  bool on_end() {
    if (depth_ > 0) --depth_;
    if (depth_ == 1) where_ = Where::other;
    return true;
  }
  void record_element(Json v) {
    if (where_ == Where::axis_lengths) axis_members_.emplace_back(pending_key_, std::move(v));
    if (where_ == Where::origin) origin_members_.emplace_back(pending_key_, std::move(v));
    if (where_ == Where::inputs) ++input_count_;
  }
  // Keys sit at level depth_: 1 for top-level keys, 2 for members of a top-level object value.
  void on_key(const std::string& k) {
    if (depth_ == 1) {
      if (!top_keys_.insert(k).second) note_duplicate(k, "at the top level");
      top_order_.push_back(k);
      top_key_ = k;
    } else if (depth_ == 2 && (where_ == Where::origin || where_ == Where::expect)) {
      if (!member_keys_.insert(k).second)
        note_duplicate(k, where_ == Where::origin ? "in origin" : "in expect");
    } else if (depth_ == 3 && where_ == Where::inputs) {
      input_key_ = k;
      if (!member_keys_.insert(k).second)
        note_duplicate(k, "in inputs[" + std::to_string(input_count_ - 1) + "]");
    }
    if (depth_ == 2) pending_key_ = k;
  }
  void note_duplicate(const std::string& k, const std::string& where) {
    if (duplicate_.empty()) duplicate_ = "duplicate key " + quote(k) + " " + where;
  }

  nlohmann::detail::json_sax_dom_parser<Json> dom_;
  std::size_t depth_ = 0;       // containers currently open
  Where where_ = Where::other;  // the level-1 container being parsed
  std::string top_key_;         // the last top-level key
  std::string pending_key_;     // the last key of a level-1 object
  std::int64_t input_count_ = 0;
  std::string input_key_;               // the last key of an inputs[i] object
  std::vector<std::optional<PackedStrings>> packed_;
  PackedStrings* packing_ = nullptr;   // the values array being packed, if any
  std::set<std::string> top_keys_;
  std::vector<std::string> top_order_;
  std::set<std::string> member_keys_;  // keys of the current origin / expect / inputs[i] object
  Members axis_members_;
  Members origin_members_;
  std::string syntax_error_;
  std::string duplicate_;
};

/// Keeps messages printable ASCII (nlohmann quotes raw input bytes) and short.
std::string sanitize(std::string_view s, std::size_t max_length = 300) {
  std::string out;
  for (char ch : s) {
    if (out.size() >= max_length) {
      out += "...";
      break;
    }
    const auto c = static_cast<unsigned char>(ch);
    if (c >= 0x20 && c < 0x7f) {
      out += ch;
    } else {
      out += "\\x";
      out += kHexDigitChars[c >> 4];
      out += kHexDigitChars[c & 0xf];
    }
  }
  return out;
}

/// "string \"abc\"", "number 2.5", "an object": the offending JSON value, ASCII, truncated.
std::string describe(const Json& j) {
  if (j.is_object()) return "an object";
  if (j.is_array()) return "an array";
  const std::string text = sanitize(j.dump(-1, ' ', true, Json::error_handler_t::replace), 60);
  if (j.is_string()) return "string " + text;
  if (j.is_number()) return "number " + text;
  return text;
}

/// A string as quoted JSON (for names that should have been one of a few words), else describe().
std::string spelled(const Json& j) {
  return j.is_string() ? sanitize(j.dump(-1, ' ', true, Json::error_handler_t::replace), 60) : describe(j);
}

class Reader {
 public:
  Reader(std::string_view file_name, const Limits& limits)
      : file_(file_name.empty() ? "<case>" : file_name), limits_(limits) {}

  Result<Case> read(std::string_view text);

 private:
  Diagnostic fail(std::string_view field, std::string_view what, Code code = Code::malformedCase) const {
    std::string message = file_ + ": ";
    if (!field.empty()) message += std::string(field) + ": ";
    return make_diagnostic(code, message + std::string(what));
  }

  Result<Shape> read_shape(const Json& j, const std::string& field) const;
  Result<Tensor> read_input(const Json& j, DType dtype, const std::string& field,
                            std::optional<InputLayout>& layout, std::size_t index) const;
  Result<InputLayout> read_layout(const Json& j, DType dtype, const std::string& field) const;
  template <class T>
  Result<Tensor> read_values(const Json& values, Shape shape, DType dtype, const std::string& field) const;
  template <class T>
  Result<Tensor> read_packed_values(const PackedStrings& values, Shape shape, DType dtype,
                                    const std::string& field) const;

  /// The SAX pass's packed `values` strings, per input (CaseSax::packed); freed as they are read.
  std::vector<std::optional<PackedStrings>>* packed_ = nullptr;

  std::string file_;
  const Limits& limits_;
};

Result<Shape> Reader::read_shape(const Json& j, const std::string& field) const {
  if (!j.is_array()) return fail(field, "must be an array of axis lengths, got " + describe(j));
  Shape shape;
  shape.reserve(j.size());
  for (std::size_t d = 0; d < j.size(); ++d) {
    const Json& v = j[d];
    const std::string at = field + "[" + std::to_string(d) + "]";
    if (v.is_number_unsigned()) {
      const auto u = v.get<std::uint64_t>();
      if (u > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
        return fail(at, "length " + std::to_string(u) + " is too large", Code::sizeLimitExceeded);
      }
      shape.push_back(static_cast<std::int64_t>(u));
    } else if (v.is_number_integer()) {  // signed: negative, or "-0"
      const auto n = v.get<std::int64_t>();
      if (n < 0) return fail(at, "negative length " + std::to_string(n));
      shape.push_back(n);
    } else if (v.is_number_float() && v.get<double>() >= 0x1p63) {
      return fail(at, "length " + describe(v) + " is too large", Code::sizeLimitExceeded);
    } else {
      return fail(at, "must be a non-negative integer, got " + describe(v));
    }
  }
  return shape;
}

template <class T>
Result<Tensor> Reader::read_packed_values(const PackedStrings& values, Shape shape, DType dtype,
                                          const std::string& field) const {
  std::vector<T> out(values.size());
  for (std::size_t i = 0; i < values.size(); ++i) {
    const std::string_view s = values[i];
    // Errors only: describe() the value as read_values would have seen it.
    const auto at = [&] { return field + "[" + std::to_string(i) + "]"; };
    if constexpr (std::is_same_v<T, Bool8>) {
      return fail(at(), "a bool must be JSON true or false, got " + describe(Json(std::string(s))));
    } else {
      std::string why;
      if constexpr (std::is_floating_point_v<T>) {
        why = parse_float(s, out[i]);
      } else {
        why = parse_integer(s, out[i], dtype_name(dtype));
      }
      if (!why.empty()) return fail(at(), describe(Json(std::string(s))) + " is " + why);
    }
  }
  return Tensor(std::move(shape), std::move(out));
}

template <class T>
Result<Tensor> Reader::read_values(const Json& values, Shape shape, DType dtype,
                                   const std::string& field) const {
  std::vector<T> out(values.size());
  for (std::size_t i = 0; i < values.size(); ++i) {
    const Json& v = values[i];
    const std::string at = field + "[" + std::to_string(i) + "]";
    std::string why;
    if constexpr (std::is_same_v<T, Bool8>) {
      if (!v.is_boolean()) return fail(at, "a bool must be JSON true or false, got " + describe(v));
      out[i] = v.get<bool>() ? 1 : 0;
    } else {
      if (!v.is_string()) {
        return fail(at, std::string("a ") + std::string(dtype_name(dtype)) + " value must be a string, got " +
                            describe(v));
      }
      const auto& s = v.get_ref<const std::string&>();
      if constexpr (std::is_floating_point_v<T>) {
        why = parse_float(s, out[i]);
      } else {
        why = parse_integer(s, out[i], dtype_name(dtype));
      }
      if (!why.empty()) return fail(at, describe(v) + " is " + why);
    }
  }
  return Tensor(std::move(shape), std::move(out));
}

Result<InputLayout> Reader::read_layout(const Json& j, DType dtype, const std::string& field) const {
  if (!j.is_object()) {
    return fail(field, "must be an object {\"strides\": [...], \"offset\": N, \"storage\": N}, got " + describe(j));
  }
  for (const auto& [k, v] : j.items()) {
    if (k != "strides" && k != "offset" && k != "storage" && k != "fill") {
      return fail(field, "unknown key " + sanitize(quote(k), 80));
    }
  }
  const auto int64_field = [&](const char* key, std::int64_t& out) -> std::optional<Diagnostic> {
    const auto it = j.find(key);
    if (it == j.end()) return fail(field, std::string("missing field \"") + key + "\"");
    if (!it->is_number_integer() ||
        (it->is_number_unsigned() &&
         it->get<std::uint64_t>() > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))) {
      return fail(field + "." + key, "must be an integer in the int64 range, got " + describe(*it));
    }
    out = it->get<std::int64_t>();
    return std::nullopt;
  };
  InputLayout layout;
  if (auto d = int64_field("offset", layout.offset)) return *d;
  if (auto d = int64_field("storage", layout.storage)) return *d;
  const auto strides = j.find("strides");
  if (strides == j.end()) return fail(field, "missing field \"strides\"");
  if (!strides->is_array()) return fail(field + ".strides", "must be an array of integers, got " + describe(*strides));
  for (std::size_t d = 0; d < strides->size(); ++d) {
    const Json& v = (*strides)[d];
    if (!v.is_number_integer() ||
        (v.is_number_unsigned() &&
         v.get<std::uint64_t>() > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))) {
      return fail(field + ".strides[" + std::to_string(d) + "]", "must be an integer in the int64 range, got " + describe(v));
    }
    layout.strides.push_back(v.get<std::int64_t>());
  }
  if (const auto fill = j.find("fill"); fill != j.end()) {
    auto t = visit_dtype(dtype, [&](auto tag) {
      return read_values<decltype(tag)>(Json::array({*fill}), Shape{}, dtype, field + ".fill");
    });
    if (!t) return std::move(t).error();
    layout.fill = std::move(*t);
  }
  return layout;
}

Result<Tensor> Reader::read_input(const Json& j, DType dtype, const std::string& field,
                                  std::optional<InputLayout>& layout, std::size_t index) const {
  if (!j.is_object())
    return fail(field, "must be an object {\"shape\": [...], \"values\": [...]}, got " + describe(j));
  for (const auto& [k, v] : j.items()) {
    if (k != "shape" && k != "values" && k != "layout") return fail(field, "unknown key " + sanitize(quote(k), 80));
  }
  if (!j.contains("shape")) return fail(field, "missing field \"shape\"");
  if (!j.contains("values")) return fail(field, "missing field \"values\"");
  auto shape = read_shape(j["shape"], field + ".shape");
  if (!shape) return std::move(shape).error();
  // The size check comes before anything proportional to the shape is allocated.
  const auto count = check_tensor_size(*shape, limits_, field);
  if (!count) {
    Diagnostic d = count.error();
    return fail("", d.message, d.code == Code::sizeLimitExceeded ? d.code : Code::malformedCase);
  }
  const Json& values = j["values"];
  const std::string values_field = field + ".values";
  if (!values.is_array()) return fail(values_field, "must be an array, got " + describe(values));
  std::optional<PackedStrings> packed;
  if (packed_ && index < packed_->size() && (*packed_)[index]) packed = std::exchange((*packed_)[index], std::nullopt);
  const std::size_t found = packed ? packed->size() : values.size();
  if (static_cast<std::uint64_t>(*count) != found) {
    return fail(values_field, "shape " + format_shape(*shape) + " needs " + std::to_string(*count) +
                                  " values, found " + std::to_string(found));
  }
  auto tensor = visit_dtype(dtype, [&](auto tag) {
    if (packed) return read_packed_values<decltype(tag)>(*packed, std::move(*shape), dtype, values_field);
    return read_values<decltype(tag)>(values, std::move(*shape), dtype, values_field);
  });
  packed.reset();
  if (!tensor || !j.contains("layout")) return tensor;
  auto parsed = read_layout(j["layout"], dtype, field + ".layout");
  if (!parsed) return std::move(parsed).error();
  if (auto storage = layout_storage(*tensor, *parsed, limits_); !storage) {
    const Diagnostic& d = storage.error();
    return fail(field + ".layout", d.message, d.code == Code::sizeLimitExceeded ? d.code : Code::malformedCase);
  }
  layout = std::move(*parsed);
  return tensor;
}

Result<Case> Reader::read(std::string_view text) {
  Json root;
  CaseSax sax(root);
  const bool parsed = Json::sax_parse(text.begin(), text.end(), &sax);
  packed_ = &sax.packed();
  if (!parsed || !sax.syntax_error().empty()) {
    std::string why = sax.syntax_error();
    if (const auto pos = why.find("] "); why.rfind("[json.exception", 0) == 0 && pos != std::string::npos) {
      why.erase(0, pos + 2);
    }
    return fail("", "invalid JSON: " + sanitize(why.empty() ? "syntax error" : why));
  }
  if (!root.is_object()) return fail("", "a case must be a JSON object, got " + describe(root));
  if (!sax.duplicate().empty()) return fail("", sanitize(sax.duplicate()));

  const auto format = root.find("format");
  if (format == root.end()) return fail("", "missing field \"format\" (expected " + quote(kFormat) + ")");
  if (!format->is_string() || format->get_ref<const std::string&>() != kFormat) {
    return fail("format",
                "unknown format " + spelled(*format) + " (this reader reads " + quote(kFormat) + ")");
  }
  static constexpr std::string_view kKeys[] = {"format", "op",     "pattern", "reduction", "axis_lengths",
                                               "dtype",  "inputs", "expect",  "origin"};
  for (const std::string& k : sax.top_keys()) {
    if (std::find(std::begin(kKeys), std::end(kKeys), k) == std::end(kKeys)) {
      return fail("", "unknown key " + sanitize(quote(k), 80));
    }
  }
  const auto find_field = [&](const char* key) -> const Json* {
    const auto it = root.find(key);
    return it == root.end() ? nullptr : &*it;
  };

  Case c;
  const Json* op = find_field("op");
  if (!op) return fail("", "missing field \"op\"");
  if (*op == "einsum") {
    c.op = Op::einsum;
  } else if (*op == "reduce") {
    c.op = Op::reduce;
  } else {
    return fail("op", "unknown op " + spelled(*op) + " (expected \"einsum\" or \"reduce\")");
  }

  const Json* pattern = find_field("pattern");
  if (!pattern) return fail("", "missing field \"pattern\"");
  if (!pattern->is_string()) return fail("pattern", "must be a string, got " + describe(*pattern));
  c.pattern = pattern->get<std::string>();

  // `reduction` and `axis_lengths` may be omitted in hand-written einsum cases (null and {}).
  if (const Json* reduction = find_field("reduction"); reduction && !reduction->is_null()) {
    if (!reduction->is_string())
      return fail("reduction", "must be null or a string, got " + describe(*reduction));
    c.reduction = reduction->get<std::string>();
  }
  if (const Json* axes = find_field("axis_lengths")) {
    if (!axes->is_object()) return fail("axis_lengths", "must be an object, got " + describe(*axes));
    for (const auto& [name, v] : sax.axis_members()) {
      const std::string at = "axis_lengths[" + sanitize(quote(name), 80) + "]";
      if (v.is_number_integer() && !v.is_number_unsigned()) {
        c.axis_lengths.emplace_back(name, v.get<std::int64_t>());
      } else if (v.is_number_unsigned() &&
                 v.get<std::uint64_t>() <=
                     static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
        c.axis_lengths.emplace_back(name, static_cast<std::int64_t>(v.get<std::uint64_t>()));
      } else {
        return fail(at, "must be an integer in the int64 range, got " + describe(v));
      }
    }
  }

  const Json* dtype = find_field("dtype");
  if (!dtype) return fail("", "missing field \"dtype\"");
  const auto parsed_dtype =
      dtype->is_string() ? dtype_from_name(dtype->get_ref<const std::string&>()) : std::nullopt;
  if (!parsed_dtype)
    return fail("dtype", "unknown dtype " + spelled(*dtype) + " (expected f32, f64, i32, i64 or bool)");
  c.dtype = *parsed_dtype;

  const Json* inputs = find_field("inputs");
  if (!inputs) return fail("", "missing field \"inputs\"");
  if (!inputs->is_array()) return fail("inputs", "must be an array, got " + describe(*inputs));
  c.inputs.reserve(inputs->size());
  std::vector<std::optional<InputLayout>> layouts;
  bool any_layout = false;
  for (std::size_t i = 0; i < inputs->size(); ++i) {
    std::optional<InputLayout> layout;
    auto t = read_input((*inputs)[i], c.dtype, "inputs[" + std::to_string(i) + "]", layout, i);
    if (!t) return std::move(t).error();
    c.inputs.push_back(std::move(*t));
    any_layout = any_layout || layout.has_value();
    layouts.push_back(std::move(layout));
  }
  // `layouts` stays empty for the common case without any layout (so cases compare as before).
  if (any_layout) c.layouts = std::move(layouts);

  if (const Json* expect = find_field("expect")) {
    if (!expect->is_object())
      return fail("expect", "must be an object {\"error\": ...}, got " + describe(*expect));
    for (const auto& [k, v] : expect->items()) {
      if (k != "error") return fail("expect", "unknown key " + sanitize(quote(k), 80));
    }
    const auto error = expect->find("error");
    if (error == expect->end()) return fail("expect", "missing field \"error\"");
    Code code{};
    if (error->is_null()) {
      c.expect_error = std::string();
    } else if (error->is_string() && code_from_name(error->get_ref<const std::string&>(), code)) {
      c.expect_error = error->get<std::string>();
    } else {
      return fail("expect.error", "must be null or a diagnostic code name, got " + describe(*error));
    }
  }

  // `origin` values must be strings: anything else is rejected, so reading and writing stay exact.
  if (const Json* origin = find_field("origin")) {
    if (!origin->is_object()) return fail("origin", "must be an object of strings, got " + describe(*origin));
    for (const auto& [k, v] : sax.origin_members()) {
      if (!v.is_string()) {
        return fail("origin[" + sanitize(quote(k), 80) + "]", "must be a string, got " + describe(v));
      }
      c.origin.emplace_back(k, v.get<std::string>());
    }
  }
  return c;
}

}  // namespace

namespace {

/// The first logical element (row-major) before `limit` that the layout maps to storage `slot`:
/// only for the diagnostic of an aliasing conflict, so a second walk costs nothing otherwise.
std::int64_t first_writer(const Shape& shape, const InputLayout& layout, std::size_t slot, std::int64_t limit) {
  std::vector<std::int64_t> coords(shape.size(), 0);
  std::int64_t pos = layout.offset;
  for (std::int64_t i = 0; i < limit; ++i) {
    if (static_cast<std::size_t>(pos) == slot) return i;
    for (std::size_t d = shape.size(); d-- > 0;) {
      if (++coords[d] < shape[d]) {
        pos += layout.strides[d];
        break;
      }
      pos -= (shape[d] - 1) * layout.strides[d];
      coords[d] = 0;
    }
  }
  return -1;
}

}  // namespace

Result<Tensor> layout_storage(const Tensor& logical, const InputLayout& layout, const Limits& limits) {
  const Shape& shape = logical.shape();
  const auto bad = [](const std::string& what) { return make_diagnostic(Code::invalidArgument, "layout: " + what); };
  if (layout.strides.size() != shape.size()) {
    return bad(std::to_string(layout.strides.size()) + " strides for a rank-" + std::to_string(shape.size()) +
               " input");
  }
  if (layout.storage < 0) return bad("negative storage size " + std::to_string(layout.storage));
  if (layout.offset < 0) return bad("negative offset " + std::to_string(layout.offset));
  if (auto size = check_tensor_size(Shape{layout.storage}, limits, "layout storage"); !size) {
    return std::move(size).error();
  }
  if (layout.fill && (layout.fill->dtype() != logical.dtype() || layout.fill->rank() != 0)) {
    return bad("the fill value must be a scalar of the input's dtype");
  }
  const std::int64_t n = logical.size();
  if (n > 0) {
    // The extreme storage indices the view reaches; any overflow is out of range anyway.
    std::int64_t lo = layout.offset;
    std::int64_t hi = layout.offset;
    bool overflow = false;
    for (std::size_t d = 0; d < shape.size(); ++d) {
      std::int64_t extent = 0;
      overflow = overflow || __builtin_mul_overflow(shape[d] - 1, layout.strides[d], &extent) ||
                 __builtin_add_overflow(extent < 0 ? lo : hi, extent, extent < 0 ? &lo : &hi);
    }
    if (overflow || lo < 0 || hi >= layout.storage) {
      return bad("the view reaches storage indices " + (overflow ? std::string("beyond int64") :
                 std::to_string(lo) + " to " + std::to_string(hi)) + ", outside a storage of " +
                 std::to_string(layout.storage) + " elements");
    }
  } else if (layout.offset > layout.storage) {
    return bad("offset " + std::to_string(layout.offset) + " is past a storage of " + std::to_string(layout.storage) +
               " elements");
  }
  return visit_dtype(logical.dtype(), [&](auto tag) -> Result<Tensor> {
    using T = decltype(tag);
    const T fill = layout.fill ? layout.fill->values<T>()[0] : T{};
    std::vector<T> storage(static_cast<std::size_t>(layout.storage), fill);
    // One bit per slot (not an int64: that took 8 bytes more per storage element than the storage):
    // which slots a logical element wrote; a second writer is searched for only on a conflict.
    std::vector<bool> written(storage.size(), false);
    const std::span<const T> values = logical.values<T>();
    std::vector<std::int64_t> coords(shape.size(), 0);
    std::int64_t pos = layout.offset;
    for (std::int64_t i = 0; i < n; ++i) {
      const auto slot = static_cast<std::size_t>(pos);
      const auto value = static_cast<std::size_t>(i);
      if (written[slot] && std::memcmp(&storage[slot], &values[value], sizeof(T)) != 0) {
        return bad("logical elements " + std::to_string(first_writer(shape, layout, slot, i)) + " and " +
                   std::to_string(i) + " share storage index " + std::to_string(pos) + " but hold different values");
      }
      storage[slot] = values[value];
      written[slot] = true;
      // Row-major odometer over the logical coordinates, moving the storage index along.
      for (std::size_t d = shape.size(); d-- > 0;) {
        if (++coords[d] < shape[d]) {
          pos += layout.strides[d];
          break;
        }
        pos -= (shape[d] - 1) * layout.strides[d];
        coords[d] = 0;
      }
    }
    return Tensor(Shape{layout.storage}, std::move(storage));
  });
}

std::string_view op_name(Op op) noexcept {
  switch (op) {
    case Op::einsum: return "einsum";
    case Op::reduce: return "reduce";
  }
  return "?";
}

std::string format_value(const Tensor& t, std::int64_t flat_index) {
  if (flat_index < 0 || flat_index >= t.size()) {
    harness_bug("format_value: index " + std::to_string(flat_index) + " out of range for " +
                std::to_string(t.size()) + " elements");
  }
  const auto i = static_cast<std::size_t>(flat_index);
  return std::visit(
      [i](const auto& v) -> std::string {
        using T = typename std::decay_t<decltype(v)>::value_type;
        if constexpr (std::is_floating_point_v<T>) {
          return format_float(v[i]);
        } else if constexpr (std::is_same_v<T, Bool8>) {
          return v[i] ? "true" : "false";  // any non-zero byte is true
        } else {
          return std::to_string(v[i]);
        }
      },
      t.storage());
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
  return std::string(op_name(c.op)) + "-" + hex_bits(hash, 16) + ".case.json";
}

Result<Case> read_case(std::string_view text, std::string_view file_name, const Limits& limits) {
  // The boundary: nothing thrown inside (allocation failure, a library error) escapes.
  try {
    return Reader(file_name, limits).read(text);
  } catch (const std::bad_alloc&) {
    return make_diagnostic(Code::sizeLimitExceeded,
                           std::string(file_name) + ": out of memory while reading the case");
  } catch (const std::exception& e) {
    return make_diagnostic(Code::malformedCase, std::string(file_name) + ": " + sanitize(e.what()));
  } catch (...) {
    return make_diagnostic(Code::malformedCase, std::string(file_name) + ": unreadable case");
  }
}

Result<Case> read_case_file(const std::filesystem::path& path, const Limits& limits) {
  try {
    const std::string name = path.string();
    const auto fail = [&](Code code, const std::string& what) {
      return make_diagnostic(code, name + ": " + what);
    };
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec))
      return fail(Code::malformedCase, "is a directory, not a case file");
    if (const auto size = std::filesystem::file_size(path, ec); !ec && size > kMaxCaseFileBytes) {
      return fail(Code::sizeLimitExceeded, "the file has " + std::to_string(size) +
                                               " bytes, over the case-file limit of " +
                                               std::to_string(kMaxCaseFileBytes));
    }
    errno = 0;
    std::ifstream in(path, std::ios::binary);
    if (!in) {
      return fail(Code::malformedCase, std::string("cannot open the case file") +
                                           (errno ? std::string(": ") + std::strerror(errno) : ""));
    }
    // Read in chunks with a cap: the size above is unknown for pipes and may change meanwhile.
    std::string text;
    std::vector<char> chunk(std::size_t{1} << 16);
    while (in) {
      in.read(chunk.data(), static_cast<std::streamsize>(chunk.size()));
      const auto got = static_cast<std::size_t>(in.gcount());
      if (text.size() + got > kMaxCaseFileBytes) {
        return fail(Code::sizeLimitExceeded, "the file is over the case-file limit of " +
                                                 std::to_string(kMaxCaseFileBytes) + " bytes");
      }
      text.append(chunk.data(), got);
    }
    if (in.bad()) return fail(Code::malformedCase, "cannot read the case file");
    return read_case(text, name, limits);
  } catch (const std::bad_alloc&) {
    return make_diagnostic(Code::sizeLimitExceeded, "out of memory while reading a case file");
  } catch (const std::exception& e) {
    return make_diagnostic(Code::malformedCase, "cannot read a case file: " + sanitize(e.what()));
  }
}

}  // namespace einfuzz
