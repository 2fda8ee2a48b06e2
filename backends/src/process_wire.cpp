// The PROTOCOL A wire format (process_wire.hpp): requests encoded, hellos and responses decoded,
// stdout lines checked before they are parsed. No process, no I/O.
#include "process_wire.hpp"

#include <algorithm>
#include <cstring>
#include <limits>
#include <set>
#include <utility>

#include "einfuzz/backends/process.hpp"
#include "einfuzz/core/check_case.hpp"
#include "einfuzz/core/check_reduce.hpp"
#include "einfuzz/core/precision_text.hpp"
#include "einfuzz/core/text.hpp"

namespace einfuzz::wire {

int json_depth(std::string_view s) {
  int depth = 0;
  int max_depth = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      max_depth = std::max(max_depth, ++depth);
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return max_depth;
}

DType output_dtype(const Case& c) {
  if (c.op == Op::reduce && c.reduction && (*c.reduction == "any" || *c.reduction == "all")) return DType::boolean;
  return c.dtype;
}

std::variant<Json, std::string> parse_line(std::string line, std::size_t max_line_bytes) {
  if (!line.empty() && line.back() == '\r') line.pop_back();
  if (line.size() > max_line_bytes) {
    return "output flooding: a line of " + std::to_string(line.size()) + " bytes (limit " +
           std::to_string(max_line_bytes) + ")";
  }
  if (!is_valid_utf8(line)) return "a line that is not UTF-8: \"" + printable(line) + "\"";
  if (json_depth(line) > kMaxJsonDepth) return "JSON nested deeper than " + std::to_string(kMaxJsonDepth) + " levels";
  Json j = Json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return "malformed JSON: \"" + printable(line) + "\"";
  return j;
}

namespace {

/// The float dtype a hello key or value names, or why not (`what` says which field it is).
std::variant<DType, std::string> float_dtype_named(const Json& name, const std::string& what) {
  if (!name.is_string()) return what + " must be a dtype name (a string)";
  const std::string s = name.get<std::string>();
  const auto d = dtype_from_name(s);
  if (!d) return what + " names the unknown dtype " + json_quote(printable(s));
  if (!is_float(*d)) return what + " names " + json_quote(s) + ", which is not a float dtype";
  return *d;
}

}  // namespace

std::optional<std::string> decode_profiles(const Json& j, Capabilities& c) {
  // Unlike unknown dtypes in "dtypes", a profile the harness cannot read is a fault: judging the
  // backend under a profile other than the one it declared would be wrong in both directions.
  if (const auto it = j.find("accumulate"); it != j.end()) {
    if (!it->is_object()) return std::string("\"accumulate\" must be an object (dtype -> format)");
    for (const auto& [key, value] : it->items()) {
      auto d = float_dtype_named(Json(key), "an \"accumulate\" key");
      if (auto* why = std::get_if<std::string>(&d)) return *why;
      auto a = float_dtype_named(value, "\"accumulate\"." + printable(key));
      if (auto* why = std::get_if<std::string>(&a)) return *why;
      c.accumulate.emplace_back(std::get<DType>(d), std::get<DType>(a));
    }
  }
  if (const auto it = j.find("round_inputs"); it != j.end()) {
    if (!it->is_object()) return std::string("\"round_inputs\" must be an object (dtype -> \"tf32\")");
    for (const auto& [key, value] : it->items()) {
      auto d = float_dtype_named(Json(key), "a \"round_inputs\" key");
      if (auto* why = std::get_if<std::string>(&d)) return *why;
      const auto r = value.is_string() ? input_rounding_from_name(value.get<std::string>()) : std::nullopt;
      if (!r) {
        return "\"round_inputs\"." + printable(key) + " must be \"tf32\" or \"none\", got " +
               printable(value.dump(), 120);
      }
      c.round_inputs.emplace_back(std::get<DType>(d), *r);
    }
  }
  // A declaration ORACLE §8 gives no bound for (an accumulator narrower than the dtype, TF32 for
  // f64) is refused here, with the backend, rather than charged to each case it would be judged on.
  const auto refuse_invalid = [&](DType d) -> std::optional<std::string> {
    const PrecisionProfile p = c.profile(d);
    if (const std::string why = profile_problem(d, p); !why.empty()) {
      return "the declared profile " + profile_text(p) + " for " + std::string(dtype_name(d)) +
             " (\"accumulate\", \"round_inputs\") is not a valid precision profile: " + why;
    }
    return std::nullopt;
  };
  for (const auto& [d, a] : c.accumulate) {
    if (auto why = refuse_invalid(d)) return why;
  }
  for (const auto& [d, r] : c.round_inputs) {
    if (auto why = refuse_invalid(d)) return why;
  }
  // ORACLE §8: the profiles are any-order backends' declarations. An ordered backend is judged
  // bitwise against the fold in the dtype (SEMANTICS §6); a wider accumulator or rounded inputs
  // there would be a declaration nothing judges, so it is refused rather than ignored.
  if (c.semantics == Semantics::ordered) {
    std::vector<DType> declared;
    for (const auto& [d, a] : c.accumulate) declared.push_back(d);
    for (const auto& [d, r] : c.round_inputs) declared.push_back(d);
    for (const DType d : declared) {
      if (const PrecisionProfile p = c.profile(d); !is_storage_profile(d, p)) {
        return "an ordered backend computes every + and · in the dtype (SEMANTICS §6), so it cannot declare the "
               "precision profile " + profile_text(p) + " for " + std::string(dtype_name(d)) +
               " (ORACLE §8: \"accumulate\" and \"round_inputs\" are any-order backends' declarations)";
      }
    }
  }
  return std::nullopt;
}

bool is_hello_answer(const Json& j) { return j.is_object() && j.contains("protocol") && !j.contains("id"); }

std::variant<Capabilities, std::string> decode_hello(const Json& j, const std::string& command, std::string& notation) {
  if (!j.is_object()) return std::string("the answer is not a JSON object");
  const auto str = [&](const char* key, std::string& out) -> std::optional<std::string> {
    const auto it = j.find(key);
    if (it == j.end()) return std::nullopt;
    if (!it->is_string()) return std::string(std::string("\"") + key + "\" must be a string");
    out = it->get<std::string>();
    return std::nullopt;
  };
  std::string protocol;
  if (auto f = str("protocol", protocol)) return *f;
  if (protocol != kProtocol) {
    return std::string("\"protocol\" must be " + json_quote(kProtocol) + ", got " + json_quote(printable(protocol)));
  }
  Capabilities c;
  std::string backend_name = command;
  std::string version;
  if (auto f = str("name", backend_name)) return *f;
  if (auto f = str("version", version)) return *f;
  const auto list = [&](const char* key, std::vector<std::string>& out) -> std::optional<std::string> {
    const auto it = j.find(key);
    if (it == j.end()) return std::nullopt;
    if (!it->is_array()) return std::string(std::string("\"") + key + "\" must be an array of strings");
    out.clear();
    for (const Json& v : *it) {
      if (!v.is_string()) return std::string(std::string("\"") + key + "\" must be an array of strings");
      out.push_back(v.get<std::string>());
    }
    return std::nullopt;
  };
  std::vector<std::string> ops = {"einsum"};
  std::vector<std::string> dtypes = {"f32", "f64"};
  std::vector<std::string> reductions;
  if (auto f = list("ops", ops)) return *f;
  if (auto f = list("dtypes", dtypes)) return *f;
  if (auto f = list("reductions", reductions)) return *f;
  // Unknown names are skipped, so a backend may announce more than this harness knows.
  c.ops.clear();
  for (const auto& o : ops) {
    if (o == "einsum") c.ops.push_back(Op::einsum);
    if (o == "reduce") c.ops.push_back(Op::reduce);
    // VJPs of the ops above (PROTOCOL A §2); "vjp" is no op of its own.
    if (o == "vjp") c.vjp = true;
  }
  c.dtypes.clear();
  for (const auto& d : dtypes) {
    if (auto t = dtype_from_name(d)) c.dtypes.push_back(*t);
  }
  for (const auto& r : reductions) {
    if (reduction_from_name(r)) c.reductions.push_back(r);
  }
  std::string semantics = "any-order";
  std::string nan_profile = "propagate";
  if (auto f = str("semantics", semantics)) return *f;
  if (auto f = str("nan_profile", nan_profile)) return *f;
  if (auto f = str("notation", notation)) return *f;
  if (semantics == "ordered") {
    c.semantics = Semantics::ordered;
  } else if (semantics == "any-order") {
    c.semantics = Semantics::any_order;
  } else {
    return std::string("\"semantics\" must be \"ordered\" or \"any-order\", got " + json_quote(printable(semantics)));
  }
  if (nan_profile == "propagate") {
    c.nan_profile = NanProfile::propagate;
  } else if (nan_profile == "ignore") {
    c.nan_profile = NanProfile::ignore;
  } else if (nan_profile == "ordered") {
    c.nan_profile = NanProfile::ordered;
  } else {
    return std::string("\"nan_profile\" must be \"propagate\", \"ignore\" or \"ordered\", got " +
               json_quote(printable(nan_profile)));
  }
  std::string tie_rule = "equal-share";
  if (auto f = str("tie_rule", tie_rule)) return *f;
  if (const auto rule = tie_rule_from_name(tie_rule)) {
    c.tie_rule = *rule;
  } else {
    return std::string("\"tie_rule\" must be \"equal-share\", \"one\" or \"all\", got " + json_quote(printable(tie_rule)));
  }
  if (notation != "einops" && notation != "numpy") {
    return std::string("\"notation\" must be \"einops\" or \"numpy\", got " + json_quote(printable(notation)));
  }
  if (auto f = decode_profiles(j, c)) return *f;
  for (const auto& [key, field] : {std::pair{"factoring", &c.factoring}, std::pair{"strided_inputs", &c.strided_inputs}}) {
    const auto it = j.find(key);
    if (it == j.end()) continue;
    if (!it->is_boolean()) return std::string(std::string("\"") + key + "\" must be true or false");
    *field = it->get<bool>();
  }
  c.version = backend_text(backend_name + (version.empty() ? "" : " " + version), 200);
  return c;
}

std::string request_line(const Case& c, std::int64_t id, const std::vector<std::optional<Tensor>>& storages) {
  std::string s = "{\"id\":" + std::to_string(id) + ",\"op\":" +
                  (c.is_vjp() ? "\"vjp\",\"of\":" + json_quote(op_name(c.op)) : json_quote(op_name(c.op))) +
                  ",\"pattern\":" + json_quote(c.pattern);
  if (c.op == Op::einsum) {
    std::vector<Shape> shapes;
    for (const Tensor& t : c.inputs) shapes.push_back(t.shape());
    const auto sub = numpy_subscripts(c.pattern, shapes);
    s += ",\"subscripts\":" + (sub ? json_quote(*sub) : std::string("null"));
  } else {
    s += ",\"reduction\":" + (c.reduction ? json_quote(*c.reduction) : std::string("null"));
    // Written by hand so duplicate names reach the backend (a `duplicateAxisLength` case).
    s += ",\"axis_lengths\":{";
    for (std::size_t i = 0; i < c.axis_lengths.size(); ++i) {
      if (i) s += ',';
      s += json_quote(c.axis_lengths[i].first) + ":" + std::to_string(c.axis_lengths[i].second);
    }
    s += "}";
  }
  s += ",\"dtype\":" + json_quote(dtype_name(c.dtype)) + ",\"inputs\":[";
  for (std::size_t k = 0; k < c.inputs.size(); ++k) {
    if (k) s += ',';
    s += "{\"shape\":" + Json(c.inputs[k].shape()).dump();
    if (storages[k]) {
      const InputLayout& l = *c.layouts[k];
      s += ",\"layout\":{\"strides\":" + Json(l.strides).dump() + ",\"offset\":" + std::to_string(l.offset) +
           ",\"storage\":" + std::to_string(l.storage) + "}";
    }
    s += "}";
  }
  if (c.is_vjp()) s += std::string(c.inputs.empty() ? "" : ",") + "{\"shape\":" + Json(c.cotangent->shape()).dump() + "}";
  return s + "]}\n";
}

/// Why an answer of `shape` to `c` is refused before anything is allocated for it: more elements
/// than 2^16 and than the case's output has (a VJP: its inputs together). PROTOCOL A §4: nothing
/// the backend sends may make the harness allocate without bound; the size limits alone let a
/// 48-byte line claim 2 GiB for a 2×4 output. The case is checked only for such a claim.
std::optional<std::string> oversized_answer(const Case& c, const Shape& shape, const Limits& limits) {
  constexpr std::int64_t kAlways = std::int64_t{1} << 16;  // elements any answer may announce
  const std::int64_t announced = element_count(shape);      // within the limits (decode_response)
  if (announced <= kAlways) return std::nullopt;
  std::int64_t needed = 0;
  if (c.is_vjp()) {
    for (const Tensor& t : c.inputs) needed += t.size();
  } else if (const auto checked = check_case(c, limits)) {
    needed = std::visit([](const auto& x) { return x.output_size; }, *checked);
  }
  if (announced <= needed) return std::nullopt;
  return "an answer of " + std::to_string(announced) + " elements (shape " + format_shape(shape) +
         ") to a case whose answer has " + std::to_string(needed) +
         ": refused unread (an answer may announce at most 65536 elements or the case's own count)";
}

std::optional<std::string> overranked_answer(const Case& c, std::span<const Shape> shapes) {
  const std::size_t most = answer_rank_bound(c);
  for (const Shape& s : shapes) {
    if (s.size() > most) {
      return "an answer of rank " + std::to_string(s.size()) + " to a case no answer to which has more than " +
             std::to_string(most) + " dimensions: refused unread";
    }
  }
  return std::nullopt;
}

std::optional<std::string> not_describable_dtypes(const Case& c) {
  // One dtype per request: every tensor's bytes are read at that dtype's size.
  for (const Tensor& t : c.inputs) {
    if (t.dtype() != c.dtype) {
      return "an input of dtype " + std::string(dtype_name(t.dtype())) + " in a " + std::string(dtype_name(c.dtype)) +
             " case: a request has one dtype for all its tensors (PROTOCOL A §2: not sent)";
    }
  }
  if (c.cotangent && c.cotangent->dtype() != c.dtype) {
    return "a cotangent of dtype " + std::string(dtype_name(c.cotangent->dtype())) + " in a " +
           std::string(dtype_name(c.dtype)) + " case: a request has one dtype for all its tensors (PROTOCOL A §2: not sent)";
  }
  return std::nullopt;
}

std::optional<std::string> not_describable(const Case& c) {
  if (auto why = not_describable_dtypes(c)) return why;
  if (c.op != Op::reduce) return std::nullopt;
  if (c.inputs.size() != 1) {
    return "a reduce request carries exactly one input and this case has " + std::to_string(c.inputs.size()) +
           " (PROTOCOL A §2: not sent)";
  }
  std::set<std::string_view> names;
  for (const auto& [axis, length] : c.axis_lengths) {
    if (!names.insert(axis).second) {
      return "the supplied axis lengths repeat the name " + json_quote(printable(axis)) +
             ": a JSON object keeps one of them, so the backend could never see the repetition "
             "(PROTOCOL A §2: not sent)";
    }
  }
  return std::nullopt;
}

namespace {

/// A JSON array of lengths as a Shape, or nullopt.
std::optional<Shape> lengths_of(const Json& a) {
  if (!a.is_array()) return std::nullopt;
  Shape shape;
  for (const Json& d : a) {
    if (!d.is_number_integer() || d.get<std::int64_t>() < 0 ||
        (d.is_number_unsigned() &&
         d.get<std::uint64_t>() > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))) {
      return std::nullopt;
    }
    shape.push_back(d.get<std::int64_t>());
  }
  return shape;
}

/// The `"shapes"` of an ok response to a VJP of `count` forward inputs, or why not.
std::variant<Payload, BadResponse> decode_shapes(const Json& j, std::size_t count, const Limits& limits) {
  const auto sh = j.find("shapes");
  if (sh == j.end() || !sh->is_array()) return BadResponse{"an ok response to a vjp request without a \"shapes\" array"};
  if (sh->size() != count) {
    return BadResponse{"\"shapes\" has " + std::to_string(sh->size()) + " entries, the vjp request " +
                       std::to_string(count) + " forward inputs (one cotangent each)"};
  }
  Payload p;
  std::int64_t total = 0;
  for (std::size_t m = 0; m < count; ++m) {
    auto shape = lengths_of((*sh)[m]);
    if (!shape) return BadResponse{"\"shapes\" entry " + std::to_string(m) + " " + printable((*sh)[m].dump(), 120) +
                                   " is not an array of lengths"};
    // Each shape, then their running total, within the limits before anything is allocated.
    auto size = check_tensor_size(*shape, limits, "the response shape " + std::to_string(m));
    if (!size) return BadResponse{"huge shape " + printable((*sh)[m].dump(), 120) + ": " + size.error().message};
    total += *size;
    if (auto all = check_tensor_size(Shape{total}, limits, "the response's tensors together"); !all) {
      return BadResponse{"huge shapes " + printable(sh->dump(), 120) + ": " + all.error().message};
    }
    p.shapes.push_back(std::move(*shape));
  }
  p.shape = Shape{total};
  return p;
}

}  // namespace

