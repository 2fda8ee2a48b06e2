// numpy, numpy-opt, torch (and its explicit contraction paths) and the example C plugin: every
// SEMANTICS §11 row with its expected verdict per backend (rows a backend cannot express are
// `unsupported`, never a pass), strided inputs through the layout extension, and the stored
// divergences of corpus/divergences/ reproduced with Debian's numpy 1.24 and torch 1.13.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <optional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "einfuzz/backends/plugin.hpp"
#include "einfuzz/core/case.hpp"
#include "einfuzz/harness/backend_registry.hpp"
#include "einfuzz/harness/campaign.hpp"
#include "einfuzz/harness/generate.hpp"
#include "einfuzz/harness/group.hpp"
#include "einfuzz/harness/check_command.hpp"
#include "einfuzz/harness/run.hpp"
#include "support/conformance_rows.hpp"
#include "support/values_text.hpp"
#include "support/verdicts.hpp"

namespace einfuzz {
namespace {

using VK = VerdictKind;

const std::filesystem::path kSource = EINFUZZ_SOURCE_DIR;

bool available(const std::string& name) {
  const auto names = builtin_backend_names();
  return std::find(names.begin(), names.end(), name) != names.end();
}

/// The backend, or nullptr (then the test skips with the reason).
std::unique_ptr<Backend> make(const std::string& name) {
  if (name == "plugin") {
    PluginOptions o;
    o.path = EINFUZZ_EXAMPLE_PLUGIN;
    auto b = load_plugin_backend(o);
    return b.ok() ? std::move(*b) : nullptr;
  }
  if (!available(name)) return nullptr;
  return make_builtin_backend(name, RunOptions{});
}

std::string skip_reason(const std::string& name) {
  if (name.rfind("numpy", 0) == 0) {
    return name + " is not available: no python3 that imports numpy (Debian: apt-get install python3-numpy, "
                  "or set EINFUZZ_PYTHON)";
  }
  if (name.rfind("torch", 0) == 0) return name + " is not built: libtorch was not found (Debian: libtorch-dev)";
  return name + " is not available";
}

/// One backend per test-suite instance, shared by its rows (one numpy process for all of them).
std::map<std::string, std::unique_ptr<Backend>>& pool() {
  static std::map<std::string, std::unique_ptr<Backend>> backends;
  return backends;
}

Backend* shared(const std::string& name) {
  auto& p = pool();
  auto it = p.find(name);
  if (it == p.end()) it = p.emplace(name, make(name)).first;
  return it->second.get();
}

// ---------------------------------------------------------------------------------------------
// Expected verdicts. A row not listed for a backend gets the default: `pass` for float values,
// `pass(bitwise)` for integers and bools, `pass` (both reject) for error rows. Every entry is a
// verdict ORACLE.md allows, pinned to what these library versions do; `unsupported` rows are ones
// the backend cannot express, never counted as passes.

using Exceptions = std::map<std::string, std::map<std::string, VK>>;  // backend → row → verdict

void set(std::map<std::string, VK>& rows, VK verdict, std::initializer_list<const char*> ids) {
  for (const char* id : ids) rows[id] = verdict;
}

std::map<std::string, VK> numpy_rows() {
  std::map<std::string, VK> r;
  // An input ellipsis absent from the output (summed, §10.1; an error in numpy) reaches numpy as
  // one label per ellipsis dimension (PROTOCOL A §2), so E24, E26 and E32 pass. X24's ranks give no
  // ellipsis rank: `...` is kept, which the client declares outside numpy (the reference rejects it).
  set(r, VK::unsupported, {"X24"});
  // Supplied lengths that repeat a name cannot be written as a JSON object: not sent (PROTOCOL A §2).
  set(r, VK::unsupported, {"Y18"});
  // mean of an empty fibre is NaN in numpy; any/all reduce any dtype by truthiness (§10.2).
  set(r, VK::unsupported, {"Y01", "Y21"});
  // numpy keeps -0.0 in a passthrough (E33) and takes the later of ±0 ties for max and min (R20,
  // R23); nothing reduced passes values through (R24, R27): ORACLE §2/§5 signed-zero notes.
  set(r, VK::note_signed_zero, {"E33", "R20", "R23", "R24", "R27"});
  // 1e308·10·0.1 without a certificate of no overflow (ORACLE §4).
  set(r, VK::indeterminate, {"E37", "E38", "R29"});
  // inf·0 is path-dependent for a factoring backend (ORACLE §3); numpy factors with and without
  // optimize (declared_capabilities_test.cpp shows it).
  set(r, VK::indeterminate, {"E35"});
  set(r, VK::pass_bitwise, {"R11", "R12", "R14", "R15"});
  return r;
}

std::map<std::string, VK> torch_rows() {
  std::map<std::string, VK> r;
  // torch keeps -0.0 in a passthrough and gives -0.0 for `i, i ->` on [-0]·[1] (§10.1); takes the
  // earlier of ±0 ties (R21, R22); nothing reduced passes through (R24, R27).
  set(r, VK::note_signed_zero, {"E33", "E34", "R21", "R22", "R24", "R27"});
  set(r, VK::indeterminate, {"E35", "E37", "E38", "R29"});
  set(r, VK::pass_bitwise, {"R11", "R12", "R14", "R15"});
  return r;
}

std::map<std::string, VK> plugin_rows() {
  std::map<std::string, VK> r;
  // The example does einsum only, without ellipsis, and needs numpy subscripts: reductions, ellipsis
  // rows and patterns that do not parse (no subscripts) are outside it.
  for (const auto& row : test::reduce_value_rows()) r[row.id] = VK::unsupported;
  for (const auto& row : test::reduce_error_rows()) r[row.id] = VK::unsupported;
  // A summed ellipsis arrives as labels (E24, E26, E32 computed); a kept `...` is unsupported.
  set(r, VK::unsupported, {"E25", "E27", "E28", "E29", "X24"});
  set(r, VK::unsupported, {"X01", "X02", "X03", "X04", "X05", "X06", "X07", "X08", "X09", "X10", "X11",
                           "X12", "X13", "X14", "X15", "X18", "X19", "X20", "X21", "X22"});
  set(r, VK::indeterminate, {"E37", "E38"});
  return r;
}

const Exceptions& exceptions() {
  static const Exceptions table = {
      {"numpy", numpy_rows()},
      {"numpy-opt", numpy_rows()},
      {"torch", torch_rows()},
      {"torch-path-right", torch_rows()},
      {"torch-path-outer", torch_rows()},
      {"torch-maxdim", torch_rows()},  // max(dim)/min(dim) give the same §11 verdicts as amax/amin
      {"plugin", plugin_rows()},
  };
  return table;
}

VK expected(const std::string& backend, const std::string& id, VK fallback) {
  const auto& rows = exceptions().at(backend);
  const auto it = rows.find(id);
  return it == rows.end() ? fallback : it->second;
}

const std::vector<std::string> kBackends = {"numpy", "numpy-opt", "torch", "torch-path-right", "torch-path-outer",
                                            "torch-maxdim", "plugin"};

/// One test per backend and table (under CTest every test is a process: one numpy start per table,
/// not per row); each row is its own expectation, named in the failure message.
class Rows : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    backend_ = shared(GetParam());
    if (!backend_) GTEST_SKIP() << skip_reason(GetParam());
  }
  void check(const std::string& id, const Case& c, VK fallback) {
    const Verdict v = test::run_on(c, *backend_);
    const VK want = expected(GetParam(), id, fallback);
    EXPECT_EQ(verdict_name(v.kind), verdict_name(want))
        << GetParam() << " " << id << " '" << c.pattern << "': " << test::explain(v);
    ++counts_[verdict_name(v.kind)];
  }
  void TearDown() override {
    std::string summary;
    for (const auto& [verdict, n] : counts_) summary += " " + verdict + "=" + std::to_string(n);
    if (!summary.empty()) RecordProperty("verdicts", summary);
  }
  Backend* backend_ = nullptr;
  std::map<std::string, int> counts_;
};

