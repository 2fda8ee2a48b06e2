// The C++ reproducers of `einfuzz repro`: xtensor and Eigen called with the same expressions as
// backends/src/xtensor.cpp and backends/src/eigen.cpp, specialised to the case's axes (the Eigen
// expressions themselves: repro_eigen.cpp); the inputs, the call and the check of the result.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <initializer_list>
#include <numeric>

#include "einfuzz/reference/exact.hpp"
#include "repro_detail.hpp"

namespace einfuzz::detail {
namespace {

/// `s` as a C++ string literal; `?` escaped too, so no trigraph can form.
std::string c_str(const std::string& s) { return quoted_literal(s, '"', "\\%03o", "?"); }

/// A value of type T as a C++ expression: hex-float literals, INF, from_bits for NaNs (exact sign
/// and payload), integer literals that survive the most negative value.
template <class T>
std::string c_value(T v) {
  if constexpr (is_float_type_v<T>) {
    if (std::isnan(v)) {
      if constexpr (std::is_same_v<T, float>) return "from_bits<float>(UINT32_C(" + bits_hex(v) + "))";
      return "from_bits<double>(UINT64_C(" + bits_hex(v) + "))";
    }
    if (std::isinf(v)) {
      const std::string inf = std::is_same_v<T, float> ? "std::numeric_limits<float>::infinity()" : "kInf";
      return v > 0 ? inf : "-" + inf;
    }
    char buf[64];
    std::snprintf(buf, sizeof buf, "%a", static_cast<double>(v));
    return std::string(buf) + (std::is_same_v<T, float> ? "f" : "");
  } else if constexpr (std::is_same_v<T, std::int64_t>) {
    if (v == std::numeric_limits<std::int64_t>::min()) return "std::numeric_limits<std::int64_t>::min()";
    return "INT64_C(" + std::to_string(v) + ")";
  } else if constexpr (std::is_same_v<T, std::int32_t>) {
    if (v == std::numeric_limits<std::int32_t>::min()) return "std::numeric_limits<std::int32_t>::min()";
    return std::to_string(v);
  } else {
    return v ? "1" : "0";
  }
}

std::string c_values(const Tensor& t) {
  return visit_dtype(t.dtype(), [&](auto tag) {
    using T = decltype(tag);
    std::string out = "{";
    const auto v = t.values<T>();
    for (std::size_t i = 0; i < v.size(); ++i) {
      out += (i ? ", " : "") + c_value(v[i]);
      if (i % 6 == 5 && i + 1 < v.size()) out += "\n      ";
    }
    return out + "}";
  });
}

const char* c_type(DType d) { return spelling(d).cxx; }

/// The adapters compute integers unsigned (same bits, no undefined overflow).
const char* arith_type(DType d) {
  switch (d) {
    case DType::i32: return "std::uint32_t";
    case DType::i64: return "std::uint64_t";
    default: return c_type(d);
  }
}

/// For `output` (distinct values): where each entry sits among them sorted (xtensor.cpp).
std::vector<std::size_t> rank_permutation(const std::vector<int>& output) {
  std::vector<int> sorted = output;
  std::sort(sorted.begin(), sorted.end());
  std::vector<std::size_t> perm;
  for (int a : output) {
    perm.push_back(static_cast<std::size_t>(std::lower_bound(sorted.begin(), sorted.end(), a) - sorted.begin()));
  }
  return perm;
}

std::vector<std::size_t> argsort(const std::vector<int>& order) {
  std::vector<std::size_t> perm(order.size());
  std::iota(perm.begin(), perm.end(), std::size_t{0});
  std::sort(perm.begin(), perm.end(), [&](std::size_t x, std::size_t y) { return order[x] < order[y]; });
  return perm;
}

std::string inputs_code(const Case& c) {
  std::string s;
  for (std::size_t k = 0; k < c.inputs.size(); ++k) {
    const Tensor& t = c.inputs[k];
    const std::string values = is_half(t.dtype()) ? bits16_list(t, "from_bits16<T>({", "})", 8, "      ") : c_values(t);
    s += "  const std::vector<T> in" + std::to_string(k) + " = " + values + ";  // shape " + format_shape(t.shape()) + "\n";
  }
  return s;
}

// ---------------------------------------------------------------------------------------------
// xtensor

Result<std::string> xtensor_einsum(const CheckedEinsum& e) {
  if (e.output_size == 0 || e.contraction_size == 0) {
    return not_reproducible("the xtensor adapter answers an empty output or an empty contraction itself (+0), "
                            "without calling xtensor: nothing of xtensor to reproduce");
  }
  std::string s;
  const std::size_t rank = e.axes.size();
  std::vector<std::string> views;
  for (std::size_t m = 0; m < e.operands.size(); ++m) {
    const std::string k = std::to_string(m);
    std::vector<int> axes = e.operands[m].axes;
    std::vector<std::size_t> shape(e.operands[m].shape.begin(), e.operands[m].shape.end());
    std::string expr = "xt::adapt(reinterpret_cast<const A*>(in" + k + ".data()), in" + k +
                       ".size(), xt::no_ownership(), std::vector<std::size_t>" + c_list(shape) + ")";
    // Repeated labels: xt::diagonal, which moves the diagonal to the last dimension (take_diagonals).
    for (int step = 0;; ++step) {
      std::size_t d1 = 0, d2 = 0;
      for (std::size_t i = 0; i < axes.size() && d2 == 0; ++i) {
        for (std::size_t j = i + 1; j < axes.size(); ++j) {
          if (axes[i] == axes[j]) {
            d1 = i;
            d2 = j;
            break;
          }
        }
      }
      if (d2 == 0) break;
      const std::string name = "diag" + k + "_" + std::to_string(step);
      s += "  xt::xarray<A> " + name + " = xt::diagonal(" + expr + ", 0, " + std::to_string(d1) + ", " +
           std::to_string(d2) + ");\n";
      const int axis = axes[d1];
      const std::size_t length = shape[d1];
      axes.erase(axes.begin() + static_cast<std::ptrdiff_t>(d2));
      axes.erase(axes.begin() + static_cast<std::ptrdiff_t>(d1));
      shape.erase(shape.begin() + static_cast<std::ptrdiff_t>(d2));
      shape.erase(shape.begin() + static_cast<std::ptrdiff_t>(d1));
      axes.push_back(axis);
      shape.push_back(length);
      expr = "xt::adapt(" + name + ".data(), " + name + ".size(), xt::no_ownership(), std::vector<std::size_t>" +
             c_list(shape) + ")";
    }
    // The operand over all global axes: transposed into global order, xt::newaxis where it lacks one.
    std::vector<int> sorted = axes;
    std::sort(sorted.begin(), sorted.end());
    std::string slices;
    for (std::size_t g = 0; g < rank; ++g) {
      slices += std::string(g ? ", " : "") +
                (std::binary_search(sorted.begin(), sorted.end(), static_cast<int>(g)) ? "xt::all()" : "xt::newaxis()");
    }
    s += "  xt::xstrided_slice_vector s" + k + " = {" + slices + "};\n";
    views.push_back("xt::strided_view(xt::transpose(" + expr + ", std::vector<std::size_t>" + c_list(argsort(axes)) +
                    "), s" + k + ")");
  }
  const std::vector<std::size_t> contracted(e.contracted.begin(), e.contracted.end());
  s += "  const std::vector<std::size_t> contracted = " + c_list(contracted) + ";\n";
  if (views.size() == 1) {
    s += "  xt::xarray<A> reduced = xt::sum(" + views[0] + ", contracted);\n";
  } else {
    s += "  // Left to right, one product per term: ((x0*x1)*x2)*..., the last product fused into the sum.\n";
    s += "  xt::xarray<A> acc = " + views[0] + ";\n";
    for (std::size_t m = 1; m + 1 < views.size(); ++m) s += "  acc = acc * " + views[m] + ";\n";
    s += "  xt::xarray<A> reduced = xt::sum(acc * " + views.back() + ", contracted);\n";
  }
  const std::vector<std::size_t> out_shape(e.output_shape.begin(), e.output_shape.end());
  s += "  auto dst = xt::adapt(reinterpret_cast<A*>(out.data()), out.size(), xt::no_ownership(), "
       "std::vector<std::size_t>" + c_list(out_shape) + ");\n";
  s += "  dst = xt::transpose(reduced, std::vector<std::size_t>" + c_list(rank_permutation(e.output)) + ");\n";
  return s;
}

Result<std::string> xtensor_reduce(const CheckedReduce& r) {
  if (r.output_size == 0 || r.fibre_size == 0) {
    return not_reproducible("the xtensor adapter answers an empty output or an empty fibre itself (the kind's "
                            "identity), without calling xtensor: nothing of xtensor to reproduce");
  }
  std::vector<std::size_t> elementary;
  for (const ElementaryAxis& a : r.axes) elementary.push_back(static_cast<std::size_t>(a.length));
  std::vector<int> kept;
  for (const auto& group : r.output_groups) kept.insert(kept.end(), group.begin(), group.end());
  const std::vector<std::size_t> reduced(r.reduced.begin(), r.reduced.end());
  const std::vector<std::size_t> out_shape(r.output_shape.begin(), r.output_shape.end());
  std::string s;
  s += "  const std::vector<std::size_t> elementary = " + c_list(elementary) + ";  // elementary axes, input order\n";
  s += "  const std::vector<std::size_t> reduced = " + c_list(reduced) + ";\n";
  s += "  const std::vector<std::size_t> out_shape = " + c_list(out_shape) + ";\n";
  if (r.kind == Reduction::any || r.kind == Reduction::all) {
    std::vector<std::size_t> order(kept.begin(), kept.end());
    order.insert(order.end(), reduced.begin(), reduced.end());
    s += "  // xt::any / xt::all reduce a whole expression: each fibre laid out contiguously, one call per fibre.\n";
    s += "  const xt::xarray<std::uint8_t> fibres = xt::transpose(xt::adapt(in0.data(), in0.size(), xt::no_ownership(), "
         "elementary), std::vector<std::size_t>" + c_list(order) + ");\n";
    s += "  const std::size_t n = " + std::to_string(r.fibre_size) + ";\n";
    s += "  for (std::size_t q = 0; q < out.size(); ++q) {\n"
         "    const auto fibre = xt::adapt(fibres.data() + q * n, n, xt::no_ownership(), std::vector<std::size_t>{n});\n";
    // xtensor's any/all/sum/prod carry the reductions' own names.
    s += "    out[q] = xt::" + std::string(reduction_name(r.kind)) + "(fibre) ? 1 : 0;\n  }\n";
    return s;
  }
  s += "  const std::vector<std::size_t> perm = " + c_list(rank_permutation(kept)) + ";\n";
  switch (r.kind) {
    case Reduction::sum:
    case Reduction::prod:
      s += "  auto dst = xt::adapt(reinterpret_cast<A*>(out.data()), out.size(), xt::no_ownership(), out_shape);\n";
      s += "  const xt::xarray<A> s = xt::" + std::string(reduction_name(r.kind)) +
           "(xt::adapt(reinterpret_cast<const A*>(in0.data()), in0.size(), xt::no_ownership(), elementary), reduced);\n";
      s += "  dst = xt::transpose(s, perm);\n";
      break;
    case Reduction::min:
    case Reduction::max:
    case Reduction::mean: {
      s += "  const auto x = xt::adapt(in0.data(), in0.size(), xt::no_ownership(), elementary);\n";
      s += "  auto dst = xt::adapt(out.data(), out.size(), xt::no_ownership(), out_shape);\n";
      const std::string call = r.kind == Reduction::min   ? "xt::xarray<T>(xt::amin(x, reduced))"
                               : r.kind == Reduction::max ? "xt::xarray<T>(xt::amax(x, reduced))"
                                                          : "xt::xarray<double>(xt::mean(x, reduced))";
      if (r.kind == Reduction::mean) s += "  // xt::mean sums in T and divides in double; the adapter rounds to T.\n";
      s += "  dst = xt::cast<T>(xt::transpose(" + call + ", perm));\n";
      break;
    }
    default: break;
  }
  return s;
}

// ---------------------------------------------------------------------------------------------
// The check of the result

/// The accepted sets as a table of Accept<C>, C the type results are compared in (`c_name`).
template <class C>
std::string accept_table(const Requirement& req, const std::string& c_name) {
  std::string s = "  // Per output element (row-major): NaN, +Inf, -Inf accepted; finite results: 0 none, 1 any,\n"
                  "  // 2 lo <= r <= hi, with the exact ends rounded inward to " + c_name + " (for a result that is a\n"
                  "  // " + c_name + " that decides membership exactly); the sign a zero must have (0 either, 1 +0, -1 -0);\n"
                  "  // the rule.\n";
  s += "  const std::vector<Accept<" + c_name + ">> accept = {\n";
  for (std::size_t i = 0; i < req.accepted.size(); ++i) {
    const AcceptedSet& a = req.accepted[i];
    const bool interval = a.finite == AcceptedSet::Finite::interval;
    const C lo = interval ? a.low.round_quotient<C>(a.divisor, reference::Rounding::up) : C(0);
    const C hi = interval ? a.high.round_quotient<C>(a.divisor, reference::Rounding::down) : C(0);
    const int finite = a.finite == AcceptedSet::Finite::none ? 0 : a.finite == AcceptedSet::Finite::any ? 1 : 2;
    s += "      {" + std::string(a.nan ? "true" : "false") + ", " + (a.pos_inf ? "true" : "false") + ", " +
         (a.neg_inf ? "true" : "false") + ", " + std::to_string(finite) + ", " + c_value(lo) + ", " + c_value(hi) + ", " +
         (!a.zero_negative ? "0" : *a.zero_negative ? "-1" : "1") + ",\n       " + c_str(req.described[i]) + "},\n";
  }
  return s + "  };\n";
}

std::string check_code(const Requirement& req, DType out_dtype) {
  std::string s;
  s += "  std::printf(\"%s returns shape " + format_shape(req.shape) + ", dtype " + std::string(dtype_name(out_dtype)) +
       " (the adapter's output buffer)\\n\", kLibrary);\n";
  s += "  std::size_t failing = 0;\n";
  if (req.exact) {
    s += "  // integers and bools are exact: the one correct result, row-major\n";
    s += "  const std::vector<T> expected = " + c_values(*req.exact) + ";\n";
    s += "  for (std::size_t i = 0; i < out.size(); ++i) {\n"
         "    const bool ok = out[i] == expected[i];\n"
         "    failing += !ok;\n"
         "    if ((!ok || out.size() <= 16) && failing <= 16)\n"
         "      std::printf(\"element %zu (row-major): %s %lld; required: %lld%s\\n\", i, kLibrary, static_cast<long long>(out[i]),\n"
         "                  static_cast<long long>(expected[i]), ok ? \"\" : \"   <-- DIVERGENCE\");\n"
         "  }\n";
  } else {
    if (is_half(out_dtype)) {
      // Every f16 and bf16 value is a double: the result widened to double meets the same sets.
      s += accept_table<double>(req, "double");
      s += "  for (std::size_t i = 0; i < out.size(); ++i) {\n"
           "    const double r = static_cast<double>(out[i]);  // exact\n"
           "    const bool ok = accepts(accept[i], r);\n"
           "    failing += !ok;\n"
           "    if ((!ok || out.size() <= 16) && failing <= 16)\n"
           "      std::printf(\"element %zu (row-major): %s %a (%.17g, bits 0x%04x); required: %s%s\\n\", i, kLibrary, r, r,\n"
           "                  static_cast<unsigned>(Eigen::numext::bit_cast<std::uint16_t>(out[i])), accept[i].text,\n"
           "                  ok ? \"\" : \"   <-- DIVERGENCE\");\n"
           "  }\n";
    } else {
      s += out_dtype == DType::f32 ? accept_table<float>(req, "T") : accept_table<double>(req, "T");
      s += "  for (std::size_t i = 0; i < out.size(); ++i) {\n"
           "    const bool ok = accepts(accept[i], out[i]);\n"
           "    failing += !ok;\n"
           "    if ((!ok || out.size() <= 16) && failing <= 16)\n"
           "      std::printf(\"element %zu (row-major): %s %a (%.17g); required: %s%s\\n\", i, kLibrary, static_cast<double>(out[i]),\n"
           "                  static_cast<double>(out[i]), accept[i].text, ok ? \"\" : \"   <-- DIVERGENCE\");\n"
           "  }\n";
    }
  }
  s += "  if (failing) {\n"
       "    std::printf(\"DIVERGENCE: %zu of %zu elements are outside what the semantics allow\\n\", failing, out.size());\n"
       "    return 1;\n  }\n"
       "  std::printf(\"no divergence: every element is what the semantics allow\\n\");\n"
       "  return 0;\n";
  return s;
}

std::string cxx_program(const ReproInput& in, const std::string& includes, const std::string& build, const std::string& library,
                        const std::string& body, DType out_dtype) {
  std::string s;
  std::size_t pos = 0;
  const std::string& header = in.header;
  while (pos <= header.size()) {
    const std::size_t nl = header.find('\n', pos);
    s += "// " + header.substr(pos, nl == std::string::npos ? std::string::npos : nl - pos) + "\n";
    if (nl == std::string::npos) break;
    pos = nl + 1;
  }
  s += "// Build and run (the flags einfuzz builds its adapters with):\n//   " + build + "\n";
  s += "#include <algorithm>\n#include <cmath>\n#include <cstdint>\n#include <cstdio>\n#include <cstring>\n"
       "#include <initializer_list>\n#include <limits>\n#include <vector>\n\n";
  s += includes + "\n";
  s += "namespace {\n\n";
  s += "constexpr const char* kLibrary = " + c_str(library) + ";\n";
  s += "constexpr double kInf = std::numeric_limits<double>::infinity();\n\n";
  s += "/// A value from its raw bits (a NaN with its exact sign and payload).\n"
       "template <class T, class B>\nT from_bits(B bits) {\n  T t;\n  static_assert(sizeof t == sizeof bits);\n"
       "  std::memcpy(&t, &bits, sizeof t);\n  return t;\n}\n\n";
  if (is_half(in.c.dtype)) {
    s += "/// Eigen's 16-bit values from their bit patterns (exact: the same encoding).\n"
         "template <class T>\nstd::vector<T> from_bits16(std::initializer_list<std::uint16_t> bits) {\n"
         "  std::vector<T> v;\n  for (const std::uint16_t b : bits) v.push_back(Eigen::numext::bit_cast<T>(b));\n"
         "  return v;\n}\n\n";
  }
  s += "template <class T>\nstruct Accept {\n  bool nan, pos_inf, neg_inf;\n  int finite;\n  T lo, hi;\n  int zero;\n"
       "  const char* text;\n};\n\n";
  s += "template <class T>\nbool accepts(const Accept<T>& a, T r) {\n"
       "  if (std::isnan(r)) return a.nan;\n"
       "  if (std::isinf(r)) return r > 0 ? a.pos_inf : a.neg_inf;\n"
       "  if (a.finite == 0) return false;\n"
       "  if (a.finite == 2 && !(a.lo <= r && r <= a.hi)) return false;\n"
       "  if (r == 0 && a.zero != 0 && std::signbit(r) != (a.zero < 0)) return false;\n"
       "  return true;\n}\n\n}  // namespace\n\n";
  s += "int main() {\n";
  s += "  using T = " + std::string(c_type(in.c.dtype)) + ";\n";
  s += "  using A = " + std::string(arith_type(in.c.dtype)) + ";  // the adapter computes integers unsigned (same bits)\n";
  s += inputs_code(in.c);
  s += "  std::vector<" + std::string(out_dtype == DType::boolean ? "std::uint8_t" : "T") + "> out(" +
       std::to_string(in.required.exact ? in.required.exact->size() : static_cast<std::int64_t>(in.required.accepted.size())) +
       ");  // the adapter's zero-filled output buffer\n";
  s += body;
  s += "  {\n";
  s += check_code(in.required, out_dtype);
  s += "  }\n}\n";
  return s;
}

}  // namespace

Result<ReproProgram> write_cxx(const ReproInput& in) {
  const Requirement& req = in.required;
  const bool eigen = in.backend == "eigen";
  const std::string lib = eigen ? "eigen" : "xtensor";
  if (!eigen && is_half(in.c.dtype)) {
    return not_reproducible("xtensor has no " + std::string(dtype_name(in.c.dtype)) + " element type the adapter uses");
  }
  if (req.rejection) {
    return not_reproducible("the semantics reject this case and the " + lib +
                            " adapter decides that with einfuzz's checker before calling " + lib +
                            ": nothing of the library to reproduce");
  }
  Result<std::string> body = not_reproducible("unreachable");
  if (const auto* e = std::get_if<CheckedEinsum>(&*req.checked)) {
    body = eigen ? eigen_einsum(*e) : xtensor_einsum(*e);
  } else {
    const auto& r = std::get<CheckedReduce>(*req.checked);
    body = eigen ? eigen_reduce(r) : xtensor_reduce(r);
  }
  if (!body) return std::move(body).error();
  const std::string includes = eigen ? "#include <unsupported/Eigen/CXX11/Tensor>\n"
                                     : "#include <xtensor/xadapt.hpp>\n#include <xtensor/xarray.hpp>\n"
                                       "#include <xtensor/xmanipulation.hpp>\n#include <xtensor/xmath.hpp>\n"
                                       "#include <xtensor/xoperation.hpp>\n#include <xtensor/xstrided_view.hpp>\n";
  const std::string build = std::string("g++ -std=c++17 -O2 -ffp-contract=off ") +
                            (eigen ? "-I/usr/include/eigen3 " : "") + "FILE -o repro && ./repro";
  const std::string text = cxx_program(in, includes, build, in.caps.version, *body, req.dtype);
  return ReproProgram{ReproLanguage::cpp, text, build};
}

}  // namespace einfuzz::detail
