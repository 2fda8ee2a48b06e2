// einfuzz_artifact_to_case: turns an input of a structured fuzz target (a crash artifact, a corpus
// entry) into a readable `einfuzz-case/1` file, with exactly the decoding the target uses, plus the
// `einfuzz check` command (backends and every knob the target drew from the bytes) that reproduces
// the target's verdicts, which it runs once and prints.
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <string_view>
#include <vector>

#include "differential.hpp"
#include "einfuzz/core/case.hpp"
#include "einfuzz/harness/backend_registry.hpp"
#include "einfuzz/harness/reproduce.hpp"
#include "fuzz_input.hpp"

namespace {

constexpr const char* kUsage =
    "usage: einfuzz_artifact_to_case --target TARGET [-o OUT.case.json] [--backend SPEC]... ARTIFACT\n"
    "  TARGET: fuzz_einsum_diff | fuzz_reduce_diff | fuzz_vjp_diff | fuzz_pattern | fuzz_backends_diff | fuzz_external\n"
    "          (or einsum | reduce | vjp | pattern | backends | external)\n"
    "  Decodes ARTIFACT exactly as TARGET does and writes the case (stdout without -o). Then runs it\n"
    "  as TARGET does and prints, on stderr, one line 'verdict: BACKEND LABEL' per backend and, with\n"
    "  -o, the line 'reproduce: einfuzz check --case OUT --backend ... <knobs>' (tile width, tasks,\n"
    "  threads, shuffle seed as the target drew them) that gets the same verdicts. --backend SPEC\n"
    "  (repeatable; e.g. plugin:/abs/libmine.so) also runs and names that backend, with the same knobs.\n"
    "  fuzz_external's backend is $EINFUZZ_BACKEND unless --backend names one.\n";

int usage_error(const std::string& message) {
  std::fprintf(stderr, "einfuzz_artifact_to_case: %s\n%s", message.c_str(), kUsage);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace einfuzz;
  using namespace einfuzz::fuzz;
  std::string target, out_path, artifact;
  std::vector<std::string> extra_backends;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if ((arg == "--target" || arg == "-t") && i + 1 < argc) {
      target = argv[++i];
    } else if (arg == "--backend" && i + 1 < argc) {
      extra_backends.emplace_back(argv[++i]);
    } else if (arg == "-o" && i + 1 < argc) {
      out_path = argv[++i];
    } else if (arg == "-h" || arg == "--help") {
      std::fputs(kUsage, stdout);
      return 0;
    } else if (!arg.empty() && arg[0] != '-' && artifact.empty()) {
      artifact = arg;
    } else {
      return usage_error("unexpected argument '" + std::string(arg) + "'");
    }
  }
  if (artifact.empty()) return usage_error("no artifact given");
  OpChoice op;
  if (target == "fuzz_einsum_diff" || target == "einsum") {
    op = OpChoice::einsum;
    target = "fuzz_einsum_diff";
  } else if (target == "fuzz_reduce_diff" || target == "reduce") {
    op = OpChoice::reduce;
    target = "fuzz_reduce_diff";
  } else if (target == "fuzz_vjp_diff" || target == "vjp") {
    op = OpChoice::any;
    target = "fuzz_vjp_diff";
  } else if (target == "fuzz_pattern" || target == "pattern") {
    op = OpChoice::any;
    target = "fuzz_pattern";
  } else if (target == "fuzz_backends_diff" || target == "backends") {
    op = OpChoice::any;
    target = "fuzz_backends_diff";
  } else if (target == "fuzz_external" || target == "external") {
    op = OpChoice::any;
    target = "fuzz_external";
    const char* env = std::getenv("EINFUZZ_BACKEND");
    if (extra_backends.empty() && env != nullptr && *env != '\0') extra_backends.emplace_back(env);
    if (extra_backends.empty()) return usage_error("fuzz_external's backend: set EINFUZZ_BACKEND or give --backend SPEC");
  } else {
    return usage_error("unknown --target '" + target + "'");
  }

  std::ifstream in(artifact, std::ios::binary);
  if (!in) return usage_error("cannot read " + artifact);
  const std::vector<char> chars((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::vector<std::uint8_t> bytes(chars.begin(), chars.end());

  // fuzz_external's inputs are decoded with its layouts (the views the backend was sent).
  const std::optional<Decoded> decoded =
      target == "fuzz_vjp_diff"
          ? decode_vjp_case(bytes)
          : decode_case(bytes, op, target == "fuzz_external" ? kExternalLayoutPercent : 0);
  if (!decoded) {
    const Structure s = decode_structure(bytes, op);
    std::string shapes;
    for (const Shape& shape : s.shapes) shapes += (shapes.empty() ? "" : ", ") + format_shape(shape);
    std::fprintf(stderr,
                 "einfuzz_artifact_to_case: the input decodes to pattern \"%s\" with shapes [%s], but a tensor is "
                 "over %lld elements (or negative), so the target skips it and there are no values to write\n",
                 s.pattern.c_str(), shapes.c_str(), static_cast<long long>(kMaxFuzzElements));
    return 1;
  }
  Case c = decoded->c;
  c.origin.emplace_back("target", target);
  c.origin.emplace_back("artifact", std::filesystem::path(artifact).filename().string());
  const std::string text = write_case(c);
  if (out_path.empty()) {
    std::fputs(text.c_str(), stdout);
  } else {
    std::ofstream out(out_path, std::ios::binary);
    out << text;
    if (!out) return usage_error("cannot write " + out_path);
    std::fprintf(stderr, "wrote %s\n", out_path.c_str());
  }

  // The target's backends and options: the differential targets share differential_setup();
  // fuzz_backends_diff runs eigen and xtensor with default options; fuzz_external runs only its own
  // backend; fuzz_pattern runs no backend
  // (its case is checked by the reference, which `check` always runs, on fused).
  TargetSetup setup;
  if (target == "fuzz_einsum_diff" || target == "fuzz_reduce_diff" || target == "fuzz_vjp_diff") {
    setup = differential_setup(decoded->exec, bytes);
  } else if (target == "fuzz_backends_diff") {
    setup.backends = {"eigen", "xtensor"};
  } else if (target == "fuzz_external") {
    setup.run.limits = fuzz_limits();  // the backend EINFUZZ_BACKEND names (extra_backends), as the target runs it
  } else {
    setup.backends = {"fused"};
  }
  setup.backends.insert(setup.backends.end(), extra_backends.begin(), extra_backends.end());
  auto owned = make_backends(setup.backends, setup.run);
  if (!owned) {
    std::fprintf(stderr, "einfuzz_artifact_to_case: %s\n", render(owned.error()).c_str());
    return 1;
  }
  std::vector<Backend*> backends;
  for (const auto& b : *owned) backends.push_back(b.get());
  const CaseOutcome outcome = run_case(c, backends, setup.run);
  for (const BackendOutcome& b : outcome.backends) {
    std::fprintf(stderr, "verdict: %s %s\n", b.backend.c_str(), b.verdict.label().c_str());
  }
  if (!out_path.empty()) {
    const std::string command = reproduce_command(out_path, {"build/einfuzz", setup.backends, setup.run, {}});
    std::fprintf(stderr, "reproduce: %s\n", command.c_str());
  }
  return 0;
}
