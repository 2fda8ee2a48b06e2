// `einfuzz profile`: detect a backend's precision profile per dtype (ORACLE §8) and compare it with
// the declared one; flags → detect_profile → a table or one JSON document.
#include <nlohmann/json.hpp>

#include <filesystem>
#include <iostream>
#include <memory>

#include "einfuzz/core/atomic_write.hpp"
#include "einfuzz/core/text.hpp"
#include "einfuzz/harness/check_command.hpp"
#include "einfuzz/harness/generate.hpp"
#include "einfuzz/harness/profile.hpp"
#include "einfuzz/harness/reproduce.hpp"
#include "subcommand.hpp"

namespace einfuzz::cli {
namespace {

constexpr const char* kProfileFooter = R"(
Runs cases built to separate precision profiles through the backend — long sums of ones (f16 stops
at 2048, bf16 at 256 when accumulating in the storage type), 2^p followed by ones, cancellation
series 2^e + x − 2^e, half-ulp ties, and for f32 TF32-sensitive products — each as an einsum sum,
outer-axis sum, dot product and matmul and as reduce sums and a mean, and judges every result under
each candidate profile with ORACLE §8's bound: accumulate in the dtype, f32 or f64 (never narrower
than the dtype), inputs as they are or (f32) rounded to TF32. Per dtype it prints the most precise
profile every result satisfied, the backend's declared profile, and for every excluded profile the
case that excludes it (written under --out) with the command that reproduces the exclusion:
`einfuzz check --case FILE --backend B --profile EXCLUDED` exits 1 with the same element (without
--profile it judges under the declared profile).

Dtypes: --dtype f16,bf16 (default: the float dtypes the backend declares). A dtype the backend does
not declare is reported unsupported and runs nothing (never a finding).

Examples:  einfuzz profile --backend numpy --dtype f16
           einfuzz profile --backend eigen --json
           einfuzz profile --backend 'cmd:python3 my_backend.py'

Exit status: 0 every dtype's detected profile is the declared one, 1 a finding (the declared
profile is broken by some result, detection differs from it, or a probe crashed, timed out or was
rejected), 2 bad input (an unknown backend or dtype, a dtype without a profile), 3 an evidence case
file could not be written.)";

struct ProfileFlags {
  std::string backend;
  std::optional<std::string> dtypes;
  bool json = false;
  std::string out = "profile-cases";
  VerdictFlags verdict;
};

nlohmann::json profile_json(const PrecisionProfile& p) {
  return {{"accumulate", std::string(dtype_name(p.accumulate))},
          {"round_inputs", p.round_inputs == InputRounding::none ? nlohmann::json(nullptr)
                                                                 : nlohmann::json(std::string(input_rounding_name(p.round_inputs)))}};
}

std::string case_text(const Case& c) {
  std::string shapes;
  for (const Tensor& t : c.inputs) shapes += (shapes.empty() ? "" : ",") + format_shape(t.shape());
  return std::string(op_name(c.op)) + std::string(c.reduction ? " " + *c.reduction : std::string()) + " " + shell_quote(c.pattern) +
         " shapes " + shapes;
}

std::string element_text(const Verdict& v, const std::string& backend) {
  if (!v.first) return v.label() + (v.detail.empty() ? "" : ": " + v.detail);
  const ElementEvidence& e = *v.first;
  std::string coords;
  for (std::int64_t c : e.coords) coords += (coords.empty() ? "" : ", ") + std::to_string(c);
  return v.label() + " at [" + coords + "]: " + backend + " " + e.actual + ", exact " + e.exact + ", bound " +
         e.bound_text;
}

/// Where one piece of evidence was written and how to reproduce it.
struct Stored {
  std::string file, reproduce, error;
};

/// Writes `c` under --out; its reproduce command judges it under `profile` (an excluded profile:
/// the command fails as the exclusion says) or, without one, under the declared profile.
Stored store(const Case& c, const ProfileFlags& f, const std::optional<PrecisionProfile>& profile) {
  Stored s;
  std::error_code ec;
  std::filesystem::create_directories(f.out, ec);
  s.file = (std::filesystem::path(f.out) / case_file_name(c)).string();
  s.error = write_file_atomically(s.file, write_case(c));
  RunOptions run = f.verdict.run;
  run.profile = profile;
  s.reproduce = reproduce_command(s.file, {cli_spelling(), {f.backend}, run, f.verdict.backend_options});
  return s;
}

std::string status_of(const DtypeProfileReport& r) {
  if (!r.declared_dtype) return "unsupported";
  if (r.judged == 0) return r.faulted() ? "faulted" : "nothing-ran";
  if (!r.declared_holds) return "declared-violated";
  if (r.faulted()) return "faulted";
  if (!r.detected || !(*r.detected == r.declared)) return "mismatch";
  return "match";
}

