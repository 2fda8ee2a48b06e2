// Out-of-process backends (PROTOCOL.md A, `einfuzz-backend/1`): a command started once with
// `/bin/sh -c`, kept alive across cases, spoken to over stdin/stdout; every fault is a verdict.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

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
/// the limits, a line over `max_line_bytes` → Fault{protocol}. stderr is drained continuously into
/// a bounded ring buffer, so a flooding backend can neither block nor exhaust the harness.
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

  /// Why the last start failed (no hello), or nullopt when the process is up.
  const std::optional<Fault>& start_failure() const;
  /// Times the process was started again after a fault.
  int restarts() const;
  /// `"numpy"` or `"einops"` as the hello declared.
  const std::string& notation() const;
  /// Process id of the running backend (its process group), or -1.
  int pid() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

std::unique_ptr<ProcessBackend> make_process_backend(ProcessOptions options);

/// The einsum `pattern` in numpy notation (PROTOCOL A §2): labels renamed to `a..zA..Z` in
/// first-appearance order over the operands then the output, `...` kept, output explicit,
/// `(a)` and `(a 1)` written as `a`. nullopt when the pattern does not parse, has more than 52
/// labels, or uses a construct numpy cannot spell (groups, unit or anonymous axes).
std::optional<std::string> numpy_subscripts(std::string_view pattern);

/// True when `bytes` is well-formed UTF-8 (no overlongs, surrogates or code points > U+10FFFF).
bool is_valid_utf8(std::string_view bytes) noexcept;

}  // namespace einfuzz
