// Profile detection (ORACLE §8): the battery of cases that separate precision profiles, and judging
// one backend's results on it under every candidate profile (see profile.hpp).
#include "einfuzz/harness/profile.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <exception>

#include "einfuzz/core/harness_bug.hpp"
#include "einfuzz/harness/judge.hpp"
#include "einfuzz/reference/multiset.hpp"

namespace einfuzz {

std::vector<PrecisionProfile> candidate_profiles(DType dtype) {
  std::vector<PrecisionProfile> out;
  if (!is_float(dtype)) return out;
  const int digits = dtype_info(dtype).format->digits;
  std::vector<InputRounding> roundings = {InputRounding::none};
  if (dtype == DType::f32) roundings.push_back(InputRounding::tf32);
  for (InputRounding r : roundings) {
    for (DType a : {DType::f64, DType::f32, dtype}) {
      if (dtype_info(a).format->digits < digits) continue;  // never narrower than the dtype
      const PrecisionProfile p{a, r};
      if (std::find(out.begin(), out.end(), p) == out.end()) out.push_back(p);
    }
  }
  return out;
}

namespace {

/// One value list and what it separates; `y` is the second factor of the product feeds (empty:
/// ones), `products` marks series that only mean something through products (TF32).
struct Series {
  std::string name;
  std::string separates;
  std::vector<double> x;
  std::vector<double> y;
  bool products = false;
};

/// `values` as a tensor of `dtype`; a value the dtype cannot hold exactly is a harness bug (the
/// battery is built to be exact, so that the case file says what the probe means).
Tensor exact_tensor(DType dtype, Shape shape, const std::vector<double>& values) {
  Tensor t(dtype, std::move(shape));
  visit_dtype(dtype, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (is_float_type_v<T>) {
      auto v = t.values<T>();
      if (v.size() != values.size()) harness_bug("profile probe: value count differs from the shape");
      for (std::size_t i = 0; i < v.size(); ++i) {
        v[i] = static_cast<T>(values[i]);
        if (static_cast<double>(v[i]) != values[i]) harness_bug("profile probe: a value is not exact in its dtype");
      }
    } else {
      harness_bug("profile probe: not a float dtype");
    }
  });
  return t;
}

std::vector<double> repeat(double v, std::size_t n) { return std::vector<double>(n, v); }

/// Column-repeated: row i of an [n, 2] tensor holds x_i twice (so each column sums x along the
/// outer axis, row by row).
std::vector<double> two_columns(const std::vector<double>& x) {
  std::vector<double> out;
  for (double v : x) {
    out.push_back(v);
    out.push_back(v);
  }
  return out;
}

std::vector<Series> series_for(DType dtype) {
  const FloatFormat f = *dtype_info(dtype).format;
  const int p = f.digits;
  std::vector<Series> out;
  if (is_half(dtype)) {
    // 3·2^(p-1) ones: exact 3072 (f16) / 384 (bf16); the storage type stops at 2^p.
    const auto n = static_cast<std::size_t>(3) << (p - 1);
    out.push_back({"ones", "a long sum of ones: the storage type stops at 2^" + std::to_string(p), repeat(1, n), {}});
  }
  {
    std::vector<double> x = {std::ldexp(1.0, p)};
    x.resize(1 + 1024, 1.0);
    out.push_back({"big-then-ones", "2^" + std::to_string(p) + " then 1024 ones: each one is lost in the storage type", x, {}});
  }
  // Cancellation 2^e + x − 2^e, x half an ulp of 2^e in accumulator A (a tie, lost to even there),
  // for every format A narrower than f64: the candidates separate f64 from f32 from the dtype, the
  // formats narrower than the dtype catch a backend that accumulates below what it declares (f64
  // partial sums held in f32, f32 chunks added in bf16). Once with one x, once with sixteen.
  std::vector<DType> narrower;
  for (DType a : {dtype, DType::f32, DType::bf16, DType::f16}) {
    if (a != DType::f64 && std::find(narrower.begin(), narrower.end(), a) == narrower.end()) narrower.push_back(a);
  }
  for (DType a : narrower) {
    const int pa = dtype_info(a).format->digits;
    const int e = std::min(pa, f.max_exponent);
    const double big = std::ldexp(1.0, e), small = std::ldexp(1.0, e - pa);
    if (e - pa < f.min_exponent - p + 1) continue;  // not representable in the dtype
    const std::string name = "cancel-" + std::string(dtype_name(a));
    const std::string what = "2^" + std::to_string(e) + " + 2^" + std::to_string(e - pa) + " - 2^" + std::to_string(e) +
                             ": the small term is a half-ulp tie, lost when accumulating in " + std::string(dtype_name(a));
    out.push_back({name, what, {big, small, -big}, {}});
    std::vector<double> x = {big};
    x.resize(1 + 16, small);
    x.push_back(-big);
    out.push_back({name + "-series", what + " (sixteen times)", x, {}});
  }
  {
    // 1 followed by sixteen half-ulps of 1: every addition is a tie that rounds back to 1.
    std::vector<double> x = {1.0};
    x.resize(1 + 16, std::ldexp(1.0, -p));
    out.push_back({"ties", "1 + 2^-" + std::to_string(p) + " + ...: half-ulp ties round back to 1 in the storage type", x, {}});
  }
  if (dtype == DType::f32) {
    const double a = 1 + std::ldexp(1.0, -12), t = 1 + std::ldexp(1.0, -11);
    out.push_back({"tf32-square", "(1 + 2^-12)^2 summed 64 times: TF32 input rounding makes each factor 1",
                   repeat(a, 64), repeat(a, 64), true});
    out.push_back({"tf32-tie", "(1 + 2^-11)·1 summed 64 times: a TF32 tie, rounded to 1", repeat(t, 64), repeat(1, 64),
                   true});
  }
  return out;
}

Case einsum_case(DType dtype, std::string pattern, std::vector<Tensor> inputs) {
  Case c;
  c.op = Op::einsum;
  c.dtype = dtype;
  c.pattern = std::move(pattern);
  c.inputs = std::move(inputs);
  c.expect_error = std::string();
  return c;
}

Case reduce_case(DType dtype, std::string kind, std::string pattern, Tensor input) {
  Case c;
  c.op = Op::reduce;
  c.dtype = dtype;
  c.reduction = std::move(kind);
  c.pattern = std::move(pattern);
  c.inputs.push_back(std::move(input));
  c.expect_error = std::string();
  return c;
}

}  // namespace

