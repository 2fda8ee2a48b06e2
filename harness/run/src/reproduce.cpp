// The reproduce command builder (see reproduce.hpp): compares every verdict-deciding option with its
// default and spells the ones that differ.
#include "einfuzz/harness/reproduce.hpp"

#include <charconv>

#include "einfuzz/core/precision_text.hpp"
#include "einfuzz/core/text.hpp"

namespace einfuzz {
namespace {

/// Shortest text that reads back as the same double.
std::string shortest(double v) {
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

}  // namespace

std::vector<std::string> verdict_option_args(const RunOptions& run, const BackendSpecOptions& backend_options) {
  const RunOptions d;
  const BackendSpecOptions ds;
  std::vector<std::string> a;
  const auto add = [&](const char* flag, const std::string& value) {
    a.emplace_back(flag);
    a.push_back(value);
  };
  if (run.exec.threads != d.exec.threads) add("--threads", std::to_string(run.exec.threads));
  if (run.exec.tile_width != d.exec.tile_width) add("--tile", std::to_string(run.exec.tile_width));
  if (run.exec.tasks != d.exec.tasks) add("--tasks", std::to_string(run.exec.tasks));
  if (run.judge.strict_nan_payload) a.emplace_back("--strict-nan-payload");
  if (run.strict_signed_zero) a.emplace_back("--strict-signed-zero");
  if (run.shuffle_seed != d.shuffle_seed) add("--shuffle-seed", std::to_string(run.shuffle_seed));
  if (run.limits.max_operands != d.limits.max_operands) add("--max-operands", std::to_string(run.limits.max_operands));
  if (run.limits.max_labels != d.limits.max_labels) add("--max-labels", std::to_string(run.limits.max_labels));
  if (run.limits.max_tensor_elements != d.limits.max_tensor_elements) {
    add("--max-tensor-elements", std::to_string(run.limits.max_tensor_elements));
  }
  if (run.limits.max_materialised_elements != d.limits.max_materialised_elements) {
    add("--max-materialised-elements", std::to_string(run.limits.max_materialised_elements));
  }
  if (backend_options.timeout_seconds != ds.timeout_seconds) add("--timeout", shortest(backend_options.timeout_seconds));
  if (backend_options.isolate) a.emplace_back("--isolate");
  if (run.profile) add("--profile", profile_text(*run.profile));
  return a;
}

std::string reproduce_command(const CaseSource& source, const ReproduceContext& context) {
  std::string out = context.command + " check";
  if (const auto* file = std::get_if<std::string>(&source)) {
    out += " --case " + shell_quote(*file);
  } else {
    const CaseFlags& f = std::get<CaseFlags>(source);
    if (f.reduce) out += " --reduce " + shell_quote(*f.reduce);
    for (const std::string& axis : f.axes) out += " --axis " + shell_quote(axis);
    out += " --shapes " + shell_quote(f.shapes) + " --dtype " + shell_quote(f.dtype) + " --values " +
           shell_quote(f.values) + " --seed " + std::to_string(f.seed);
    if (f.vjp) out += " --vjp";
    if (f.vjp && f.cotangent_values) out += " --cotangent-values " + shell_quote(*f.cotangent_values);
    if (f.vjp && f.cotangent_shape) out += " --cotangent-shape " + shell_quote(*f.cotangent_shape);
  }
  if (context.backends != std::vector<std::string>{"fused"}) {
    std::string list;
    const auto flush = [&] {
      if (!list.empty()) out += " --backend " + shell_quote(list);
      list.clear();
    };
    for (const std::string& b : context.backends) {
      if (b.rfind("cmd:", 0) == 0) {
        flush();
        out += " --backend " + shell_quote(b);
      } else {
        list += (list.empty() ? "" : ",") + b;
      }
    }
    flush();
  }
  // Flags and numbers: nothing a shell would split or expand.
  for (const std::string& arg : verdict_option_args(context.run, context.backend_options)) out += " " + arg;
  // The pattern last, after '--': a pattern starting with '-' (e.g. '->') is never taken for a flag.
  if (const auto* f = std::get_if<CaseFlags>(&source)) out += " -- " + shell_quote(f->pattern);
  return out;
}

std::vector<std::string> expand_backend_specs(std::span<const std::string> specs) {
  std::vector<std::string> out;
  for (const std::string& s : specs) {
    if (s == "all") {
      for (std::string& name : builtin_backend_names()) out.push_back(std::move(name));
    } else {
      out.push_back(s);
    }
  }
  return out;
}

}  // namespace einfuzz
