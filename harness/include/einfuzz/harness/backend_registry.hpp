// Backend specs → backends: built-in names, `all`, and (PROTOCOL.md) `cmd:COMMAND`, `plugin:PATH.so`.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <vector>

#include "einfuzz/backends/backend.hpp"
#include "einfuzz/harness/run.hpp"

namespace einfuzz {

/// Builds one backend per spec, in order; `all` expands to every built-in backend available in
/// this build. An unknown spec is `invalidArgument` naming the available ones.
Result<std::vector<std::unique_ptr<Backend>>> make_backends(std::span<const std::string> specs,
                                                            const RunOptions& options);

}  // namespace einfuzz