Gradients split_gradients(const Tensor& payload, const std::vector<Shape>& shapes) {
  Gradients out;
  const std::size_t esize = dtype_size(payload.dtype());
  std::size_t at = 0;
  for (const Shape& shape : shapes) {
    Tensor t(payload.dtype(), shape);
    const auto dst = t.bytes();
    if (!dst.empty()) {
      std::memcpy(const_cast<std::byte*>(dst.data()), payload.bytes().data() + at, dst.size());
    }
    at += static_cast<std::size_t>(t.size()) * esize;
    out.tensors.push_back(std::move(t));
  }
  return out;
}

Response decode_response(const Json& j, std::int64_t id, std::int64_t first_id, DType out_dtype, const Limits& limits,
                         std::optional<std::size_t> gradients) {
  const auto bad = [](std::string what) { return BadResponse{std::move(what)}; };
  if (!j.is_object()) return bad("the response is not a JSON object: \"" + printable(j.dump()) + "\"");
  const auto idit = j.find("id");
  if (idit != j.end() && idit->is_number_integer() && idit->get<std::int64_t>() < id &&
      idit->get<std::int64_t>() >= first_id) {
    return StaleResponse{idit->get<std::int64_t>()};
  }
  if (idit == j.end() || !idit->is_number_integer() || idit->get<std::int64_t>() != id) {
    return bad("wrong id: expected " + std::to_string(id) + ", got " +
               (idit == j.end() ? std::string("none") : printable(idit->dump())));
  }
  const auto st = j.find("status");
  if (st == j.end() || !st->is_string()) return bad("\"status\" missing or not a string");
  const std::string status = st->get<std::string>();
  std::string message;
  if (const auto m = j.find("message"); m != j.end() && m->is_string()) message = m->get<std::string>();
  // Cut at a character boundary, control characters escaped: it is printed and reported as is.
  message = backend_text(message, 2000);
  if (status == "error") {
    std::string code;
    if (const auto cd = j.find("code"); cd != j.end() && !cd->is_null()) {
      // Present, it must be a diagnostic code (a string): a number here is not "no code", which
      // would agree with any rejection.
      if (!cd->is_string()) return bad("\"code\" must be a string, got " + printable(cd->dump(), 60));
      code = backend_text(cd->get<std::string>(), 200);
    }
    return Rejected{code, message};
  }
  if (status == "unsupported") return Unsupported{message};
  if (status != "ok") return bad("unknown status " + json_quote(printable(status)));
  if (const auto dt = j.find("dtype"); dt != j.end() && (!dt->is_string() || *dt != dtype_name(out_dtype))) {
    return bad("\"dtype\" " + printable(dt->dump()) + " is not the expected " + std::string(dtype_name(out_dtype)));
  }
  if (gradients) {
    auto p = decode_shapes(j, *gradients, limits);
    if (auto* b = std::get_if<BadResponse>(&p)) return std::move(*b);
    return std::get<Payload>(std::move(p));
  }
  const auto sh = j.find("shape");
  if (sh == j.end() || !sh->is_array()) return bad("an ok response without a \"shape\" array");
  Shape shape;
  for (const Json& d : *sh) {
    if (!d.is_number_integer() || d.get<std::int64_t>() < 0 ||
        (d.is_number_unsigned() &&
         d.get<std::uint64_t>() > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))) {
      return bad("\"shape\" " + printable(sh->dump()) + " has an entry that is not a length");
    }
    shape.push_back(d.get<std::int64_t>());
  }
  // The limits decide before anything proportional to the shape is allocated.
  if (auto size = check_tensor_size(shape, limits, "the response shape"); !size) {
    return bad("huge shape " + printable(sh->dump(), 120) + ": " + size.error().message);
  }
  return Payload{std::move(shape), {}};
}

}  // namespace einfuzz::wire

namespace einfuzz {

bool is_valid_utf8(std::string_view s) noexcept {
  std::size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      ++i;
      continue;
    }
    int extra = 0;
    std::uint32_t cp = 0;
    if (c >= 0xc2 && c <= 0xdf) {
      extra = 1;
      cp = c & 0x1f;
    } else if (c >= 0xe0 && c <= 0xef) {
      extra = 2;
      cp = c & 0x0f;
    } else if (c >= 0xf0 && c <= 0xf4) {
      extra = 3;
      cp = c & 0x07;
    } else {
      return false;
    }
    if (i + static_cast<std::size_t>(extra) >= s.size()) return false;
    for (int k = 1; k <= extra; ++k) {
      const auto d = static_cast<unsigned char>(s[i + static_cast<std::size_t>(k)]);
      if ((d & 0xc0) != 0x80) return false;
      cp = (cp << 6) | (d & 0x3f);
    }
    const std::uint32_t min_cp[] = {0, 0x80, 0x800, 0x10000};
    if (cp < min_cp[extra] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return false;
    i += static_cast<std::size_t>(extra) + 1;
  }
  return true;
}

}  // namespace einfuzz
