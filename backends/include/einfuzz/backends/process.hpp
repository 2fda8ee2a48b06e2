// Out-of-process backends (PROTOCOL.md A, `einfuzz-backend/1`): a command started once with
// `/bin/sh -c`, kept alive across cases, spoken to over stdin/stdout; every fault is a verdict.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "einfuzz/backends/backend.hpp"
#include "einfuzz/core/limits.hpp"

namespace einfuzz {

/// How one `cmd:` backend is run and bounded.
struct ProcessOptions {
  std::string command;                            ///< run with `/bin/sh -c COMMAND`
  std::string name;                               ///< shown in reports; empty: "cmd:" + command
  double timeout_seconds = 10;                    ///< per case: request written and response read
  double hello_timeout_seconds = 30;              ///< start-up and hello (interpreters import slowly)
  Limits limits;                                  ///< caps every shape the backend sends back
  std::size_t max_line_bytes = std::size_t{1} << 20;  ///< a longer JSON line is output flooding
  std::size_t stderr_bytes = std::size_t{1} << 16;    ///< ring buffer of the backend's last stderr bytes
  std::size_t stderr_lines = 8;                   ///< stderr lines quoted in a fault's evidence
};

/// A PROTOCOL A backend. The process is started (and the hello exchanged) on construction and
/// restarted before the next case after any fault. `run` never throws for anything the process
/// does: exit or signal → Fault{crash}, silence past the timeout → Fault{timeout} (the process group
/// is killed), malformed JSON, a wrong id, a non-UTF-8 line, a short or long payload, a shape over
/// the limits, a line over `max_line_bytes`, a second message already on the pipe → Fault{protocol}.
/// Extra bytes that arrive only after an answer was returned are charged to that earlier request
/// (late_faults()), and the case that finds them runs on a restarted process. A case the wire cannot
/// carry (PROTOCOL A §2: supplied lengths that repeat a name, a reduce without exactly one input) is
/// Unsupported and never sent. stderr is drained continuously into a bounded ring buffer, so a
/// flooding backend can neither block nor exhaust the harness.
class ProcessBackend final : public Backend {
 public:
  explicit ProcessBackend(ProcessOptions options);
  ~ProcessBackend() override;
  ProcessBackend(const ProcessBackend&) = delete;
  ProcessBackend& operator=(const ProcessBackend&) = delete;

  std::string_view name() const override;
  /// From the hello (PROTOCOL A §1, defaults for missing keys); the defaults when no hello
  /// succeeded yet. Includes the `strided_inputs` extension (docs/protocol.md).
  const Capabilities& capabilities() const override;
  BackendResult run(const Case& c) override;
  /// Pipelined: hands a copy of `c` to this backend's own thread, which writes the request at once
  /// and reads the answer exactly as `run` does (the timeout counts from that send), so the caller
  /// and several backends work at the same time. A case still in flight (never collected) is
  /// waited for first and its result discarded.
  void submit(const Case& c) override;
  /// Waits for the submitted case's result (what `run` would have returned for it).
  BackendResult collect() override;
  bool concurrent() const override { return true; }

  /// Why the last start failed (no hello), or nullopt when the process is up.
  const std::optional<Fault>& start_failure() const;
  /// Times the process was started again after a fault.
  int restarts() const;
  /// `"numpy"` or `"einops"` as the hello declared.
  const std::string& notation() const;
  /// Process id of the running backend (its process group), or -1.
  int pid() const;
  /// Stream faults found after the answer of the request they belong to had been returned: those
  /// not taken yet and the last 16 taken. A hello line in place of an answer counts once per request.
  const std::vector<LateFault>& late_faults() const;
  /// The late faults found since the last call.
  std::vector<LateFault> take_late_faults() override;
  /// PROTOCOL A §5 now: bye, stdin closed, and what the process still writes to stdout before it
  /// exits (at most 1 s) is a late fault of the last request answered. The next case starts the
  /// process again.
  void finish() override;

 private:
  struct Impl;
  struct Pipeline;
  std::unique_ptr<Impl> impl_;
  std::unique_ptr<Pipeline> pipeline_;  // the thread submit hands cases to, started by the first submit
};

std::unique_ptr<ProcessBackend> make_process_backend(ProcessOptions options);

/// Asks every backend call in progress (PROTOCOL A exchanges, --isolate workers) to give up within
/// about 100 ms, killing the process it waits for; async-signal-safe, for SIGINT/SIGTERM handlers.
/// A call given up this way is Fault{timeout, "interrupted by signal …"}: the campaign that asked
/// discards the case it was running. Stays set until clear_stop_request().
void request_stop(int signal) noexcept;
/// The signal given to request_stop, or 0.
int stop_requested() noexcept;
/// Forgets a stop request (tests that run several campaigns in one process).
void clear_stop_request() noexcept;

/// SIGKILLs the process group of every running `cmd:` backend; async-signal-safe, for a handler
/// that then lets a fatal signal end the harness (descendants that left their group, found by
/// token when the harness kills normally, are out of reach of a signal handler).
void kill_backend_process_groups() noexcept;

/// The einsum `pattern` in numpy notation (PROTOCOL A §2), as sent in a request's `subscripts`:
/// labels renamed to `a..zA..Z` in first-appearance order over the operands then the output,
/// output explicit, `(a)` and `(a 1)` written as `a`. `...` is kept where numpy's rule agrees with
/// SEMANTICS §3 (the output has an ellipsis); an input ellipsis the output omits (summed in the
/// semantics, an error in numpy) is spelled as one label per ellipsis dimension, right-aligned over
/// the operands' `shapes` as §3 aligns them (`...` kept when the shapes give no ellipsis rank).
/// nullopt when the pattern does not parse, needs more than 52 labels, or uses a construct numpy
/// cannot spell (groups, unit or anonymous axes).
std::optional<std::string> numpy_subscripts(std::string_view pattern, std::span<const Shape> shapes);
/// The same without shapes: every ellipsis kept as `...` (for a library that sums an omitted
/// ellipsis itself, as torch does).
std::optional<std::string> numpy_subscripts(std::string_view pattern);

/// True when `bytes` is well-formed UTF-8 (no overlongs, surrogates or code points > U+10FFFF).
bool is_valid_utf8(std::string_view bytes) noexcept;

}  // namespace einfuzz
