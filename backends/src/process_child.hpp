// Internal to the `cmd:` backend: the child-process plumbing that holds no backend's state — the
// registry of running process groups (for signal handlers), the stop flag, the token that finds a
// backend's escaped descendants, the stderr ring buffer and the texts of exit statuses.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <string>

namespace einfuzz::child {

/// Records a running backend's process group for kill_backend_process_groups (async-signal-safe
/// reads; at most 256 at once, more are not recorded).
void register_group(pid_t group);
/// Forgets a process group recorded by register_group.
void unregister_group(pid_t group);
/// A new `EINFUZZ_BACKEND_TOKEN=…` environment entry, unique to this harness process and call.
std::string next_token();
/// SIGKILLs every process of this user whose initial environment holds `token`, except this one:
/// the descendants that left the backend's process group (setsid, setpgid) and so escape a group
/// kill, also after their parent exited and they were reparented to init.
void kill_token_holders(const std::string& token);

/// "2.5 s".
std::string seconds_text(double s);
/// "9 (SIGKILL)".
std::string signal_text(int sig);
/// A wait status in words: "exited with status 3", "killed by signal 9 (SIGKILL)", ….
std::string status_text(int status);
/// Sets O_NONBLOCK on `fd`.
void set_nonblocking(int fd);

/// The last bytes a process wrote to stderr, in a fixed-size ring.
class StderrRing {
 public:
  explicit StderrRing(std::size_t capacity);
  void append(const char* data, std::size_t n);
  void clear();
  /// "; stderr (last 3 of 20481 bytes): a | b | c", or "" when nothing was written.
  std::string tail(std::size_t max_lines) const;

 private:
  std::size_t capacity_;
  std::string text_;
  std::uint64_t total_ = 0;
};

}  // namespace einfuzz::child
