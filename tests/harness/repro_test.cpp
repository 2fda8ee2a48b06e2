// `einfuzz repro` end to end: a program is written and RUN for every stored divergence of a library
// backend (it must exit 1: the divergence shows), for variants the library gets right (exit 0), and
// for generated numpy cases (its exit status must follow einfuzz's own verdict).
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "einfuzz/core/case_origin.hpp"
#include "einfuzz/core/choice.hpp"
#include "einfuzz/core/precision_text.hpp"
#include "einfuzz/harness/backend_registry.hpp"
#include "einfuzz/harness/generate.hpp"
#include "einfuzz/harness/repro.hpp"
#include "einfuzz/harness/run.hpp"

namespace einfuzz {
namespace {

namespace fs = std::filesystem;

const fs::path kSource = EINFUZZ_SOURCE_DIR;

/// The programs and their output, removed at exit unless EINFUZZ_KEEP_REPRO is set (to read them).
struct Scratch {
  fs::path dir = fs::temp_directory_path() / ("einfuzz_repro_test_" + std::to_string(::getpid()));
  Scratch() { fs::create_directories(dir); }
  ~Scratch() {
    std::error_code ec;
    if (std::getenv("EINFUZZ_KEEP_REPRO") == nullptr) fs::remove_all(dir, ec);
  }
};

fs::path scratch() {
  static const Scratch s;
  return s.dir;
}

/// Exit status of a shell command (its output into `log`), -1 when it did not exit normally.
int run_status(const std::string& command, const fs::path& log) {
  const int status = std::system((command + " > '" + log.string() + "' 2>&1").c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

/// A python3 that has the module `module` installed, or empty; asked once per module and process.
/// The probe finds the module without importing it: importing torch costs a few seconds, and the
/// program run next imports it anyway (an installed module that fails to import fails that run).
std::string python_with(const std::string& module) {
  static std::map<std::string, std::string> found;
  if (const auto it = found.find(module); it != found.end()) return it->second;
  std::string& python = found[module];
  for (const char* p : {"python3", "/usr/bin/python3"}) {
    const std::string probe = std::string(p) + " -c 'import importlib.util, sys; sys.exit(importlib.util.find_spec(\"" +
                              module + "\") is None)'";
    if (run_status(probe, scratch() / "probe.log") == 0) return python = p;
  }
  return python;
}

struct Ran {
  int status = -1;
  std::string output;
  std::string text;  ///< the program
};

/// Writes the program for `c` on `backend`, runs it and returns its exit status and output; skips
/// (GTEST_SKIP in the caller via `skipped`) when the backend or the toolchain is missing here.
Ran write_and_run(const Case& c, const std::string& backend, const std::string& name, std::string* skipped,
                  const RunOptions& run = {}) {
  const std::vector<std::string> specs = {backend};
  auto owned = make_backends(specs, run, {});
  if (!owned || owned->size() != 1) {
    *skipped = "backend " + backend + " is not available in this build";
    return {};
  }
  Backend* one[] = {owned->front().get()};
  (void)run_case(c, one, run);  // starts a process backend, so its declared capabilities are known
  auto program = make_repro(c, backend, owned->front()->capabilities(), {run, name});
  if (!program) {
    ADD_FAILURE() << name << " on " << backend << ": " << render(program.error());
    return {};
  }
#ifdef EINFUZZ_SANITIZED_BUILD
  // The program was written under ASan + UBSan (make_repro above); running it exercises Python or
  // g++ and the library, none of it instrumented: the release build's tests run every program.
  *skipped = "sanitizer build: the program for " + name + " on " + backend +
             " was written; the release build's tests run it";
  return {};
#endif
  const fs::path log = scratch() / (name + "." + backend + ".log");
  if (program->language == ReproLanguage::python) {
    const std::string python = python_with(backend.rfind("torch", 0) == 0 ? "torch" : "numpy");
    if (python.empty()) {
      *skipped = "no python3 here imports the module " + backend + " needs";
      return {};
    }
    const fs::path file = scratch() / (name + "." + backend + ".py");
    std::ofstream(file) << program->text;
    Ran r{run_status(python + " '" + file.string() + "'", log), "", program->text};
    r.output = slurp(log);
    return r;
  }
  const fs::path file = scratch() / (name + "." + backend + ".cpp");
  const fs::path exe = scratch() / (name + "." + backend);
  std::ofstream(file) << program->text;
  std::string build = program->run_command;  // "g++ … FILE -o repro && ./repro"
  build.replace(build.find("FILE"), 4, "'" + file.string() + "'");
  build.replace(build.find("-o repro && ./repro"), 19, "-o '" + exe.string() + "' && '" + exe.string() + "'");
  Ran r{run_status(build, log), "", program->text};
  r.output = slurp(log);
  return r;
}

std::string origin(const Case& c, const std::string& key) {
  for (const auto& [k, v] : c.origin) {
    if (k == key) return v;
  }
  return "";
}

/// The stored forward divergences, one test each (each compiles or starts a library program).
/// `repro` writes programs for forward cases; a VJP divergence (its file name starts with "vjp-") is
/// reproduced by its case file (`einfuzz check --case`), which the corpus replay and StoredDivergences
/// run.
std::vector<std::string> stored_divergences() {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(kSource / "corpus" / "divergences")) {
    const std::string file = entry.path().filename().string();
    if (file.ends_with(".case.json") && !file.starts_with("vjp-")) {
      names.push_back(file.substr(0, file.size() - std::string(".case.json").size()));
    }
  }
  std::sort(names.begin(), names.end());
  return names;
}

class StoredLibraryDivergence : public ::testing::TestWithParam<std::string> {};

TEST_P(StoredLibraryDivergence, Shows) {
  const std::string name = GetParam();
  auto c = read_case_file(kSource / "corpus" / "divergences" / (name + ".case.json"));
  ASSERT_TRUE(c.ok()) << name;
  const std::string backend = origin(*c, "backend");
  const auto libraries = repro_backend_names();
  if (std::find(libraries.begin(), libraries.end(), backend) == libraries.end()) {
    GTEST_SKIP() << backend << " has no standalone reproducer";
  }
  ASSERT_FALSE(c->is_vjp()) << name << " is a VJP case whose file name does not say so";
  // A profile surprise (origin.profile) is judged under that profile, as replay judges it.
  std::string skipped;
  const Ran r = write_and_run(*c, backend, name, &skipped);
  if (!skipped.empty()) GTEST_SKIP() << skipped;
  EXPECT_EQ(r.status, 1) << name << " on " << backend << " (recorded " << origin(*c, "verdict") << "):\n" << r.output;
  EXPECT_NE(r.output.find("DIVERGENCE"), std::string::npos) << r.output;
  if (!origin_profile(*c)) return;
  // ... and it passes under the declared profile: `repro --profile` (RunOptions::profile) chooses it.
  EXPECT_NE(r.text.find("origin.profile: a profile surprise"), std::string::npos) << r.text;
  const std::vector<std::string> specs = {backend};
  auto owned = make_backends(specs, {}, {});
  ASSERT_TRUE(owned && owned->size() == 1);
  Backend* one[] = {owned->front().get()};
  (void)run_case(*c, one, {});  // a process backend's capabilities come from its hello
  RunOptions declared;
  declared.profile = owned->front()->capabilities().profile(c->dtype);
  if (c->op == Op::reduce) declared.profile->round_inputs = InputRounding::none;
  const Ran d = write_and_run(*c, backend, name + ".declared", &skipped, declared);
  if (!skipped.empty()) GTEST_SKIP() << skipped;
  EXPECT_EQ(d.status, 0) << name << " on " << backend << " under its declared profile:\n" << d.output;
  EXPECT_NE(d.text.find("(ORACLE 8; --profile"), std::string::npos) << d.text;
}

INSTANTIATE_TEST_SUITE_P(Repro, StoredLibraryDivergence, ::testing::ValuesIn(stored_divergences()),
                         [](const ::testing::TestParamInfo<std::string>& param) {
                           std::string id = param.param;
                           for (char& ch : id) {
                             if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           }
                           return id;
                         });

Case einsum_case(const std::string& pattern, DType dtype, std::vector<Tensor> inputs) {
  Case c;
  c.pattern = pattern;
  c.dtype = dtype;
  c.inputs = std::move(inputs);
  return c;
}

Case reduce_case(const std::string& pattern, const std::string& kind, Tensor input,
                 std::vector<std::pair<std::string, std::int64_t>> lengths = {}) {
  Case c;
  c.op = Op::reduce;
  c.pattern = pattern;
  c.reduction = kind;
  c.dtype = input.dtype();
  c.axis_lengths = std::move(lengths);
  c.inputs = {std::move(input)};
  return c;
}

Tensor f64(Shape shape, std::vector<double> v) { return Tensor(std::move(shape), std::move(v)); }

/// A 16-bit tensor (H: Float16 or BFloat16) of `v`, each value rounded to H.
template <class H>
Tensor half(Shape shape, const std::vector<double>& v) {
  std::vector<H> h;
  for (const double x : v) h.push_back(H(x));
  return Tensor(std::move(shape), std::move(h));
}

void expect_no_divergence(const Case& c, const std::string& backend, const std::string& name) {
  std::string skipped;
  const Ran r = write_and_run(c, backend, name, &skipped);
  if (!skipped.empty()) GTEST_SKIP() << skipped;
  EXPECT_EQ(r.status, 0) << name << " on " << backend << ":\n" << r.output;
  EXPECT_EQ(r.output.find("DIVERGENCE"), std::string::npos) << r.output;
}

constexpr double kInf = std::numeric_limits<double>::infinity();

// The stored divergences' patterns with values the libraries get right.
TEST(Repro, TorchNonEmptyContractionOfInfIsInf) {
  expect_no_divergence(einsum_case("i, j ->", DType::f64, {f64({1}, {kInf}), f64({2}, {2, 0.5})}), "torch",
                       "torch-inf");
}
TEST(Repro, TorchPathVariantsOnAThreeOperandChain) {
  const Case c = einsum_case("a b, b c, c -> a", DType::f64,
                             {f64({2, 3}, {1, 2, 3, 4, 5, 6}), f64({3, 2}, {0.5, 1, -1, 2, 0.25, 3}), f64({2}, {1, -2})});
  expect_no_divergence(c, "torch-path-right", "chain");
  expect_no_divergence(c, "torch-path-outer", "chain");
}
TEST(Repro, TorchI32SumWithANonEmptyAxisIsExact) {
  expect_no_divergence(einsum_case("a, a b -> b", DType::i32,
                                   {Tensor(Shape{2}, std::vector<std::int32_t>{3, -4}),
                                    Tensor(Shape{2, 2}, std::vector<std::int32_t>{1, 2, 3, 4})}),
                       "torch", "torch-i32");
}
TEST(Repro, TorchReduceWithGroupsAndPermutation) {
  std::vector<double> v(12);
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<double>(i) * 0.75 - 3;
  expect_no_divergence(reduce_case("(a b) c -> c a", "prod", f64({4, 3}, v), {{"b", 2}}), "torch", "torch-prod");
}
TEST(Repro, NumpyDenseEinsumWithValuesIsWithinTheBound) {
  expect_no_divergence(einsum_case("a, b ->", DType::f64, {f64({2}, {1, 0x1p-60}), f64({1}, {3})}), "numpy",
                       "numpy-dense");
}
TEST(Repro, NumpyRejectsWhatTheSemanticsReject) {
  expect_no_divergence(einsum_case("a b, b c -> a c", DType::f64, {f64({2, 3}, {1, 2, 3, 4, 5, 6}), f64({4, 1}, {1, 2, 3, 4})}),
                       "numpy-opt", "numpy-reject");
}
TEST(Repro, NumpyMeanComparesExactQuotients) {
  expect_no_divergence(reduce_case("a b -> b", "mean", f64({3, 2}, {1, 0.1, 2, 0.2, 4, 0.3})), "numpy", "numpy-mean");
}
TEST(Repro, NumpyRepeatedLabelOfEqualLengthsIsExact) {
  expect_no_divergence(einsum_case("_ _ _->_", DType::i64, {Tensor(Shape{1, 1, 1}, std::vector<std::int64_t>{7})}),
                       "numpy", "numpy-diag");
}
TEST(Repro, XtensorMaxWithoutNaNIsTheExtreme) {
  expect_no_divergence(reduce_case("a b -> b", "max", f64({3, 2}, {1, -kInf, 3, -1, 0.5, -2})), "xtensor", "xt-max");
}
TEST(Repro, XtensorEinsumWithADiagonalAndBroadcast) {
  expect_no_divergence(einsum_case("a a b, b c -> c a", DType::f64,
                                   {f64({2, 2, 1}, {1, 2, 3, 4}), f64({3, 2}, {0.5, -1, 2, 0.25, 8, -3})}),
                       "xtensor", "xt-einsum");
}

TEST(Repro, EigenChainWithBroadcastPrivateLabelAndBatch) {
  std::vector<double> a(24), b(6);
  for (std::size_t i = 0; i < a.size(); ++i) a[i] = static_cast<double>(i % 7) - 3;
  for (std::size_t i = 0; i < b.size(); ++i) b[i] = 0.5 * static_cast<double>(i) - 1;
  expect_no_divergence(einsum_case("b i j x, b j k, k -> i b", DType::f64, {f64({2, 2, 3, 2}, a), f64({1, 3, 2}, b),
                                                                           f64({2}, {1, -0.25})}),
                       "eigen", "eigen-chain");
}
TEST(Repro, EigenMeanOverTheOuterAxis) {
  expect_no_divergence(reduce_case("a b -> b", "mean", Tensor(Shape{3, 2}, std::vector<float>{1, 0.1f, 2, 0.2f, 4, 0.3f})),
                       "eigen", "eigen-mean");
}

// f16 and bf16: values cross as bit patterns, results are compared widened (exact).
TEST(Repro, TorchBf16MatrixVectorProduct) {
  expect_no_divergence(einsum_case("a b, b -> a", DType::bf16,
                                   {half<BFloat16>({2, 3}, {1, 2, -3, 0.5, 0x1p-130, 0x1.fep+127}),
                                    half<BFloat16>({3}, {0.25, -1, 0})}),
                       "torch", "torch-bf16");
}
TEST(Repro, TorchF16SumOverTheOuterAxisOfAStridedView) {
  Case c = reduce_case("a b -> b", "sum", half<Float16>({3, 2}, {1, 65504, -2, -65504, 0x1p-24, 0.5}));
  c.layouts = {InputLayout{{1, 3}, 1, 7, std::nullopt}};  // element (i, j) at 1 + i + 3j of 7
  expect_no_divergence(c, "torch", "torch-f16-sum");
}
TEST(Repro, TorchF16MatrixProductHasNoCpuKernelSoIsNotJudged) {
  // The adapter reports libtorch's missing Half kernel as unsupported; the program says so, exit 0.
  const Case c = einsum_case("a b, b c -> a c", DType::f16,
                             {half<Float16>({2, 2}, {1, 2, 3, 4}), half<Float16>({2, 1}, {0.5, -1})});
  expect_no_divergence(c, "torch", "torch-f16-mm");
}
TEST(Repro, NumpyF16ContractionAndStridedView) {
  Case c = einsum_case("a b, b c -> c a", DType::f16,
                       {half<Float16>({2, 3}, {1, -2, 3, 0x1p-14, 0x1p-24, 2048}), half<Float16>({3, 2}, {1, 0.5, -1, 2, 4, 0})});
  c.layouts = {InputLayout{{1, 2}, 1, 8, std::nullopt}, std::nullopt};  // input 0 transposed in a buffer of 8
  expect_no_divergence(c, "numpy", "numpy-f16");
  expect_no_divergence(c, "numpy-opt", "numpy-f16");
}
TEST(Repro, EigenF16ChainAndBf16MaxWithANaN) {
  expect_no_divergence(einsum_case("b i j, b j k, k -> i b", DType::f16,
                                   {half<Float16>({2, 2, 3}, {1, 2, 3, 4, 5, 6, -1, -2, -3, -4, -5, -6}),
                                    half<Float16>({1, 3, 2}, {0.5, 1, -1, 2, 0.25, 3}), half<Float16>({2}, {1, -0.25})}),
                       "eigen", "eigen-f16");
  Tensor x = half<BFloat16>({2, 3}, {1, -kInf, 3, -1, 0.5, -2});
  x.values<BFloat16>()[4] = BFloat16::from_bits(0xffc1);  // a negative NaN with a payload
  expect_no_divergence(reduce_case("a b -> a", "max", x), "eigen", "eigen-bf16-max");
}

/// The declared capabilities of `backend` here (a process backend's come from its hello), or
/// nullopt (then the caller skips).
std::optional<Capabilities> declared(const std::string& backend) {
  const std::vector<std::string> specs = {backend};
  auto owned = make_backends(specs, RunOptions{}, {});
  if (!owned || owned->size() != 1) return std::nullopt;
  Backend* one[] = {owned->front().get()};
  (void)run_case(einsum_case("a ->", DType::f64, {f64({1}, {1})}), one, RunOptions{});
  return owned->front()->capabilities();
}

TEST(Repro, RefusesADtypeTheBackendDoesNotDeclare) {
  for (const auto& [backend, dtype] : {std::pair<std::string, DType>{"numpy", DType::bf16}, {"xtensor", DType::f16}}) {
    const auto caps = declared(backend);
    if (!caps) GTEST_SKIP() << backend << " is not available";
    const Case c = einsum_case("a ->", dtype, {dtype == DType::f16 ? half<Float16>({1}, {1}) : half<BFloat16>({1}, {1})});
    const auto program = make_repro(c, backend, *caps, {});
    ASSERT_FALSE(program.ok()) << backend;
    const std::string message = render(program.error());
    EXPECT_NE(message.find("'" + backend + "' does not declare the dtype " + std::string(dtype_name(dtype))),
              std::string::npos) << message;
  }
}

TEST(Repro, TheHeaderNamesTheDtypeAndTheDeclaredProfile) {
  Capabilities caps;
  caps.dtypes = {DType::f16};
  caps.accumulate = {{DType::f16, DType::f32}};
  caps.round_inputs = {{DType::f16, InputRounding::tf32}};
  const Case c = einsum_case("a ->", DType::f16, {half<Float16>({2}, {1, 0x1p-11})});
  const auto program = make_repro(c, "numpy", caps, {});
  ASSERT_TRUE(program.ok()) << render(program.error());
  EXPECT_NE(program->text.find("Judged in f16 under the precision profile accumulate f32, round_inputs tf32"),
            std::string::npos) << program->text;
  EXPECT_NE(program->text.find("from_bits([0x3c00, 0x1000])"), std::string::npos) << program->text;
  // A reduce rounds no inputs, whatever is declared.
  const auto reduce = make_repro(reduce_case("a ->", "sum", half<Float16>({2}, {1, 0x1p-11})), "numpy", caps, {});
  ASSERT_TRUE(reduce.ok()) << render(reduce.error());
  EXPECT_NE(reduce->text.find("accumulate f32, round_inputs none"), std::string::npos) << reduce->text;
}

TEST(Repro, RefusesWhatIsNotALibraryCall) {
  Capabilities caps;
  const Case empty = einsum_case("i, j ->", DType::f64, {f64({1}, {kInf}), f64({0}, {})});
  EXPECT_FALSE(make_repro(empty, "xtensor", caps, {}).ok());  // the adapter returns +0 itself
  EXPECT_FALSE(make_repro(empty, "fused", caps, {}).ok());
  // A diagonal is `unsupported` by the eigen adapter: no Eigen call.
  EXPECT_FALSE(make_repro(einsum_case("a a -> a", DType::f64, {f64({2, 2}, {1, 2, 3, 4})}), "eigen", caps, {}).ok());
  caps.semantics = Semantics::ordered;
  EXPECT_FALSE(make_repro(empty, "numpy", caps, {}).ok());
}

/// Generated cases (seeds 1, 2, …; `dtypes` restricts them when not empty) on `backend`: for the
/// first `want` of them repro writes a program for, its exit status is einfuzz's verdict.
void programs_agree_with_the_verdict(const std::string& backend, const std::vector<DType>& dtypes, int want) {
  const std::vector<std::string> specs = {backend};
  auto owned = make_backends(specs, RunOptions{}, {});
  if (!owned || owned->size() != 1) GTEST_SKIP() << backend << " is not available";
  Backend* one[] = {owned->front().get()};
  GenOptions options;
  options.max_global = 64;
  options.max_operands = 3;
  if (!dtypes.empty()) restrict_dtypes(options, dtypes);
  const std::string tag = dtypes.empty() ? "gen" : "gen-" + std::string(dtype_name(dtypes[0]));
  int compared = 0;
  for (std::uint64_t seed = 1; compared < want && seed < 200; ++seed) {
    SeededChoices choices(seed);
    Case c = generate_case(choices, options);
    const CaseOutcome outcome = run_case(c, one, RunOptions{});
    if (outcome.skipped || outcome.backends.empty()) continue;
    const VerdictKind kind = outcome.backends[0].verdict.kind;
    if (kind == VerdictKind::unsupported || kind == VerdictKind::crash || kind == VerdictKind::timeout) continue;
    if (!make_repro(c, backend, owned->front()->capabilities(), {}).ok()) continue;
    std::string skipped;
    const Ran r = write_and_run(c, backend, tag + std::to_string(seed), &skipped);
    if (!skipped.empty()) GTEST_SKIP() << skipped;
    ++compared;
    EXPECT_EQ(r.status, is_failure(kind) ? 1 : 0)
        << backend << " seed " << seed << ", einfuzz verdict " << outcome.backends[0].verdict.label() << "\n"
        << write_case(c) << r.output;
  }
  EXPECT_GE(compared, want / 2) << backend;
}

// Generated cases: the program's exit status is einfuzz's verdict (failure or not).
TEST(Repro, NumpyProgramsAgreeWithTheVerdictOnGeneratedCases) { programs_agree_with_the_verdict("numpy", {}, 12); }
TEST(Repro, NumpyF16ProgramsAgreeWithTheVerdictOnGeneratedCases) {
  programs_agree_with_the_verdict("numpy", {DType::f16}, 12);
}
TEST(Repro, TorchF16AndBf16ProgramsAgreeWithTheVerdictOnGeneratedCases) {
  programs_agree_with_the_verdict("torch", {DType::f16}, 3);
  programs_agree_with_the_verdict("torch", {DType::bf16}, 3);
}
TEST(Repro, EigenBf16ProgramsAgreeWithTheVerdictOnGeneratedCases) {
  programs_agree_with_the_verdict("eigen", {DType::bf16}, 4);
}

}  // namespace
}  // namespace einfuzz