TEST_P(Rows, EinsumValues) {
  for (const auto& row : test::einsum_value_rows()) {
    check(row.id, test::case_of(row), is_float(row.dtype) ? VK::pass : VK::pass_bitwise);
  }
}

TEST_P(Rows, EinsumErrors) {
  for (const auto& row : test::einsum_error_rows()) check(row.id, test::case_of(row), VK::pass);
}

TEST_P(Rows, ReduceValues) {
  for (const auto& row : test::reduce_value_rows()) {
    check(row.id, test::case_of(row), is_float(row.dtype) ? VK::pass : VK::pass_bitwise);
  }
}

TEST_P(Rows, ReduceErrors) {
  for (const auto& row : test::reduce_error_rows()) check(row.id, test::case_of(row), VK::pass);
}

INSTANTIATE_TEST_SUITE_P(Conformance, Rows, ::testing::ValuesIn(kBackends),
                         [](const auto& p) { return test::test_name(p.param); });

// ---------------------------------------------------------------------------------------------
// A summed ellipsis end to end (issue 10, item 3): numpy rejects `...->`, so the request spells the
// ellipsis dimensions as labels; with different ellipsis ranks and a broadcast slot it passes.

TEST(SummedEllipsis, NumpyComputesItFromTheLabelledSubscripts) {
  Case c;
  c.pattern = "... i, ... i -> i";
  c.inputs = {test::tensor_from_text(DType::f64, {2, 1, 2}, "1,2,3,4"),
              test::tensor_from_text(DType::f64, {3, 2}, "1,1,2,2,3,3")};
  for (const char* name : {"numpy", "numpy-opt", "plugin"}) {
    Backend* b = shared(name);
    if (!b) GTEST_SKIP() << skip_reason(name);
    const Verdict v = test::run_on(c, *b);
    EXPECT_EQ(v.kind, VK::pass) << name << ": " << test::explain(v);
  }
}

