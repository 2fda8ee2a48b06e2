// The child-process plumbing of the `cmd:` backend (process_child.hpp) and the public signal-handler
// entry points of process.hpp (request_stop, kill_backend_process_groups).
#include "process_child.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string_view>
#include <vector>

#include "einfuzz/backends/process.hpp"
#include "process_wire.hpp"

namespace einfuzz {
namespace {

/// The signal a SIGINT/SIGTERM handler passed to request_stop (0: none).
std::atomic<int> g_stop_signal{0};
static_assert(std::atomic<int>::is_always_lock_free, "read and written from a signal handler");

/// The process groups of the running backend processes, for kill_backend_process_groups (a
/// signal handler): fixed slots of lock-free atomics, 0 = free.
constexpr std::size_t kGroupSlots = 256;
std::atomic<pid_t> g_groups[kGroupSlots];
static_assert(std::atomic<pid_t>::is_always_lock_free, "read from a signal handler");

/// Tells each started backend process (and what it starts) apart: EINFUZZ_BACKEND_TOKEN in its
/// environment, inherited by every descendant that does not clear its environment.
std::atomic<std::uint64_t> g_token_serial{0};

}  // namespace

void kill_backend_process_groups() noexcept {
  for (auto& slot : g_groups) {
    if (const pid_t group = slot.load(); group > 0) ::kill(-group, SIGKILL);
  }
}

void request_stop(int signal) noexcept { g_stop_signal.store(signal == 0 ? SIGTERM : signal); }
int stop_requested() noexcept { return g_stop_signal.load(); }
void clear_stop_request() noexcept { g_stop_signal.store(0); }

namespace child {

using wire::printable;

void register_group(pid_t group) {
  for (auto& slot : g_groups) {
    pid_t free = 0;
    if (slot.compare_exchange_strong(free, group)) return;
  }
}

void unregister_group(pid_t group) {
  for (auto& slot : g_groups) {
    pid_t mine = group;
    if (slot.compare_exchange_strong(mine, 0)) return;
  }
}

std::string next_token() {
  return "EINFUZZ_BACKEND_TOKEN=" + std::to_string(::getpid()) + "." + std::to_string(++g_token_serial);
}

void kill_token_holders(const std::string& token) {
  if (token.empty()) return;
  DIR* proc = ::opendir("/proc");
  if (!proc) return;
  const std::string needle = token + '\0';
  const pid_t self = ::getpid();
  while (const dirent* e = ::readdir(proc)) {
    char* end = nullptr;
    const long pid = std::strtol(e->d_name, &end, 10);
    if (end == e->d_name || *end != '\0' || pid <= 0 || pid == self) continue;
    std::ifstream env(std::string("/proc/") + e->d_name + "/environ", std::ios::binary);
    if (!env) continue;  // gone, or another user's
    std::string text((std::istreambuf_iterator<char>(env)), std::istreambuf_iterator<char>());
    text += '\0';
    if (text.find('\0' + needle) != std::string::npos || text.rfind(needle, 0) == 0) {
      ::kill(static_cast<pid_t>(pid), SIGKILL);
    }
  }
  ::closedir(proc);
}

std::string seconds_text(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g s", s);
  return buf;
}

std::string signal_text(int sig) {
  const char* name = sigabbrev_np(sig);
  return std::to_string(sig) + (name ? std::string(" (SIG") + name + ")" : std::string());
}

std::string status_text(int status) {
  if (WIFSIGNALED(status)) return "killed by signal " + signal_text(WTERMSIG(status));
  if (WIFEXITED(status)) {
    const int code = WEXITSTATUS(status);
    std::string s = "exited with status " + std::to_string(code);
    // `sh -c` that did not exec its command reports a killed child as 128 + the signal.
    if (code > 128 && code < 128 + 65) s += " (the shell's report of signal " + signal_text(code - 128) + ")";
    return s;
  }
  return "ended with wait status " + std::to_string(status);
}

void set_nonblocking(int fd) { ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK); }

StderrRing::StderrRing(std::size_t capacity) : capacity_(std::max<std::size_t>(capacity, 256)) {}

void StderrRing::append(const char* data, std::size_t n) {
  total_ += n;
  if (n >= capacity_) {
    text_.assign(data + (n - capacity_), capacity_);
    return;
  }
  text_.append(data, n);
  if (text_.size() > 2 * capacity_) text_.erase(0, text_.size() - capacity_);
}

void StderrRing::clear() {
  text_.clear();
  total_ = 0;
}

std::string StderrRing::tail(std::size_t max_lines) const {
  std::string_view t(text_);
  if (t.size() > capacity_) t.remove_prefix(t.size() - capacity_);
  while (!t.empty() && (t.back() == '\n' || t.back() == '\r')) t.remove_suffix(1);
  if (t.empty()) return {};
  std::vector<std::string_view> lines;
  while (!t.empty() && lines.size() < max_lines) {
    const std::size_t nl = t.rfind('\n');
    const std::string_view line = nl == std::string_view::npos ? t : t.substr(nl + 1);
    lines.push_back(line);
    t = nl == std::string_view::npos ? std::string_view() : t.substr(0, nl);
  }
  std::string out = "; stderr (" + std::to_string(total_) + " bytes in all, last " + std::to_string(lines.size()) +
                    " line" + (lines.size() == 1 ? "" : "s") + "): ";
  for (std::size_t i = lines.size(); i-- > 0;) {
    out += printable(lines[i], 300);
    if (i) out += " | ";
  }
  return out;
}


}  // namespace child
}  // namespace einfuzz
