// The one place that turns backend specs into backends: the table of built-ins (name, family,
// factory, availability) that `all`, the names, the families and the "unknown backend" message read;
// `cmd:` and `plugin:`.
#include "einfuzz/harness/backend_registry.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>

#include "einfuzz/backends/eigen.hpp"
#include "einfuzz/backends/plugin.hpp"
#include "einfuzz/core/text.hpp"
#include "einfuzz/backends/process.hpp"
#include "einfuzz/backends/torch.hpp"
#include "einfuzz/backends/xtensor.hpp"

extern char** environ;

namespace einfuzz {

namespace {

/// True when `python -c 'import numpy'` exits 0 (its output discarded).
bool imports_numpy(const std::string& python) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
  std::string program = python;
  std::string flag = "-c";
  std::string code = "import numpy";
  char* argv[] = {program.data(), flag.data(), code.data(), nullptr};
  pid_t pid = -1;
  const int rc = ::posix_spawnp(&pid, program.c_str(), &actions, nullptr, argv, environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) return false;
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

std::optional<std::filesystem::path> find_client_script() {
  std::vector<std::filesystem::path> candidates;
#ifdef EINFUZZ_SOURCE_DIR
  candidates.push_back(std::filesystem::path(EINFUZZ_SOURCE_DIR) / "clients" / "numpy_backend.py");
#endif
  std::error_code ec;
  const auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) candidates.push_back(exe.parent_path() / "clients" / "numpy_backend.py");
  for (const auto& c : candidates) {
    if (std::filesystem::is_regular_file(c, ec)) return c;
  }
  return std::nullopt;
}

std::optional<NumpyClient> probe_numpy_client() {
  auto script = find_client_script();
  if (!script) return std::nullopt;
  std::vector<std::string> pythons;
  if (const char* env = std::getenv("EINFUZZ_PYTHON"); env && *env) pythons.emplace_back(env);
  // A python3 first on PATH (e.g. pyenv's) may lack numpy where Debian's /usr/bin/python3 has it.
  pythons.emplace_back("python3");
  pythons.emplace_back("/usr/bin/python3");
  for (const std::string& p : pythons) {
    if (imports_numpy(p)) return NumpyClient{p, *script};
  }
  return std::nullopt;
}

bool always() { return true; }
bool torch_available() { return !torch_backend_names().empty(); }
bool numpy_available() { return find_numpy_client().has_value(); }

std::unique_ptr<Backend> make_torch(TorchPath path) { return make_torch_backend(path); }

std::unique_ptr<Backend> make_numpy(bool optimize, const RunOptions& options, const BackendSpecOptions& spec) {
  const auto client = find_numpy_client();
  if (!client) return nullptr;
  return make_numpy_backend(optimize, *client, options.limits, spec.timeout_seconds);
}

/// One built-in backend: its name, its library family (backend_family), how to build it, and
/// whether this build and environment provide it (listed by builtin_backend_names, run by `all`).
struct BuiltinBackend {
  std::string_view name;
  std::string_view family;
  std::unique_ptr<Backend> (*make)(const RunOptions&, const BackendSpecOptions&);
  bool (*available)();
};

/// The registry: every built-in backend, in the order `all` runs them.
constexpr BuiltinBackend kBuiltins[] = {
    {"fused", "fused", [](const RunOptions& o, const BackendSpecOptions&) { return make_own_backend("fused", o); },
     always},
    {"shuffle", "shuffle",
     [](const RunOptions& o, const BackendSpecOptions&) { return make_own_backend("shuffle", o); }, always},
    {"eigen", "eigen", [](const RunOptions& o, const BackendSpecOptions&) { return make_eigen_backend(o.limits); },
     always},
    {"xtensor", "xtensor",
     [](const RunOptions& o, const BackendSpecOptions&) { return make_xtensor_backend(o.limits); }, always},
    {"torch", "torch", [](const RunOptions&, const BackendSpecOptions&) { return make_torch(TorchPath::automatic); },
     torch_available},
    {"torch-path-right", "torch",
     [](const RunOptions&, const BackendSpecOptions&) { return make_torch(TorchPath::right_first); }, torch_available},
    {"torch-path-outer", "torch",
     [](const RunOptions&, const BackendSpecOptions&) { return make_torch(TorchPath::outer_first); }, torch_available},
    {"torch-maxdim", "torch",
     [](const RunOptions&, const BackendSpecOptions&) { return make_torch_backend(TorchPath::automatic, TorchMinMax::max_dim); },
     torch_available},
    {"numpy", "numpy", [](const RunOptions& o, const BackendSpecOptions& s) { return make_numpy(false, o, s); },
     numpy_available},
    {"numpy-opt", "numpy", [](const RunOptions& o, const BackendSpecOptions& s) { return make_numpy(true, o, s); },
     numpy_available},
};

const BuiltinBackend* find_builtin(std::string_view name) {
  for (const BuiltinBackend& b : kBuiltins) {
    if (b.name == name) return &b;
  }
  return nullptr;
}

/// The built-in `name` with these spec options, or nullptr when unknown here.
std::unique_ptr<Backend> make_builtin(std::string_view name, const RunOptions& options,
                                      const BackendSpecOptions& spec_options) {
  const BuiltinBackend* b = find_builtin(name);
  return b ? b->make(options, spec_options) : nullptr;
}

/// `word` with the directories of the path in it dropped: `/usr/bin/python3` → `python3`,
/// `../clients/x.py` → `x.py`, `--model=/m/w.bin` → `--model=w.bin`; a word without '/' (or
/// ending in one) as it is.
std::string without_directories(std::string_view word) {
  const std::size_t slash = word.rfind('/');
  if (slash == std::string_view::npos || slash + 1 == word.size()) return std::string(word);
  const std::size_t first = word.find('/');
  const std::size_t eq = word.substr(0, first).rfind('=');
  const std::size_t keep = eq == std::string_view::npos ? 0 : eq + 1;
  return std::string(word.substr(0, keep)) + std::string(word.substr(slash + 1));
}

}  // namespace

