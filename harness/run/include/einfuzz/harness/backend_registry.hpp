// Backend specs → backends: built-in names, `all`, and (PROTOCOL.md) `cmd:COMMAND`, `plugin:PATH.so`.
#pragma once

#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "einfuzz/backends/backend.hpp"
#include "einfuzz/harness/isolate.hpp"
#include "einfuzz/harness/run.hpp"

namespace einfuzz {

/// How the backends named by specs are run.
struct BackendSpecOptions {
  double timeout_seconds = 10;  ///< per case: `cmd:`/numpy backends and `--isolate` workers
  bool isolate = false;         ///< run every in-process backend in a forked worker (isolate.hpp)
  /// RLIMIT_AS of an isolated worker (0: none; not applied under AddressSanitizer).
  std::uint64_t address_space_bytes = std::uint64_t{8} << 30;
};

/// Built-in backend by name (a row of the registry table), or nullptr when the name is unknown or
/// the backend is not available in this build or environment (torch module, numpy client).
std::unique_ptr<Backend> make_builtin_backend(std::string_view name, const RunOptions& options);

/// The harness's own built-ins, "fused" and "shuffle", as make_builtin_backend builds them (the
/// registry's rows call this); nullptr for any other name. In an object file of its own: a program
/// that runs only these two (the differential fuzz targets) links neither the registry nor the
/// library backends it names, whose code libFuzzer would otherwise scan for coverage on every run.
std::unique_ptr<Backend> make_own_backend(std::string_view name, const RunOptions& options);

/// The built-in names available here, in the registry table's order: what `all` expands to and
/// what the "unknown backend" message lists.
std::vector<std::string> builtin_backend_names();

/// Builds one backend per spec, in order; `all` expands to every built-in backend available in
/// this build; `cmd:COMMAND` starts a PROTOCOL A process (a failing start is a `crash` verdict on
/// each case, not an error here); `plugin:PATH` loads a PROTOCOL B library (a library that cannot
/// be loaded is `invalidArgument`). An unknown spec is `invalidArgument` naming the available ones.
Result<std::vector<std::unique_ptr<Backend>>> make_backends(std::span<const std::string> specs,
                                                            const RunOptions& options,
                                                            const BackendSpecOptions& spec_options = {});

/// The library family of a backend: the built-in variants of one library share it (`torch`,
/// `torch-path-right`, `torch-path-outer` → "torch"; `numpy`, `numpy-opt` → "numpy"); every other
/// backend is a family of its own. For `cmd:` and `plugin:` that is the spec's words without the
/// directories of the paths in them (`cmd:/usr/bin/python3 /src/clients/b.py --fast` →
/// `cmd:python3 b.py --fast`), so a relative and an absolute path, or another checkout, name the
/// same backend. Campaign groups and known divergences match on it.
std::string backend_family(std::string_view backend_name);

/// Where the numpy reference client runs: a Python that imports numpy, and clients/numpy_backend.py.
struct NumpyClient {
  std::string python;            ///< as the shell finds it: $EINFUZZ_PYTHON, python3, /usr/bin/python3
  std::filesystem::path script;  ///< the source tree's clients/, or clients/ next to the executable
};

/// The numpy client, or nullopt when no candidate Python imports numpy or the script is missing.
/// Probed once per process (the environment does not change during a run).
std::optional<NumpyClient> find_numpy_client();

/// `numpy` (einsum with optimize=False) or `numpy-opt` (optimize=True) as a process backend.
std::unique_ptr<Backend> make_numpy_backend(bool optimize, const NumpyClient& client, const Limits& limits,
                                            double timeout_seconds = 10);

}  // namespace einfuzz