std::vector<ProfileProbe> profile_probes(DType dtype) {
  std::vector<ProfileProbe> out;
  if (!is_float(dtype)) return out;
  for (const Series& s : series_for(dtype)) {
    const auto n = static_cast<std::int64_t>(s.x.size());
    const std::vector<double> y = s.y.empty() ? repeat(1, s.x.size()) : s.y;
    const auto add = [&](const std::string& feed, Case c) {
      c.origin = {{"profile-probe", s.name + "/" + feed}, {"separates", s.separates}};
      out.push_back({s.name + "/" + feed, s.separates, std::move(c)});
    };
    if (!s.products) {
      add("sum", einsum_case(dtype, "i ->", {exact_tensor(dtype, {n}, s.x)}));
      add("outer-sum", einsum_case(dtype, "i j -> j", {exact_tensor(dtype, {n, 2}, two_columns(s.x))}));
    }
    add("dot", einsum_case(dtype, "i, i ->", {exact_tensor(dtype, {n}, s.x), exact_tensor(dtype, {n}, y)}));
    // [2, n] rows of x times [n, 2] columns of y: the matrix-unit path.
    std::vector<double> rows = s.x;
    rows.insert(rows.end(), s.x.begin(), s.x.end());
    add("matmul", einsum_case(dtype, "a k, k b -> a b",
                              {exact_tensor(dtype, {2, n}, rows), exact_tensor(dtype, {n, 2}, two_columns(y))}));
    if (s.products) continue;  // input rounding never applies to reductions (ORACLE §8)
    add("reduce-sum", reduce_case(dtype, "sum", "a ->", exact_tensor(dtype, {n}, s.x)));
    add("reduce-outer-sum", reduce_case(dtype, "sum", "a b -> b", exact_tensor(dtype, {n, 2}, two_columns(s.x))));
    add("reduce-outer-mean", reduce_case(dtype, "mean", "a b -> b", exact_tensor(dtype, {n, 2}, two_columns(s.x))));
  }
  {
    // (1 + 2^-p)·(1 + 2^-p) as `i, j ->`: a backend that sums each operand's private label first (a
    // factoring path) and holds those sums in the storage type loses the half-ulp tie 2^-p there
    // and returns 1; summing the four products in a wider accumulator gives 1 + 2^(1-p) + 2^-2p.
    const int p = dtype_info(dtype).format->digits;
    const std::vector<double> x = {1.0, std::ldexp(1.0, -p)};
    Case c = einsum_case(dtype, "i, j ->", {exact_tensor(dtype, {2}, x), exact_tensor(dtype, {2}, x)});
    const std::string separates = "(1 + 2^-" + std::to_string(p) +
                                  ")^2 as a product of two sums: the sums held in the storage type lose the tie";
    c.origin = {{"profile-probe", "factored-tie/outer"}, {"separates", separates}};
    out.push_back({"factored-tie/outer", separates, std::move(c)});
  }
  return out;
}