std::string backend_family(std::string_view backend_name) {
  if (const BuiltinBackend* b = find_builtin(backend_name)) return std::string(b->family);
  // A command or a library is the same backend from any working directory or checkout: its
  // family keeps the words of the spec without their directories (backend_registry.hpp).
  if (backend_name.starts_with("plugin:")) return "plugin:" + without_directories(backend_name.substr(7));
  if (!backend_name.starts_with("cmd:")) return std::string(backend_name);
  std::string family = "cmd:";
  std::string_view rest = backend_name.substr(4);
  bool first = true;
  while (true) {
    const std::size_t start = rest.find_first_not_of(" \t");
    if (start == std::string_view::npos) break;
    rest.remove_prefix(start);
    const std::size_t end = std::min(rest.find_first_of(" \t"), rest.size());
    family += (first ? "" : " ") + without_directories(rest.substr(0, end));
    first = false;
    rest.remove_prefix(end);
  }
  return family;
}

std::unique_ptr<Backend> make_builtin_backend(std::string_view name, const RunOptions& options) {
  return make_builtin(name, options, {});
}

std::vector<std::string> builtin_backend_names() {
  std::vector<std::string> names;
  for (const BuiltinBackend& b : kBuiltins) {
    if (b.available()) names.emplace_back(b.name);
  }
  return names;
}

std::optional<NumpyClient> find_numpy_client() {
  static const std::optional<NumpyClient> client = probe_numpy_client();
  return client;
}

std::unique_ptr<Backend> make_numpy_backend(bool optimize, const NumpyClient& client, const Limits& limits,
                                            double timeout_seconds) {
  ProcessOptions o;
  o.command = shell_quote(client.python) + " " + shell_quote(client.script.string()) + (optimize ? " --optimize" : "");
  o.name = optimize ? "numpy-opt" : "numpy";
  o.limits = limits;
  o.timeout_seconds = timeout_seconds;
  return make_process_backend(std::move(o));
}

Result<std::vector<std::unique_ptr<Backend>>> make_backends(std::span<const std::string> specs,
                                                            const RunOptions& options,
                                                            const BackendSpecOptions& spec_options) {
  std::vector<std::unique_ptr<Backend>> out;
  const auto builtin = [&](const std::string& name) { return make_builtin(name, options, spec_options); };
  for (const std::string& spec : specs) {
    if (spec == "all") {
      for (const std::string& name : builtin_backend_names()) {
        auto b = builtin(name);
        if (!b) return make_diagnostic(Code::invalidArgument, "backend '" + name + "' is listed but cannot start: " +
                                                                  torch_unavailable_reason());
        out.push_back(std::move(b));
      }
      continue;
    }
    if (spec.rfind("cmd:", 0) == 0) {
      if (spec.size() == 4) return make_diagnostic(Code::invalidArgument, "'cmd:' needs a command, e.g. cmd:python3 my_backend.py");
      ProcessOptions o;
      o.command = spec.substr(4);
      o.limits = options.limits;
      o.timeout_seconds = spec_options.timeout_seconds;
      out.push_back(make_process_backend(std::move(o)));
      continue;
    }
    if (spec.rfind("plugin:", 0) == 0) {
      PluginOptions o;
      o.path = spec.substr(7);
      o.limits = options.limits;
      auto plugin = load_plugin_backend(o);
      if (!plugin) return std::move(plugin).error();
      out.push_back(std::move(*plugin));
      continue;
    }
    if (auto b = builtin(spec)) {
      out.push_back(std::move(b));
      continue;
    }
    std::string known;
    for (const auto& n : builtin_backend_names()) known += (known.empty() ? "" : ", ") + n;
    std::string hint;
    const BuiltinBackend* row = find_builtin(spec);  // a row of the table that is not available here
    if (row && row->family == "numpy") {
      hint = "; numpy needs a python3 that imports numpy (Debian: python3-numpy; or set EINFUZZ_PYTHON)";
    }
    if (spec.rfind("torch", 0) == 0) hint = "; " + torch_unavailable_reason();
    return make_diagnostic(Code::invalidArgument, "unknown backend '" + spec + "' (available: " + known +
                                                      ", all, cmd:COMMAND, plugin:PATH.so)" + hint);
  }
  if (spec_options.isolate) {
    IsolateOptions iso;
    iso.timeout_seconds = spec_options.timeout_seconds;
    iso.address_space_bytes = spec_options.address_space_bytes;
    iso.limits = options.limits;
    isolate_backends(out, iso);
  }
  return out;
}

}  // namespace einfuzz