int run_profile(const ProfileFlags& f) {
  if (const auto specs = split_backend_list(f.backend); specs.size() != 1) {
    std::cerr << "error[invalidArgument]: profile takes one backend, '" << f.backend << "' names " << specs.size()
              << "\n";
    return 2;
  }
  auto backend = make_single_backend("profile", f.backend, f.verdict);
  if (!backend) return 2;
  std::vector<DType> dtypes;
  if (f.dtypes) {
    auto parsed = parse_dtype_list(*f.dtypes, "--dtype");
    if (!parsed) {
      std::cerr << render(parsed.error()) << "\n";
      return 2;
    }
    for (DType d : *parsed) {
      if (!is_float(d)) {
        std::cerr << "error[invalidArgument]: --dtype: " << dtype_name(d)
                  << " has no precision profile (profiles are for f16, bf16, f32, f64)\n";
        return 2;
      }
    }
    dtypes = *parsed;
  } else {
    const auto& declared = backend->capabilities().dtypes;
    for (DType d : {DType::f16, DType::bf16, DType::f32, DType::f64}) {
      if (std::find(declared.begin(), declared.end(), d) != declared.end()) dtypes.push_back(d);
    }
  }
  const std::string name(backend->name());
  bool finding = false, io_error = false;
  nlohmann::json j = nlohmann::json::object();
  if (!f.json) {
    std::cout << "backend " << name << " (" << backend->capabilities().version << ")\n";
  }
  for (DType d : dtypes) {
    const std::vector<ProfileProbe> probes = profile_probes(d);
    const DtypeProfileReport r = detect_profile(*backend, d, probes, f.verdict.run);
    finding |= r.finding();
    const std::string status = status_of(r);
    nlohmann::json entry;
    entry["accumulate"] = r.detected ? nlohmann::json(std::string(dtype_name(r.detected->accumulate))) : nlohmann::json(nullptr);
    entry["round_inputs"] = r.detected && r.detected->round_inputs != InputRounding::none
                                ? nlohmann::json(std::string(input_rounding_name(r.detected->round_inputs)))
                                : nlohmann::json(nullptr);
    entry["declared"] = profile_json(r.declared);
    entry["status"] = status;
    entry["probes"] = probes.size();
    entry["judged"] = r.judged;
    entry["satisfied"] = nlohmann::json::array();
    for (const PrecisionProfile& p : r.satisfied) entry["satisfied"].push_back(profile_json(p));
    entry["evidence"] = nlohmann::json::array();
    entry["problems"] = nlohmann::json::array();
    const std::string dn(dtype_name(d));
    if (!f.json) {
      std::cout << dn << std::string(dn.size() < 6 ? 6 - dn.size() : 1, ' ');
      if (!r.declared_dtype) {
        std::cout << "unsupported: " << name << " does not declare " << dn << " (nothing ran)\n";
      } else {
        std::cout << "detected " << (r.detected ? profile_text(*r.detected) : std::string("none")) << ", declared "
                  << profile_text(r.declared) << ": " << status << " (" << r.judged << " of " << probes.size()
                  << " probes judged)\n";
      }
    }
    for (const ProfileExclusion& x : r.excluded) {
      const Stored s = store(x.c, f, x.profile);
      io_error |= !s.error.empty();
      if (!s.error.empty()) std::cerr << "error[io]: cannot write the evidence case: " << s.error << "\n";
      nlohmann::json e = {{"excludes", profile_json(x.profile)}, {"probe", x.probe},
                          {"case", case_text(x.c)}, {"verdict", x.verdict.label()},
                          {"case_file", s.file}, {"reproduce", s.reproduce}};
      if (x.verdict.first) {
        e["element"] = {{"coords", x.verdict.first->coords}, {"actual", x.verdict.first->actual},
                        {"exact", x.verdict.first->exact}, {"bound", x.verdict.first->bound_text}};
      }
      entry["evidence"].push_back(e);
      if (!f.json) {
        std::cout << "      excludes " << profile_text(x.profile) << (x.profile == r.declared ? " (declared)" : "")
                  << ": " << x.probe << " (" << case_text(x.c) << ")\n"
                  << "        " << element_text(x.verdict, name) << "\n"
                  << "        reproduce: " << s.reproduce << "\n";
      }
    }
    for (const ProbeProblem& p : r.problems) {
      const bool fault = p.verdict.kind != VerdictKind::unsupported;
      nlohmann::json e = {{"probe", p.probe}, {"verdict", p.verdict.label()}, {"detail", p.verdict.detail}};
      if (fault) {
        const Stored s = store(p.c, f, std::nullopt);
        io_error |= !s.error.empty();
        e["case_file"] = s.file;
        e["reproduce"] = s.reproduce;
        if (!f.json) {
          std::cout << "      " << p.probe << ": " << p.verdict.label() << " " << p.verdict.detail << "\n"
                    << "        reproduce: " << s.reproduce << "\n";
        }
      }
      entry["problems"].push_back(e);
    }
    j[dn] = entry;
  }
  if (f.json) std::cout << j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
  if (io_error) return kExitIncomplete;
  return finding ? 1 : 0;
}

}  // namespace

Subcommand add_profile(CLI::App& app) {
  auto f = std::make_shared<ProfileFlags>();
  CLI::App* cmd = add_subcommand(app, "profile",
                                 "Detect a backend's precision profile per dtype (accumulator, TF32 input rounding) "
                                 "and compare it with the declared one",
                                 kProfileFooter);
  cmd->add_option("--backend", f->backend, "the backend (one spec; see `einfuzz backends`)")->required();
  cmd->add_option("--dtype", f->dtypes, "float dtypes, comma-separated: f16,bf16,f32,f64 (default: the declared ones)")
      ->type_name("LIST");
  cmd->add_flag("--json", f->json, "print one JSON document keyed by dtype instead of the table");
  cmd->add_option("--out", f->out, "directory for the evidence case files")->capture_default_str();
  add_verdict_options(cmd, f->verdict);
  return {cmd, [f] {
            guard_in_process_plugins({f->backend});
            install_fatal_signal_cleanup();
            return finish_guarded(run_profile(*f));
          }};
}

}  // namespace einfuzz::cli