// ---------------------------------------------------------------------------------------------
// Strided inputs (the layout extension): transposed, sliced with steps, broadcast, reversed views
// of the same logical values must give the same verdicts as dense inputs.

Case matmul_with_layouts(std::vector<std::optional<InputLayout>> layouts) {
  Case c;
  c.pattern = "a b, b c -> a c";
  c.inputs = {test::tensor_from_text(DType::f64, {2, 3}, "1..6"), test::tensor_from_text(DType::f64, {3, 2}, "1,1,1,1,1,1")};
  c.layouts = std::move(layouts);
  return c;
}

Tensor nan_fill() { return Tensor(Shape{}, std::vector<double>{std::numeric_limits<double>::quiet_NaN()}); }

class StridedInputs : public ::testing::TestWithParam<std::string> {};

TEST_P(StridedInputs, ViewsGiveTheDenseVerdicts) {
  Backend* b = shared(GetParam());
  if (!b) GTEST_SKIP() << skip_reason(GetParam());
  EXPECT_TRUE(b->capabilities().strided_inputs);
  const std::vector<std::pair<std::string, Case>> cases = {
      // input 0 stored column-major (a transposed array)
      {"transposed", matmul_with_layouts({InputLayout{{1, 2}, 0, 6, std::nullopt}, std::nullopt})},
      // input 0 every other element of a 12-element buffer, the gaps NaN (never read by a correct view)
      {"sliced", matmul_with_layouts({InputLayout{{6, 2}, 1, 12, nan_fill()}, std::nullopt})},
      // input 1 all ones: one stored element broadcast with zero strides
      {"broadcast", matmul_with_layouts({std::nullopt, InputLayout{{0, 0}, 0, 1, std::nullopt}})},
      // input 0 reversed in both dimensions (torch has no negative strides: sent dense there)
      {"reversed", matmul_with_layouts({InputLayout{{-3, -1}, 5, 6, std::nullopt}, std::nullopt})},
  };
  for (const auto& [what, c] : cases) {
    for (std::size_t k = 0; k < c.inputs.size(); ++k) {
      if (c.layouts[k]) {
        ASSERT_TRUE(layout_storage(c.inputs[k], *c.layouts[k]).ok()) << what;
      }
    }
    const Verdict v = test::run_on(c, *b);
    EXPECT_EQ(v.kind, VK::pass) << GetParam() << " " << what << ": " << test::explain(v);
  }
}