bool DtypeProfileReport::faulted() const {
  return std::any_of(problems.begin(), problems.end(),
                     [](const ProbeProblem& p) { return p.verdict.kind != VerdictKind::unsupported; });
}

bool DtypeProfileReport::finding() const {
  if (!declared_dtype) return false;
  if (judged == 0) return faulted();  // nothing ran (every probe unsupported): nothing to compare
  return !declared_holds || faulted() || !detected || !(*detected == declared);
}

namespace {

/// The backend's answer to one probe, or the verdict that says why there is none.
struct ProbeAnswer {
  std::optional<Tensor> result;
  std::optional<Verdict> problem;
};

bool same_inputs(const Case& a, const Case& b) {
  for (std::size_t i = 0; i < a.inputs.size(); ++i) {
    const auto x = a.inputs[i].bytes(), y = b.inputs[i].bytes();
    if (x.size() != y.size() || !std::equal(x.begin(), x.end(), y.begin())) return false;
  }
  return true;
}

/// The run boundary for one probe (as run_case's): the backend works on its own copy; a throw is a
/// crash, a write to the inputs `input-modified`.
ProbeAnswer ask(Backend& backend, const Case& probe) {
  if (!backend.supports(probe)) return {std::nullopt, make_verdict(VerdictKind::unsupported, "outside the backend's declared capabilities")};
  Case copy = probe;
  std::optional<BackendResult> r;
  try {
    r.emplace(backend.run(copy));
  } catch (const std::exception& e) {
    return {std::nullopt, make_verdict(VerdictKind::crash, std::string("the backend threw: ") + e.what())};
  } catch (...) {
    return {std::nullopt, make_verdict(VerdictKind::crash, "the backend threw a non-standard exception")};
  }
  if (!same_inputs(copy, probe)) return {std::nullopt, make_verdict(VerdictKind::input_modified, "the backend wrote to its inputs")};
  if (auto* t = std::get_if<Tensor>(&*r)) return {std::move(*t), std::nullopt};
  if (const auto* f = std::get_if<Fault>(&*r)) {
    const VerdictKind kind = f->kind == FaultKind::timeout          ? VerdictKind::timeout
                             : f->kind == FaultKind::input_modified ? VerdictKind::input_modified
                                                                    : VerdictKind::crash;
    return {std::nullopt, make_verdict(kind, std::string(fault_kind_name(f->kind)) + ": " + f->evidence)};
  }
  if (const auto* u = std::get_if<Unsupported>(&*r)) return {std::nullopt, make_verdict(VerdictKind::unsupported, u->message)};
  if (const auto* j = std::get_if<Rejected>(&*r)) {
    return {std::nullopt, make_verdict(VerdictKind::reject_disagree, "backend rejects an accepted case: " + j->message)};
  }
  return {std::nullopt, make_verdict(VerdictKind::mismatch_shape, "a VJP's answer (several tensors) to a forward case")};
}

/// The any-order verdict on `actual` under `profile` (ORACLE §8).
Verdict judge_under(const CheckedCase& checked, const Case& c, const Tensor& actual, const Capabilities& caps,
                    const PrecisionProfile& profile, const RunOptions& options) {
  if (const auto* e = std::get_if<CheckedEinsum>(&checked)) {
    const reference::MultisetEinsum truth = reference::multiset_einsum(*e, c.inputs, profile);
    return judge_any_order(truth, actual, {caps.factoring, options.strict_signed_zero});
  }
  const reference::MultisetReduce truth = reference::multiset_reduce(std::get<CheckedReduce>(checked), c.inputs[0], profile);
  // The battery's reduces are sums and means: the NaN profile of min/max decides nothing here.
  const NanProfile nan = caps.nan_profile == NanProfile::ordered ? NanProfile::propagate : caps.nan_profile;
  return judge_any_order(truth, actual, nan, options.strict_signed_zero);
}

}  // namespace

