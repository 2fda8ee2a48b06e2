// `--isolate`: run any backend's `run` in a forked worker with a per-case timeout and an
// address-space limit, so crashes, hangs and runaway allocations become verdicts, not harness deaths.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "einfuzz/backends/backend.hpp"
#include "einfuzz/core/case.hpp"
#include "einfuzz/core/limits.hpp"

namespace einfuzz {

/// How one isolated call is bounded.
struct IsolateOptions {
  double timeout_seconds = 10;  ///< wall-clock per case; the worker is killed (SIGKILL) past it
  /// RLIMIT_AS of the worker (0: none). Not applied in AddressSanitizer builds, whose shadow
  /// memory needs terabytes of address space; hangs and crashes are still isolated there.
  std::uint64_t address_space_bytes = std::uint64_t{8} << 30;
  Limits limits;                ///< caps the result shape read back from the worker
};

/// Forks a worker that runs `backend.run(c)` and sends the result back through a pipe. The worker
/// checksums the inputs before and after (a write is Fault{input_modified}); an exception is
/// Fault{crash} ("the backend threw: …", std::bad_alloc: "out of memory"); a worker killed by a
/// signal or exiting without a result is Fault{crash} with the signal and the limit in force; no
/// result within the timeout is Fault{timeout}. The parent's copy of `backend` is never touched, so
/// state a backend keeps between calls (caches, counters) does not carry over from the worker.
/// `forked`, when given, is set to whether a worker was started (not when a stop was requested
/// before, or the pipe or the fork failed: then the backend was not called).
BackendResult run_isolated(Backend& backend, const Case& c, const IsolateOptions& options, bool* forked = nullptr);

/// `backend` with every `run` isolated (same name and capabilities). Out-of-process backends
/// (`cmd:`, `numpy`) are returned unchanged: they are isolated already, and a forked worker must
/// not share their pipes.
std::unique_ptr<Backend> isolate_backend(std::unique_ptr<Backend> backend, const IsolateOptions& options);

/// isolate_backend on each element, in place (for the fuzz campaign and `einfuzz check --isolate`).
void isolate_backends(std::vector<std::unique_ptr<Backend>>& backends, const IsolateOptions& options);

}  // namespace einfuzz
