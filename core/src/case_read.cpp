// The strict, never-throwing reader of `einfuzz-case/1` (CASES.md): the SAX pass, then each field
// checked in file order with a message naming the file, the field and the element.
#include <cerrno>
#include <cstring>
#include <exception>
#include <fstream>
#include <limits>
#include <new>
#include <type_traits>

#include "case_sax.hpp"
#include "case_values.hpp"
#include "einfuzz/core/case.hpp"
#include "einfuzz/core/case_origin.hpp"
#include "einfuzz/core/precision_text.hpp"
#include "einfuzz/core/text.hpp"

namespace einfuzz {

namespace {

using detail::CaseSax;
using detail::Json;
using detail::PackedStrings;

/// Case files larger than this are refused before they are read.
constexpr std::uintmax_t kMaxCaseFileBytes = std::uintmax_t{1} << 30;

/// "string \"abc\"", "number 2.5", "an object": the offending JSON value, ASCII, truncated.
std::string describe(const Json& j) {
  if (j.is_object()) return "an object";
  if (j.is_array()) return "an array";
  const std::string text = printable(j.dump(-1, ' ', true, Json::error_handler_t::replace), 60);
  if (j.is_string()) return "string " + text;
  if (j.is_number()) return "number " + text;
  return text;
}

/// A string as quoted JSON (for names that should have been one of a few words), else describe().
std::string spelled(const Json& j) {
  return j.is_string() ? printable(j.dump(-1, ' ', true, Json::error_handler_t::replace), 60) : describe(j);
}

/// One value spelled as a string (a DOM string or a packed one) into `out`: why it is rejected, or "".
template <class T>
std::string read_element(std::string_view s, T& out) {
  if constexpr (std::is_same_v<T, Bool8>) {
    return "a bool must be JSON true or false, got " + describe(Json(std::string(s)));
  } else {
    const std::string why = detail::parse_spelling(s, out);
    return why.empty() ? why : describe(Json(std::string(s))) + " is " + why;
  }
}

/// One element of a DOM `values` array into `out`: bools are JSON booleans, every other value a string.
template <class T>
std::string read_element(const Json& v, T& out) {
  if (v.is_string()) return read_element(std::string_view(v.get_ref<const std::string&>()), out);
  if constexpr (std::is_same_v<T, Bool8>) {
    if (!v.is_boolean()) return "a bool must be JSON true or false, got " + describe(v);
    out = v.get<bool>() ? 1 : 0;
    return {};
  } else {
    return "a " + std::string(dtype_name(dtype_of_v<T>)) + " value must be a string, got " + describe(v);
  }
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
  /// The elements of a `values` array (a JSON array, or the strings CaseSax packed) as a tensor.
  template <class T, class Values>
  Result<Tensor> read_values(const Values& values, Shape shape, const std::string& field) const;

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

template <class T, class Values>
Result<Tensor> Reader::read_values(const Values& values, Shape shape, const std::string& field) const {
  std::vector<T> out(values.size());
  for (std::size_t i = 0; i < values.size(); ++i) {
    const std::string why = read_element(values[i], out[i]);
    if (!why.empty()) return fail(field + "[" + std::to_string(i) + "]", why);
  }
  return Tensor(std::move(shape), std::move(out));
}

Result<InputLayout> Reader::read_layout(const Json& j, DType dtype, const std::string& field) const {
  if (!j.is_object()) {
    return fail(field, "must be an object {\"strides\": [...], \"offset\": N, \"storage\": N}, got " + describe(j));
  }
  for (const auto& [k, v] : j.items()) {
    if (k != "strides" && k != "offset" && k != "storage" && k != "fill") {
      return fail(field, "unknown key " + printable(json_quote(k), 80));
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
      return fail(field + ".strides[" + std::to_string(d) + "]",
                  "must be an integer in the int64 range, got " + describe(v));
    }
    layout.strides.push_back(v.get<std::int64_t>());
  }
  if (const auto fill = j.find("fill"); fill != j.end()) {
    auto t = visit_dtype(dtype, [&](auto tag) {
      return read_values<decltype(tag)>(Json::array({*fill}), Shape{}, field + ".fill");
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
    if (k != "shape" && k != "values" && k != "layout") {
      return fail(field, "unknown key " + printable(json_quote(k), 80));
    }
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
    if (packed) return read_values<decltype(tag)>(*packed, std::move(*shape), values_field);
    return read_values<decltype(tag)>(values, std::move(*shape), values_field);
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
    return fail("", "invalid JSON: " + printable(why.empty() ? "syntax error" : why, 300));
  }
  if (!root.is_object()) return fail("", "a case must be a JSON object, got " + describe(root));
  if (!sax.duplicate().empty()) return fail("", printable(sax.duplicate(), 300));

  const auto format = root.find("format");
  if (format == root.end()) {
    return fail("", "missing field \"format\" (expected " + json_quote(detail::kCaseFormat) + ")");
  }
  if (!format->is_string() || format->get_ref<const std::string&>() != detail::kCaseFormat) {
    return fail("format",
                "unknown format " + spelled(*format) + " (this reader reads " + json_quote(detail::kCaseFormat) + ")");
  }
  static constexpr std::string_view kKeys[] = {"format", "op",     "of",     "pattern", "reduction", "axis_lengths",
                                               "dtype",  "inputs", "expect", "origin",  "cotangent"};
  for (const std::string& k : sax.top_keys()) {
    if (std::find(std::begin(kKeys), std::end(kKeys), k) == std::end(kKeys)) {
      return fail("", "unknown key " + printable(json_quote(k), 80));
    }
  }
  const auto find_field = [&](const char* key) -> const Json* {
    const auto it = root.find(key);
    return it == root.end() ? nullptr : &*it;
  };

  Case c;
  const Json* op = find_field("op");
  if (!op) return fail("", "missing field \"op\"");
  // A VJP case names its forward op in "of" and carries a "cotangent" (CASES.md).
  const bool vjp = *op == "vjp";
  const Json* forward = vjp ? find_field("of") : op;
  const std::string forward_field = vjp ? "of" : "op";
  if (vjp && !forward) return fail("", "missing field \"of\" (a vjp case names its forward op: \"einsum\" or \"reduce\")");
  if (!vjp && find_field("of")) return fail("of", "only a vjp case has \"of\" (this case's op is " + spelled(*op) + ")");
  if (!vjp && find_field("cotangent")) {
    return fail("cotangent", "only a vjp case has a cotangent (this case's op is " + spelled(*op) + ")");
  }
  if (vjp && !find_field("cotangent")) return fail("", "missing field \"cotangent\" (a vjp case carries one)");
  if (*forward == "einsum") {
    c.op = Op::einsum;
  } else if (*forward == "reduce") {
    c.op = Op::reduce;
  } else {
    return fail(forward_field, "unknown op " + spelled(*forward) +
                                   (vjp ? " (expected \"einsum\" or \"reduce\")"
                                        : " (expected \"einsum\", \"reduce\" or \"vjp\")"));
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
      const std::string at = "axis_lengths[" + printable(json_quote(name), 80) + "]";
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

  if (const Json* cotangent = find_field("cotangent")) {
    if (cotangent->is_object() && cotangent->contains("layout")) {
      return fail("cotangent", "unknown key \"layout\" (a cotangent is logical values only)");
    }
    std::optional<InputLayout> no_layout;
    // Index past the inputs: the SAX pass packs only `inputs` values, so this reads the DOM.
    auto t = read_input(*cotangent, c.dtype, "cotangent", no_layout, inputs->size());
    if (!t) return std::move(t).error();
    c.cotangent = std::move(*t);
  }

  if (const Json* expect = find_field("expect")) {
    if (!expect->is_object())
      return fail("expect", "must be an object {\"error\": ...}, got " + describe(*expect));
    for (const auto& [k, v] : expect->items()) {
      if (k != "error") return fail("expect", "unknown key " + printable(json_quote(k), 80));
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
        return fail("origin[" + printable(json_quote(k), 80) + "]", "must be a string, got " + describe(v));
      }
      c.origin.emplace_back(k, v.get<std::string>());
    }
  }
  // `origin.profile`: the precision profile a stored verdict is judged under (CASES.md); a value
  // that names none, or none valid for the case's dtype, would make its replay meaningless.
  for (const auto& [k, v] : c.origin) {
    if (k != "profile") continue;
    const auto p = profile_from_text(v);
    if (!p) {
      return fail("origin.profile", "must be a precision profile (f16, bf16, f32 or f64, optionally +tf32), got " +
                                        printable(json_quote(v), 80));
    }
    if (const std::string why = profile_problem(c.dtype, *p); !why.empty()) {
      return fail("origin.profile", printable(json_quote(v), 80) + " is not valid for " +
                                        std::string(dtype_name(c.dtype)) + ": " + why);
    }
  }
  return c;
}

}  // namespace

std::string origin_value(const Case& c, std::string_view key) {
  for (const auto& [k, v] : c.origin) {
    if (k == key) return v;
  }
  return {};
}

std::optional<PrecisionProfile> origin_profile(const Case& c) {
  for (const auto& [k, v] : c.origin) {
    if (k == "profile") return profile_from_text(v);
  }
  return std::nullopt;
}

Result<Case> read_case(std::string_view text, std::string_view file_name, const Limits& limits) {
  // The boundary: nothing thrown inside (allocation failure, a library error) escapes.
  try {
    return Reader(file_name, limits).read(text);
  } catch (const std::bad_alloc&) {
    return make_diagnostic(Code::sizeLimitExceeded,
                           std::string(file_name) + ": out of memory while reading the case");
  } catch (const std::exception& e) {
    return make_diagnostic(Code::malformedCase, std::string(file_name) + ": " + printable(e.what(), 300));
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
    return make_diagnostic(Code::malformedCase, "cannot read a case file: " + printable(e.what(), 300));
  }
}

}  // namespace einfuzz