DtypeProfileReport detect_profile(Backend& backend, DType dtype, const std::vector<ProfileProbe>& probes,
                                  const RunOptions& options) {
  DtypeProfileReport report;
  report.dtype = dtype;
  const Capabilities& caps = backend.capabilities();
  report.declared = caps.profile(dtype);
  report.declared_dtype = std::find(caps.dtypes.begin(), caps.dtypes.end(), dtype) != caps.dtypes.end();
  if (!report.declared_dtype) return report;

  // Judged under every candidate, and under the declared profile when it is none of them.
  std::vector<PrecisionProfile> judged_as = candidate_profiles(dtype);
  const bool declared_is_candidate = std::find(judged_as.begin(), judged_as.end(), report.declared) != judged_as.end();
  if (!declared_is_candidate) judged_as.push_back(report.declared);
  std::vector<std::optional<ProfileExclusion>> first_exclusion(judged_as.size());

  for (const ProfileProbe& probe : probes) {
    if (probe.c.dtype != dtype) continue;
    auto checked = check_case(probe.c, options.limits);
    if (!checked) harness_bug("profile probe " + probe.name + " is rejected: " + render(checked.error()));
    ProbeAnswer answer = ask(backend, probe.c);
    if (answer.problem) {
      report.problems.push_back({probe.name, probe.c, std::move(*answer.problem)});
      continue;
    }
    ++report.judged;
    for (std::size_t i = 0; i < judged_as.size(); ++i) {
      if (first_exclusion[i]) continue;  // one case excludes it; the others would say the same
      Verdict v = judge_under(*checked, probe.c, *answer.result, caps, judged_as[i], options);
      if (is_failure(v.kind)) first_exclusion[i] = ProfileExclusion{judged_as[i], probe.name, probe.c, std::move(v)};
    }
  }
  for (std::size_t i = 0; i < judged_as.size(); ++i) {
    const bool candidate = i < judged_as.size() - (declared_is_candidate ? 0 : 1);
    if (judged_as[i] == report.declared && first_exclusion[i]) report.declared_holds = false;
    if (first_exclusion[i]) {
      report.excluded.push_back(*first_exclusion[i]);
    } else if (candidate) {
      report.satisfied.push_back(judged_as[i]);
      if (!report.detected && report.judged > 0) report.detected = judged_as[i];
    }
  }
  return report;
}

}  // namespace einfuzz