// The campaign's layouts (draw_layouts): every generated view of a case gets the verdict its dense
// values get, so a declared `strided_inputs` is a claim each campaign tests, not one it trusts.
TEST_P(StridedInputs, GeneratedViewsGiveTheDenseVerdicts) {
  Backend* b = shared(GetParam());
  if (!b) GTEST_SKIP() << skip_reason(GetParam());
  GenOptions o = campaign_gen_options();
  o.layout_percent = 100;
  int compared = 0;
  for (std::uint64_t i = 0; i < 1500; ++i) {
    SeededChoices choices(Rng::mix(20261207, i));
    const Case c = generate_case(choices, o);
    if (c.layouts.empty()) continue;
    Case dense = c;
    dense.layouts.clear();
    const Verdict strided = test::run_on(c, *b);
    const Verdict plain = test::run_on(dense, *b);
    // numpy reads the element behind an empty operand (corpus/divergences/einsum-580320de466e8c09):
    // memory outside every buffer, which the layout moves. Not a verdict on the view.
    if (strided.label() == kEmptyContractionLabel || plain.label() == kEmptyContractionLabel) continue;
    if (strided.kind != VK::unsupported) ++compared;
    EXPECT_EQ(strided.label(), plain.label()) << GetParam() << " case " << i << ": " << test::explain(strided)
                                              << "\n" << write_case(c);
  }
  std::cout << "[ compared ] " << compared << "\n";
  EXPECT_GT(compared, 800) << "cases with layouts the backend answered";
}

INSTANTIATE_TEST_SUITE_P(Layouts, StridedInputs, ::testing::Values("numpy", "numpy-opt", "torch"),
                         [](const auto& p) { return test::test_name(p.param); });

// A backend that declares strided inputs and reads each storage as dense (the numpy client with that
// one change, tests/backends/faulty/strides_ignored_backend.py) is found by a default campaign, in a
// group of its own that names the layouts; the unchanged client, over the same cases, has no such
// group.
CampaignOptions strided_campaign() {
  CampaignOptions o;
  o.cases = 600;
  o.seed = 1;
  o.store = false;
  o.progress_interval = 3600;
  o.max_findings = 0;
  return o;
}

std::vector<Finding> strided_findings(const CampaignResult& r) {
  std::vector<Finding> out;
  for (const Finding& f : r.findings) {
    if (f.signature.find(" | strided") != std::string::npos) out.push_back(f);
  }
  return out;
}

TEST(StridedInputs, ABackendThatReadsViewsAsDenseIsFoundByTheCampaign) {
  const auto client = find_numpy_client();
  if (!client) GTEST_SKIP() << skip_reason("numpy");
  const auto numpy_running = [&](const std::string& script) {
    ProcessOptions p;
    p.command = shell_quote(client->python) + " " + shell_quote(script);
    p.name = "numpy";
    return p;
  };
  const ProcessOptions wrong_client = numpy_running((kSource / "tests/backends/faulty/strides_ignored_backend.py").string());
  const ProcessOptions right_client = numpy_running(client->script.string());
  const auto campaign = [&](const ProcessOptions& p) {
    return run_campaign(strided_campaign(), [&]() -> Result<std::vector<std::unique_ptr<Backend>>> {
      std::vector<std::unique_ptr<Backend>> out;
      out.push_back(make_process_backend(p));
      return out;
    });
  };
  auto wrong = campaign(wrong_client);
  ASSERT_TRUE(wrong.ok()) << render(wrong.error());
  const std::vector<Finding> found = strided_findings(*wrong);
  ASSERT_FALSE(found.empty()) << wrong->findings.size() << " findings, none needing a layout";
  auto wrong_backend = make_process_backend(wrong_client);
  auto right_backend = make_process_backend(right_client);
  for (const Finding& f : found) {
    // It fails again on the shrunk case, and without the layouts it answers as the client does:
    // the layouts are the cause.
    ASSERT_FALSE(f.shrunk.layouts.empty()) << f.signature;
    EXPECT_TRUE(is_failure(test::run_on(f.shrunk, *wrong_backend).kind)) << write_case(f.shrunk);
    Case dense = f.shrunk;
    dense.layouts.clear();
    EXPECT_EQ(test::run_on(dense, *wrong_backend).label(), test::run_on(dense, *right_backend).label())
        << write_case(dense);
  }
  auto right = campaign(right_client);
  ASSERT_TRUE(right.ok()) << render(right.error());
  EXPECT_EQ(right->cases, wrong->cases);
  const std::vector<Finding> none = strided_findings(*right);
  EXPECT_TRUE(none.empty()) << none.front().signature;
}

// ---------------------------------------------------------------------------------------------
// torch's explicit contraction paths are honoured: `a, a, a -> a` on [1e308], [10], [0.1] is
// (1e308·10)·0.1 = inf left to right but 1e308·(10·0.1) = 1e308 with the last two operands first.

