// The one place that turns backend specs into backends.
#include "einfuzz/harness/backend_registry.hpp"

namespace einfuzz {

Result<std::vector<std::unique_ptr<Backend>>> make_backends(std::span<const std::string> specs,
                                                            const RunOptions& options) {
  std::vector<std::unique_ptr<Backend>> out;
  for (const std::string& spec : specs) {
    if (spec == "all") {
      for (const std::string& name : builtin_backend_names()) out.push_back(make_builtin_backend(name, options));
      continue;
    }
    if (auto b = make_builtin_backend(spec, options)) {
      out.push_back(std::move(b));
      continue;
    }
    std::string known;
    for (const auto& n : builtin_backend_names()) known += (known.empty() ? "" : ", ") + n;
    return make_diagnostic(Code::invalidArgument,
                           "unknown backend '" + spec + "' (available: " + known + ", all)");
  }
  return out;
}

}  // namespace einfuzz
