// The ordered judge and the verdict names.
#include "einfuzz/harness/judge.hpp"

#include <cmath>
#include <cstdio>
#include <cstring>

#include "einfuzz/core/case.hpp"

namespace einfuzz {

std::string verdict_name(VerdictKind kind) {
  switch (kind) {
    case VerdictKind::pass: return "pass";
    case VerdictKind::pass_bitwise: return "pass(bitwise)";
    case VerdictKind::indeterminate: return "indeterminate";
    case VerdictKind::note_signed_zero: return "note(signed-zero)";
    case VerdictKind::mismatch_value: return "mismatch(value)";
    case VerdictKind::mismatch_special: return "mismatch(special)";
    case VerdictKind::mismatch_shape: return "mismatch(shape)";
    case VerdictKind::reject_disagree: return "reject-disagree";
    case VerdictKind::crash: return "crash";
    case VerdictKind::timeout: return "timeout";
    case VerdictKind::input_modified: return "input-modified";
    case VerdictKind::unsupported: return "unsupported";
  }
  return "?";
}

bool is_failure(VerdictKind kind) noexcept {
  switch (kind) {
    case VerdictKind::pass:
    case VerdictKind::pass_bitwise:
    case VerdictKind::indeterminate:
    case VerdictKind::note_signed_zero:
    case VerdictKind::unsupported:
      return false;
    default:
      return true;
  }
}

std::string describe_value(const Tensor& t, std::int64_t flat_index) {
  std::string out = format_value(t, flat_index);
  char buf[64] = {};
  visit_dtype(t.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T v = t.values<T>()[static_cast<std::size_t>(flat_index)];
    if constexpr (std::is_same_v<T, float>) {
      if (std::isfinite(v)) std::snprintf(buf, sizeof buf, "%.9g", static_cast<double>(v));
    } else if constexpr (std::is_same_v<T, double>) {
      if (std::isfinite(v)) std::snprintf(buf, sizeof buf, "%.17g", v);
    }
  });
  if (buf[0] != '\0') out += std::string(" (") + buf + ")";
  return out;
}

namespace {

std::vector<std::int64_t> coordinates(std::int64_t flat, const Shape& shape) {
  std::vector<std::int64_t> c(shape.size());
  for (std::size_t i = shape.size(); i-- > 0;) {
    c[i] = flat % shape[i];
    flat /= shape[i];
  }
  return c;
}

template <class T>
bool same_element(T a, T b, bool strict_nan) {
  if constexpr (std::is_floating_point_v<T>) {
    if (!strict_nan && std::isnan(a) && std::isnan(b)) return true;
    return std::memcmp(&a, &b, sizeof(T)) == 0;
  } else {
    return a == b;
  }
}

}  // namespace

Verdict judge_ordered(const Tensor& expected, const Tensor& actual, const OrderedJudgeOptions& options) {
  Verdict v;
  if (expected.dtype() != actual.dtype() || expected.shape() != actual.shape()) {
    v.kind = VerdictKind::mismatch_shape;
    v.detail = "expected " + std::string(dtype_name(expected.dtype())) + " " + format_shape(expected.shape()) +
               ", got " + std::string(dtype_name(actual.dtype())) + " " + format_shape(actual.shape());
    return v;
  }
  visit_dtype(expected.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const auto e = expected.values<T>();
    const auto a = actual.values<T>();
    for (std::size_t i = 0; i < e.size(); ++i) {
      if (same_element(e[i], a[i], options.strict_nan_payload)) continue;
      if (v.differing++ == 0) {
        const auto flat = static_cast<std::int64_t>(i);
        v.first = ElementEvidence{flat, coordinates(flat, expected.shape()), describe_value(expected, flat),
                                  describe_value(actual, flat)};
      }
    }
  });
  v.kind = v.differing == 0 ? VerdictKind::pass_bitwise : VerdictKind::mismatch_value;
  if (v.differing) v.detail = std::to_string(v.differing) + " of " + std::to_string(expected.size()) + " elements differ";
  return v;
}

}  // namespace einfuzz