TEST(TorchPaths, ThePathArgumentChangesTheContractionOrder) {
  Case c;
  c.pattern = "a, a, a -> a";
  c.inputs = {test::tensor_from_text(DType::f64, {1}, "1e308"), test::tensor_from_text(DType::f64, {1}, "10"),
              test::tensor_from_text(DType::f64, {1}, "0.1")};
  std::map<std::string, double> got;
  for (const char* name : {"torch", "torch-path-right", "torch-path-outer"}) {
    Backend* b = shared(name);
    if (!b) GTEST_SKIP() << skip_reason(name);
    const BackendResult r = b->run(c);
    ASSERT_TRUE(std::holds_alternative<Tensor>(r)) << name;
    got[name] = std::get<Tensor>(r).values<double>()[0];
  }
  EXPECT_EQ(got["torch"], std::numeric_limits<double>::infinity());
  EXPECT_EQ(got["torch-path-right"], 1e308);
  EXPECT_TRUE(std::isfinite(got["torch-path-outer"])) << got["torch-path-outer"];  // (1e308·0.1)·10
}

// ---------------------------------------------------------------------------------------------
// Stored divergences: each case in corpus/divergences/ whose origin names numpy or torch reproduces
// its recorded verdict on every backend of that library, and the reference's `expect` holds.

std::string origin(const Case& c, const std::string& key) {
  for (const auto& [k, v] : c.origin) {
    if (k == key) return v;
  }
  return {};
}

std::vector<std::filesystem::path> divergence_files(const std::string& backend) {
  std::vector<std::filesystem::path> out;
  for (const auto& entry : std::filesystem::directory_iterator(kSource / "corpus/divergences")) {
    if (entry.path().extension() != ".json") continue;
    auto c = read_case_file(entry.path());
    if (c.ok() && origin(*c, "backend") == backend) out.push_back(entry.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

void reproduce(const std::string& library, const std::vector<std::string>& backends, std::size_t at_least) {
  const auto files = divergence_files(library);
  EXPECT_GE(files.size(), at_least) << "stored " << library << " divergences";
  for (const auto& file : files) {
    auto c = read_case_file(file);
    ASSERT_TRUE(c.ok()) << c.error().message;
    const std::string recorded = origin(*c, "verdict");
    const std::string variants = "," + origin(*c, "variants") + ",";  // the variants that reproduce it, if listed
    for (const std::string& name : backends) {
      if (variants != ",," && variants.find("," + name + ",") == std::string::npos) continue;
      Backend* b = shared(name);
      if (!b) GTEST_SKIP() << skip_reason(name);
      Backend* list[] = {b};
      const CaseOutcome out = run_case(*c, list, test::as_recorded(*c));
      EXPECT_FALSE(out.expect_failure) << file << ": " << *out.expect_failure;
      EXPECT_EQ(out.backends.at(0).verdict.label(), recorded) << file.filename() << " on " << name << ": "
                                                              << test::explain(out.backends.at(0).verdict);
      if (origin_profile(*c)) {  // a profile surprise, not a bug: the declared profile holds
        const Verdict declared = test::run_on(*c, *b);
        EXPECT_FALSE(is_failure(declared.kind)) << file.filename() << " on " << name << " as declared: "
                                                << test::explain(declared);
      }
    }
  }
}

TEST(Divergences, Torch113EmptyContractionIsNaN) {
  reproduce("torch", {"torch", "torch-path-right", "torch-path-outer"}, 1);
}

TEST(Divergences, Numpy124ZeroStrideEmptyOperandIsNaN) { reproduce("numpy", {"numpy", "numpy-opt"}, 1); }

TEST(Divergences, TheNumpyOneIsReachableOnlyThroughLayouts) {
  Backend* b = shared("numpy");
  if (!b) GTEST_SKIP() << skip_reason("numpy");
  for (const auto& file : divergence_files("numpy")) {
    auto c = read_case_file(file);
    ASSERT_TRUE(c.ok());
    if (c->layouts.empty()) continue;
    c->layouts.clear();  // the same logical values, dense
    EXPECT_EQ(test::run_on(*c, *b).kind, VK::pass) << file;
  }
}

}  // namespace
}  // namespace einfuzz
