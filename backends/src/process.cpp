// PROTOCOL A client: spawns the backend's command, exchanges the hello and one request/response per
// case over pipes, and turns everything the process does wrong into a Fault with evidence.
#include "einfuzz/backends/process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <dirent.h>
#include <fstream>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <limits>
#include <map>
#include <set>
#include <span>
#include <thread>
#include <vector>

#include "einfuzz/core/check_reduce.hpp"
#include "einfuzz/core/parse.hpp"
#include "einfuzz/core/text.hpp"

extern char** environ;

namespace einfuzz {

namespace {

using Json = nlohmann::json;
using Clock = std::chrono::steady_clock;

constexpr std::string_view kProtocol = "einfuzz-backend/1";
/// Deeper JSON than this is refused before parsing (no backend needs more than three levels).
constexpr int kMaxJsonDepth = 32;
/// How long an exiting process may take to finish before it is killed (for its exit status).
constexpr std::chrono::milliseconds kExitGrace{1000};

/// The signal a SIGINT/SIGTERM handler passed to request_stop (0: none).
std::atomic<int> g_stop_signal{0};
static_assert(std::atomic<int>::is_always_lock_free, "read and written from a signal handler");

/// The process groups of the running backend processes, for kill_backend_process_groups (a
/// signal handler): fixed slots of lock-free atomics, 0 = free.
constexpr std::size_t kGroupSlots = 256;
std::atomic<pid_t> g_groups[kGroupSlots];
static_assert(std::atomic<pid_t>::is_always_lock_free, "read from a signal handler");

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

/// Tells each started backend process (and what it starts) apart: EINFUZZ_BACKEND_TOKEN in its
/// environment, inherited by every descendant that does not clear its environment.
std::atomic<std::uint64_t> g_token_serial{0};

/// SIGKILLs every process of this user whose initial environment holds `token`, except this one:
/// the descendants that left the backend's process group (setsid, setpgid) and so escape a group
/// kill, also after their parent exited and they were reparented to init.
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

std::string json_quote(std::string_view s) {
  return Json(std::string(s)).dump(-1, ' ', false, Json::error_handler_t::replace);
}

/// Printable, short: the evidence quotes what the backend sent, escaped.
std::string printable(std::string_view s, std::size_t max_length = 200) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (char ch : s) {
    if (out.size() >= max_length) {
      out += "...";
      break;
    }
    const auto c = static_cast<unsigned char>(ch);
    if (c >= 0x20 && c < 0x7f) {
      out += ch;
    } else {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 0xf];
    }
  }
  return out;
}

/// Nesting depth of a JSON text, ignoring brackets inside strings (decides before parsing).
int json_depth(std::string_view s) {
  int depth = 0;
  int max_depth = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      max_depth = std::max(max_depth, ++depth);
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return max_depth;
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

/// The last bytes a process wrote to stderr, in a fixed-size ring.
class StderrRing {
 public:
  explicit StderrRing(std::size_t capacity) : capacity_(std::max<std::size_t>(capacity, 256)) {}
  void append(const char* data, std::size_t n) {
    total_ += n;
    if (n >= capacity_) {
      text_.assign(data + (n - capacity_), capacity_);
      return;
    }
    text_.append(data, n);
    if (text_.size() > 2 * capacity_) text_.erase(0, text_.size() - capacity_);
  }
  void clear() {
    text_.clear();
    total_ = 0;
  }
  /// "; stderr (last 3 of 20481 bytes): a | b | c", or "" when nothing was written.
  std::string tail(std::size_t max_lines) const {
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

 private:
  std::size_t capacity_;
  std::string text_;
  std::uint64_t total_ = 0;
};

void set_nonblocking(int fd) { ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK); }

std::string letter(std::size_t k) {
  return std::string(1, k < 26 ? static_cast<char>('a' + k) : static_cast<char>('A' + (k - 26)));
}

/// The output dtype of a case: bool for any/all, else the case's dtype.
DType output_dtype(const Case& c) {
  if (c.op == Op::reduce && c.reduction && (*c.reduction == "any" || *c.reduction == "all")) return DType::boolean;
  return c.dtype;
}

}  // namespace

bool is_valid_utf8(std::string_view s) noexcept {
  std::size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      ++i;
      continue;
    }
    int extra = 0;
    std::uint32_t cp = 0;
    if (c >= 0xc2 && c <= 0xdf) {
      extra = 1;
      cp = c & 0x1f;
    } else if (c >= 0xe0 && c <= 0xef) {
      extra = 2;
      cp = c & 0x0f;
    } else if (c >= 0xf0 && c <= 0xf4) {
      extra = 3;
      cp = c & 0x07;
    } else {
      return false;
    }
    if (i + static_cast<std::size_t>(extra) >= s.size()) return false;
    for (int k = 1; k <= extra; ++k) {
      const auto d = static_cast<unsigned char>(s[i + static_cast<std::size_t>(k)]);
      if ((d & 0xc0) != 0x80) return false;
      cp = (cp << 6) | (d & 0x3f);
    }
    const std::uint32_t min_cp[] = {0, 0x80, 0x800, 0x10000};
    if (cp < min_cp[extra] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return false;
    i += static_cast<std::size_t>(extra) + 1;
  }
  return true;
}

namespace {

/// numpy_subscripts with and without shapes (`spell_summed_ellipsis` false: every `...` kept).
std::optional<std::string> spell_subscripts(std::string_view pattern, std::span<const Shape> shapes,
                                            bool spell_summed_ellipsis) {
  auto parsed = parse_einsum(pattern);
  if (!parsed) return std::nullopt;
  const auto has_ellipsis = [](const Expression& e) {
    return std::any_of(e.items.begin(), e.items.end(), [](const Item& item) {
      return std::any_of(item.atoms.begin(), item.atoms.end(),
                         [](const Atom& a) { return a.kind == Atom::Kind::ellipsis; });
    });
  };
  // SEMANTICS §3 sums an input ellipsis the output omits; numpy rejects `...` there. Then each
  // ellipsis slot E0..E(R-1) becomes a label of its own, right-aligned as §3 aligns them. That
  // needs every operand's ellipsis rank; when the shapes do not give one (wrong operand count, a
  // rank below the named items) `...` is kept and the backend rejects the case as the checker does.
  std::vector<std::int64_t> ellipsis_rank(parsed->operands.size(), 0);
  std::int64_t common_rank = 0;
  bool slots = false;
  if (spell_summed_ellipsis && !has_ellipsis(parsed->output) && shapes.size() == parsed->operands.size()) {
    slots = true;
    for (std::size_t k = 0; k < parsed->operands.size(); ++k) {
      const Expression& e = parsed->operands[k];
      if (!has_ellipsis(e)) continue;
      ellipsis_rank[k] = static_cast<std::int64_t>(shapes[k].size()) - static_cast<std::int64_t>(e.items.size() - 1);
      if (ellipsis_rank[k] < 0) slots = false;
      common_rank = std::max(common_rank, ellipsis_rank[k]);
    }
  }
  // Keys of the label table: names as written; ellipsis slot i as "...i" (no name contains '.').
  std::map<std::string, std::size_t> labels;
  bool representable = true;
  const auto label = [&](const std::string& key, std::string& out) {
    const auto [it, inserted] = labels.emplace(key, labels.size());
    if (it->second >= 52) {
      representable = false;
    } else {
      out += letter(it->second);
    }
  };
  const auto spell = [&](const Expression& e, std::int64_t rank) {
    std::string out;
    for (const Item& item : e.items) {
      if (item.atoms.size() != 1 || (item.group && item.atoms[0].kind == Atom::Kind::ellipsis)) {
        representable = false;  // (a b), (), (1), (...)
        continue;
      }
      const Atom& atom = item.atoms[0];
      if (atom.kind == Atom::Kind::ellipsis) {
        if (!slots) {
          out += "...";
          continue;
        }
        for (std::int64_t i = common_rank - rank; i < common_rank; ++i) label("..." + std::to_string(i), out);
      } else if (atom.kind == Atom::Kind::name) {
        label(atom.name, out);
      } else {
        representable = false;  // unit or anonymous axis
      }
    }
    return out;
  };
  std::string out;
  for (std::size_t k = 0; k < parsed->operands.size(); ++k) {
    if (k) out += ',';
    out += spell(parsed->operands[k], ellipsis_rank[k]);
  }
  out += "->" + spell(parsed->output, 0);
  if (!representable) return std::nullopt;
  return out;
}

}  // namespace

std::optional<std::string> numpy_subscripts(std::string_view pattern) { return spell_subscripts(pattern, {}, false); }

std::optional<std::string> numpy_subscripts(std::string_view pattern, std::span<const Shape> shapes) {
  return spell_subscripts(pattern, shapes, true);
}

struct ProcessBackend::Impl {
  explicit Impl(ProcessOptions o) : options(std::move(o)), err_ring(options.stderr_bytes) {
    name = options.name.empty() ? "cmd:" + options.command : options.name;
    caps.version = "(no hello yet)";
  }

  ProcessOptions options;
  std::string name;
  Capabilities caps;
  std::string notation = "einops";
  bool hello_done = false;  // capabilities come from the first successful hello
  std::optional<Fault> start_failure;
  int restarts = 0;
  int starts = 0;

  pid_t pid = -1;
  std::string token;  // EINFUZZ_BACKEND_TOKEN=… of the running process (kill_token_holders)
  int in_fd = -1;   // our end of the backend's stdin (a socket, so writes never raise SIGPIPE)
  int out_fd = -1;  // the backend's stdout
  int err_fd = -1;  // the backend's stderr
  std::string out_buf;  // stdout bytes received but not consumed yet
  StderrRing err_ring;
  std::int64_t next_id = 1;
  std::int64_t first_id = 1;      // the first request id this process was sent
  std::int64_t last_id = 0;       // the last request answered (its response complete), 0: none
  std::string last_pattern;       // that request's pattern, for the evidence of a late fault
  bool stale_answer = false;      // the fault just returned is a response to an earlier request
  std::vector<LateFault> late;

  // -------------------------------------------------------------------------------------------
  // Process lifetime

  void close_fds() {
    for (int* fd : {&in_fd, &out_fd, &err_fd}) {
      if (*fd >= 0) ::close(*fd);
      *fd = -1;
    }
    out_buf.clear();
  }

  /// Kills the whole process group and reaps the shell; returns the wait status (or -1).
  int kill_process() {
    int status = -1;
    if (pid > 0) {
      ::kill(-pid, SIGKILL);
      ::kill(pid, SIGKILL);
      while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
      }
      unregister_group(pid);
    }
    kill_token_holders(token);
    pid = -1;
    close_fds();
    return status;
  }

  /// Reads what stderr holds now, at most 1 MiB per call: a backend writing as fast as this reads
  /// must not keep the harness here past its deadlines.
  void drain_stderr() {
    if (err_fd < 0) return;
    char buf[8192];
    for (std::size_t total = 0; total < (std::size_t{1} << 20);) {
      const ssize_t n = ::read(err_fd, buf, sizeof buf);
      if (n > 0) {
        err_ring.append(buf, static_cast<std::size_t>(n));
        total += static_cast<std::size_t>(n);
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      if (n == 0) {
        ::close(err_fd);
        err_fd = -1;
      }
      return;
    }
  }

  /// The process stopped talking (stdout closed or stdin refused): give it a moment to exit, so
  /// the evidence can say how it ended, then kill what is left.
  Fault crash_fault(const std::string& what) {
    int status = -1;
    const pid_t group = pid;
    const auto until = Clock::now() + kExitGrace;
    while (pid > 0 && Clock::now() < until) {
      const pid_t r = ::waitpid(pid, &status, WNOHANG);
      if (r == pid) {
        pid = -1;
        break;
      }
      pollfd p{err_fd, POLLIN, 0};
      if (err_fd >= 0) {
        ::poll(&p, 1, 10);
        drain_stderr();
      } else {
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
      }
    }
    drain_stderr();
    std::string ended = "did not exit within " + std::to_string(kExitGrace.count()) + " ms; killed";
    if (pid > 0) {
      kill_process();
    } else {
      ended = status_text(status);
      // The shell is reaped but what it started may live on in the group (Linux keeps a group's
      // id reserved while it has members, so this cannot hit an unrelated process).
      ::kill(-group, SIGKILL);
      unregister_group(group);
      kill_token_holders(token);
      close_fds();
    }
    return Fault{FaultKind::crash, what + "; the process " + ended + err_ring.tail(options.stderr_lines)};
  }

  Fault timeout_fault(const std::string& what) {
    drain_stderr();
    const std::string tail = err_ring.tail(options.stderr_lines);
    kill_process();
    return Fault{FaultKind::timeout, what + "; the process group was killed" + tail};
  }

  Fault protocol_fault(const std::string& what) {
    drain_stderr();
    const std::string tail = err_ring.tail(options.stderr_lines);
    kill_process();  // the stream cannot be trusted any more: restart before the next case
    return Fault{FaultKind::protocol, what + tail};
  }

  std::optional<Fault> spawn() {
    int in_pair[2] = {-1, -1};
    int out_pipe[2] = {-1, -1};
    int err_pipe[2] = {-1, -1};
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, in_pair) != 0 || ::pipe2(out_pipe, O_CLOEXEC) != 0 ||
        ::pipe2(err_pipe, O_CLOEXEC) != 0) {
      const std::string why = std::strerror(errno);
      for (int fd : {in_pair[0], in_pair[1], out_pipe[0], out_pipe[1], err_pipe[0], err_pipe[1]}) {
        if (fd >= 0) ::close(fd);
      }
      return Fault{FaultKind::crash, "cannot create pipes for '" + printable(options.command) + "': " + why};
    }
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, in_pair[1], 0);
    posix_spawn_file_actions_adddup2(&actions, out_pipe[1], 1);
    posix_spawn_file_actions_adddup2(&actions, err_pipe[1], 2);
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    // Its own process group, so a timeout kills the shell and everything it started; default
    // signal dispositions and an empty mask whatever the harness uses.
    sigset_t none;
    sigemptyset(&none);
    sigset_t defaults;
    sigemptyset(&defaults);
    for (int sig : {SIGPIPE, SIGINT, SIGTERM, SIGCHLD}) sigaddset(&defaults, sig);
    posix_spawnattr_setpgroup(&attr, 0);
    posix_spawnattr_setsigmask(&attr, &none);
    posix_spawnattr_setsigdefault(&attr, &defaults);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
    std::string sh = "/bin/sh";
    std::string dash_c = "-c";
    std::string command = options.command;
    char* argv[] = {sh.data(), dash_c.data(), command.data(), nullptr};
    pid_t child = -1;
    // The environment plus this process's token, so descendants that leave the group can be found.
    token = "EINFUZZ_BACKEND_TOKEN=" + std::to_string(::getpid()) + "." + std::to_string(++g_token_serial);
    std::vector<char*> env;
    for (char** e = environ; *e != nullptr; ++e) {
      if (std::strncmp(*e, "EINFUZZ_BACKEND_TOKEN=", 22) != 0) env.push_back(*e);
    }
    env.push_back(token.data());
    env.push_back(nullptr);
    const int rc = ::posix_spawn(&child, "/bin/sh", &actions, &attr, argv, env.data());
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attr);
    ::close(in_pair[1]);
    ::close(out_pipe[1]);
    ::close(err_pipe[1]);
    if (rc != 0) {
      ::close(in_pair[0]);
      ::close(out_pipe[0]);
      ::close(err_pipe[0]);
      return Fault{FaultKind::crash, "cannot start /bin/sh -c '" + printable(options.command) + "': " + std::strerror(rc)};
    }
    pid = child;
    register_group(child);
    in_fd = in_pair[0];
    out_fd = out_pipe[0];
    err_fd = err_pipe[0];
    set_nonblocking(in_fd);
    set_nonblocking(out_fd);
    set_nonblocking(err_fd);
    err_ring.clear();
    out_buf.clear();
    return std::nullopt;
  }

  /// Starts the process and exchanges the hello; the fault (and no process) when either fails.
  /// The first start (on construction) may take hello_timeout_seconds; a restart happens inside a
  /// case, so its hello gets no more than the case's timeout.
  std::optional<Fault> start() {
    const double hello_timeout =
        starts == 0 ? options.hello_timeout_seconds : std::min(options.hello_timeout_seconds, options.timeout_seconds);
    if (starts++ > 0) ++restarts;
    first_id = next_id;
    if (auto f = spawn()) {
      start_failure = f;
      return f;
    }
    const std::string hello = "{\"protocol\":" + json_quote(kProtocol) + ",\"hello\":true}\n";
    auto line = exchange_line(hello, hello_timeout, "hello");
    if (auto* f = std::get_if<Fault>(&line)) {
      f->evidence = "hello failed: " + f->evidence;
      start_failure = *f;
      return *f;
    }
    if (auto f = read_hello(std::get<Json>(line))) {
      start_failure = protocol_fault("hello: " + f->evidence);
      return start_failure;
    }
    start_failure.reset();
    return std::nullopt;
  }

  // -------------------------------------------------------------------------------------------
  // One exchange: write the request, read one JSON line (and its payload)

  /// The parsed line and, when a payload follows, where to put it.
  struct Incoming {
    std::optional<Json> line;
    Tensor* payload = nullptr;       // set by the caller once the line is validated
    std::size_t payload_bytes = 0;   // bytes the line announced
    std::size_t payload_have = 0;    // bytes received so far
  };

  std::variant<Json, Fault> exchange_line(const std::string& request, double timeout_seconds, const char* what) {
    std::vector<std::span<const std::byte>> chunks = {std::as_bytes(std::span(request.data(), request.size()))};
    Incoming in;
    if (auto f = exchange(chunks, timeout_seconds, what, in, nullptr)) return *f;
    return std::move(*in.line);
  }

  /// Writes `chunks` and reads until one complete message: a JSON line, and when `on_line` asks
  /// for it (by setting `in.payload`), the payload bytes. Drains stderr throughout.
  template <class OnLine>
  std::optional<Fault> exchange(std::span<const std::span<const std::byte>> chunks, double timeout_seconds,
                                const char* what, Incoming& in, OnLine on_line) {
    const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                             std::chrono::duration<double>(timeout_seconds));
    std::size_t total = 0;
    for (auto c : chunks) total += c.size();
    std::size_t chunk = 0;
    std::size_t chunk_pos = 0;
    std::size_t written = 0;
    std::size_t received = 0;
    bool stdin_closed = false;
    const auto timeout_text = [&] {
      std::string s = "no complete " + std::string(what) + " response within " + seconds_text(timeout_seconds) +
                      " (wrote " + std::to_string(written) + " of " + std::to_string(total) +
                      " request bytes, received " + std::to_string(received) + " response bytes";
      if (in.payload) {
        s = "short payload: " + std::to_string(in.payload_have) + " of " + std::to_string(in.payload_bytes) +
            " announced bytes within " + seconds_text(timeout_seconds) + " (" + s.substr(s.find("(wrote") + 1);
      } else if (!out_buf.empty()) {
        s += "; an unterminated line: \"" + printable(out_buf, 120) + "\"";
      }
      return s + ")";
    };
    while (true) {
      // Consume what is buffered first: a line, then payload bytes.
      if (!in.line) {
        const std::size_t nl = out_buf.find('\n');
        if (nl == std::string::npos) {
          if (out_buf.size() > options.max_line_bytes) {
            return protocol_fault("output flooding: more than " + std::to_string(options.max_line_bytes) +
                                  " bytes without a newline, starting \"" + printable(out_buf, 120) + "\"");
          }
        } else {
          std::string line = out_buf.substr(0, nl);
          out_buf.erase(0, nl + 1);
          if (!line.empty() && line.back() == '\r') line.pop_back();
          if (line.size() > options.max_line_bytes) {
            return protocol_fault("output flooding: a line of " + std::to_string(line.size()) + " bytes (limit " +
                                  std::to_string(options.max_line_bytes) + ")");
          }
          if (!is_valid_utf8(line)) return protocol_fault("a line that is not UTF-8: \"" + printable(line) + "\"");
          if (json_depth(line) > kMaxJsonDepth) {
            return protocol_fault("JSON nested deeper than " + std::to_string(kMaxJsonDepth) + " levels");
          }
          Json j = Json::parse(line, nullptr, /*allow_exceptions=*/false);
          if (j.is_discarded()) return protocol_fault("malformed JSON: \"" + printable(line) + "\"");
          in.line = std::move(j);
          if constexpr (!std::is_same_v<OnLine, std::nullptr_t>) {
            if (auto f = on_line(in)) return f;
          }
          if (in.payload) {
            const std::size_t take = std::min(in.payload_bytes, out_buf.size());
            copy_payload(in, out_buf.data(), take);
            out_buf.erase(0, take);
          }
        }
      }
      if (in.line && (!in.payload || in.payload_have == in.payload_bytes)) {
        // Bytes already here beyond the message are a long payload (or an unsolicited message).
        drain_stdout_now();
        if (!out_buf.empty()) {
          const std::size_t nl = out_buf.find('\n');
          const bool message = nl != std::string::npos && Json::accept(std::string_view(out_buf).substr(0, nl));
          return protocol_fault(std::string(message ? "a second message" : in.payload ? "long payload" : "extra output") +
                                ": " + std::to_string(out_buf.size()) + " bytes after the complete message, starting \"" +
                                printable(out_buf, 60) + "\"");
        }
        return std::nullopt;
      }

      const auto now = Clock::now();
      if (const int sig = stop_requested()) {
        // The run is being stopped (SIGINT/SIGTERM): give up now; the caller discards this case.
        return timeout_fault("interrupted by signal " + signal_text(sig) + " while waiting for the " + what + " response");
      }
      if (now >= deadline) {
        if (in.payload) return protocol_fault(timeout_text() + ", then silence");
        return timeout_fault(timeout_text());
      }
      const auto wait_ms = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now).count() + 1;
      pollfd fds[3];
      nfds_t n = 0;
      const bool want_write = !stdin_closed && chunk < chunks.size();
      fds[n++] = {out_fd, POLLIN, 0};
      if (err_fd >= 0) fds[n++] = {err_fd, POLLIN, 0};
      const nfds_t write_slot = n;
      if (want_write) fds[n++] = {in_fd, POLLOUT, 0};
      // Short slices, so a stop request is seen within 100 ms.
      const int r = ::poll(fds, n, static_cast<int>(std::min<long long>(wait_ms, 100)));
      if (r < 0 && errno != EINTR) return crash_fault(std::string("poll failed: ") + std::strerror(errno));
      if (r <= 0) continue;
      if (err_fd >= 0 && (fds[1].revents & (POLLIN | POLLHUP | POLLERR))) drain_stderr();
      if (want_write && (fds[write_slot].revents & (POLLOUT | POLLHUP | POLLERR))) {
        while (chunk < chunks.size()) {
          const auto c = chunks[chunk];
          if (chunk_pos == c.size()) {
            ++chunk;
            chunk_pos = 0;
            continue;
          }
          const ssize_t w = ::send(in_fd, c.data() + chunk_pos, c.size() - chunk_pos, MSG_NOSIGNAL | MSG_DONTWAIT);
          if (w > 0) {
            chunk_pos += static_cast<std::size_t>(w);
            written += static_cast<std::size_t>(w);
            continue;
          }
          if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) break;
          // EPIPE / ECONNRESET: it stopped reading its stdin. Keep reading what it says.
          stdin_closed = true;
          break;
        }
      }
      if (fds[0].revents & (POLLIN | POLLHUP | POLLERR)) {
        const auto got = read_stdout(in);
        received += got.value_or(0);
        if (!got) {
          std::string s = "stdout closed before a complete " + std::string(what) + " response (received " +
                          std::to_string(received) + " bytes";
          if (in.payload) {
            s += "; short payload: " + std::to_string(in.payload_have) + " of " + std::to_string(in.payload_bytes) +
                 " announced bytes";
          }
          return crash_fault(s + ")");
        }
      }
    }
  }

  void copy_payload(Incoming& in, const char* data, std::size_t n) {
    if (n == 0) return;  // an empty output may have no storage at all
    auto* dst = reinterpret_cast<char*>(const_cast<std::byte*>(in.payload->bytes().data()));
    std::memcpy(dst + in.payload_have, data, n);
    in.payload_have += n;
  }

  /// Reads what stdout has now into out_buf (payload bytes straight into the output tensor, no
  /// second copy of a large result). Returns the bytes read, or nullopt at end of file.
  std::optional<std::size_t> read_stdout(Incoming& in) {
    std::size_t total = 0;
    char buf[65536];
    while (true) {
      ssize_t n = 0;
      if (in.line && in.payload && in.payload_have < in.payload_bytes && out_buf.empty()) {
        // The tensor was allocated by this harness for this response; writing its bytes is fine.
        auto* dst = reinterpret_cast<char*>(const_cast<std::byte*>(in.payload->bytes().data()));
        n = ::read(out_fd, dst + in.payload_have, in.payload_bytes - in.payload_have);
        if (n > 0) in.payload_have += static_cast<std::size_t>(n);
      } else {
        n = ::read(out_fd, buf, sizeof buf);
        if (n > 0) out_buf.append(buf, static_cast<std::size_t>(n));
      }
      if (n > 0) {
        total += static_cast<std::size_t>(n);
        // Hand back to the parser at a bound, so a flood is seen by the line check, not by memory.
        if (out_buf.size() > options.max_line_bytes) return total;
        if (!in.line && out_buf.find('\n') != std::string::npos) return total;
        if (in.payload && in.payload_have + out_buf.size() >= in.payload_bytes) return total;
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return total;
      if (total > 0) return total;  // data first; the end of file shows on the next call
      return std::nullopt;
    }
  }

  /// Non-blocking: pulls whatever stdout holds right now into out_buf (for the long-payload check).
  void drain_stdout_now() {
    if (out_fd < 0) return;
    char buf[4096];
    while (out_buf.size() < 4096) {
      const ssize_t n = ::read(out_fd, buf, sizeof buf);
      if (n <= 0) return;
      out_buf.append(buf, static_cast<std::size_t>(n));
    }
  }

  // -------------------------------------------------------------------------------------------
  // Hello and capabilities

  std::optional<Fault> read_hello(const Json& j) {
    const auto bad = [](const std::string& s) { return Fault{FaultKind::protocol, s}; };
    if (!j.is_object()) return bad("the answer is not a JSON object");
    const auto str = [&](const char* key, std::string& out) -> std::optional<Fault> {
      const auto it = j.find(key);
      if (it == j.end()) return std::nullopt;
      if (!it->is_string()) return bad(std::string("\"") + key + "\" must be a string");
      out = it->get<std::string>();
      return std::nullopt;
    };
    std::string protocol;
    if (auto f = str("protocol", protocol)) return f;
    if (protocol != kProtocol) {
      return bad("\"protocol\" must be " + json_quote(kProtocol) + ", got " + json_quote(printable(protocol)));
    }
    Capabilities c;
    std::string backend_name = options.command;
    std::string version;
    if (auto f = str("name", backend_name)) return f;
    if (auto f = str("version", version)) return f;
    const auto list = [&](const char* key, std::vector<std::string>& out) -> std::optional<Fault> {
      const auto it = j.find(key);
      if (it == j.end()) return std::nullopt;
      if (!it->is_array()) return bad(std::string("\"") + key + "\" must be an array of strings");
      out.clear();
      for (const Json& v : *it) {
        if (!v.is_string()) return bad(std::string("\"") + key + "\" must be an array of strings");
        out.push_back(v.get<std::string>());
      }
      return std::nullopt;
    };
    std::vector<std::string> ops = {"einsum"};
    std::vector<std::string> dtypes = {"f32", "f64"};
    std::vector<std::string> reductions;
    if (auto f = list("ops", ops)) return f;
    if (auto f = list("dtypes", dtypes)) return f;
    if (auto f = list("reductions", reductions)) return f;
    // Unknown names are skipped, so a backend may announce more than this harness knows.
    c.ops.clear();
    for (const auto& o : ops) {
      if (o == "einsum") c.ops.push_back(Op::einsum);
      if (o == "reduce") c.ops.push_back(Op::reduce);
    }
    c.dtypes.clear();
    for (const auto& d : dtypes) {
      if (auto t = dtype_from_name(d)) c.dtypes.push_back(*t);
    }
    for (const auto& r : reductions) {
      if (reduction_from_name(r)) c.reductions.push_back(r);
    }
    std::string semantics = "any-order";
    std::string nan_profile = "propagate";
    if (auto f = str("semantics", semantics)) return f;
    if (auto f = str("nan_profile", nan_profile)) return f;
    if (auto f = str("notation", notation)) return f;
    if (semantics == "ordered") {
      c.semantics = Semantics::ordered;
    } else if (semantics == "any-order") {
      c.semantics = Semantics::any_order;
    } else {
      return bad("\"semantics\" must be \"ordered\" or \"any-order\", got " + json_quote(printable(semantics)));
    }
    if (nan_profile == "propagate") {
      c.nan_profile = NanProfile::propagate;
    } else if (nan_profile == "ignore") {
      c.nan_profile = NanProfile::ignore;
    } else if (nan_profile == "ordered") {
      c.nan_profile = NanProfile::ordered;
    } else {
      return bad("\"nan_profile\" must be \"propagate\", \"ignore\" or \"ordered\", got " +
                 json_quote(printable(nan_profile)));
    }
    if (notation != "einops" && notation != "numpy") {
      return bad("\"notation\" must be \"einops\" or \"numpy\", got " + json_quote(printable(notation)));
    }
    for (const auto& [key, field] : {std::pair{"factoring", &c.factoring}, std::pair{"strided_inputs", &c.strided_inputs}}) {
      const auto it = j.find(key);
      if (it == j.end()) continue;
      if (!it->is_boolean()) return bad(std::string("\"") + key + "\" must be true or false");
      *field = it->get<bool>();
    }
    c.version = backend_text(backend_name + (version.empty() ? "" : " " + version), 200);
    // The first hello fixes the capabilities; a restarted process is held to them.
    if (!hello_done) {
      caps = std::move(c);
      hello_done = true;
    }
    return std::nullopt;
  }

  // -------------------------------------------------------------------------------------------
  // Requests and responses

  std::string request_line(const Case& c, std::int64_t id, const std::vector<std::optional<Tensor>>& storages) const {
    std::string s = "{\"id\":" + std::to_string(id) + ",\"op\":" + json_quote(op_name(c.op)) +
                    ",\"pattern\":" + json_quote(c.pattern);
    if (c.op == Op::einsum) {
      std::vector<Shape> shapes;
      for (const Tensor& t : c.inputs) shapes.push_back(t.shape());
      const auto sub = numpy_subscripts(c.pattern, shapes);
      s += ",\"subscripts\":" + (sub ? json_quote(*sub) : std::string("null"));
    } else {
      s += ",\"reduction\":" + (c.reduction ? json_quote(*c.reduction) : std::string("null"));
      // Written by hand so duplicate names reach the backend (a `duplicateAxisLength` case).
      s += ",\"axis_lengths\":{";
      for (std::size_t i = 0; i < c.axis_lengths.size(); ++i) {
        if (i) s += ',';
        s += json_quote(c.axis_lengths[i].first) + ":" + std::to_string(c.axis_lengths[i].second);
      }
      s += "}";
    }
    s += ",\"dtype\":" + json_quote(dtype_name(c.dtype)) + ",\"inputs\":[";
    for (std::size_t k = 0; k < c.inputs.size(); ++k) {
      if (k) s += ',';
      s += "{\"shape\":" + Json(c.inputs[k].shape()).dump();
      if (storages[k]) {
        const InputLayout& l = *c.layouts[k];
        s += ",\"layout\":{\"strides\":" + Json(l.strides).dump() + ",\"offset\":" + std::to_string(l.offset) +
             ",\"storage\":" + std::to_string(l.storage) + "}";
      }
      s += "}";
    }
    return s + "]}\n";
  }

  /// Why PROTOCOL A §2 cannot describe the case to a backend, or nullopt: such a case is not sent.
  static std::optional<std::string> not_describable(const Case& c) {
    if (c.op != Op::reduce) return std::nullopt;
    if (c.inputs.size() != 1) {
      return "a reduce request carries exactly one input and this case has " + std::to_string(c.inputs.size()) +
             " (PROTOCOL A §2: not sent)";
    }
    std::set<std::string_view> names;
    for (const auto& [axis, length] : c.axis_lengths) {
      if (!names.insert(axis).second) {
        return "the supplied axis lengths repeat the name " + json_quote(printable(axis)) +
               ": a JSON object keeps one of them, so the backend could never see the repetition "
               "(PROTOCOL A §2: not sent)";
      }
    }
    return std::nullopt;
  }

  /// Records a fault that belongs to request `request` although it surfaced later (the bytes
  /// arrived after that request's response was complete), and kills the process.
  void late_fault(std::int64_t request, const std::string& what) {
    const Fault f = protocol_fault(what);
    late.push_back(LateFault{request, request == last_id ? last_pattern : std::string(), f});
  }

  BackendResult run(const Case& c) {
    // A stopping run starts nothing new (no restart, no request): it only waits for its workers.
    if (const int sig = stop_requested()) return Fault{FaultKind::timeout, "interrupted by signal " + signal_text(sig)};
    if (auto why = not_describable(c)) return Unsupported{*why};
    if (pid <= 0) {
      if (auto f = start()) return *f;
    }
    drain_stderr();
    // Bytes already waiting came after the previous response was complete: a stream fault of that
    // request (it sent more than one answer), not of this case, which runs on a fresh process.
    drain_stdout_now();
    if (!out_buf.empty()) {
      const bool answered = last_id >= first_id;  // else nothing but the hello was exchanged
      late_fault(answered ? last_id : 0,
                 std::to_string(out_buf.size()) + " bytes on stdout after the complete " +
                     (answered ? "response to request " + std::to_string(last_id) : std::string("hello")) +
                     " (a second message or a long payload), starting \"" + printable(out_buf, 60) + "\"");
      if (auto f = start()) return *f;
    }
    BackendResult r = exchange_case(c);
    if (stale_answer) {
      // A response to an earlier request (its second answer) arrived in place of this one: that
      // request's fault, recorded as such; this case is asked again of a fresh process, once.
      stale_answer = false;
      if (auto f = start()) return *f;
      r = exchange_case(c);
      stale_answer = false;
    }
    return r;
  }

  /// Sends one case on the running process and reads its answer.
  BackendResult exchange_case(const Case& c) {
    const std::int64_t id = next_id++;
    // Strided views for backends that accept them; a layout that does not fit (e.g. after
    // shrinking changed the shape) is dropped and the input sent dense.
    std::vector<std::optional<Tensor>> storages(c.inputs.size());
    if (caps.strided_inputs && c.layouts.size() == c.inputs.size()) {
      for (std::size_t k = 0; k < c.inputs.size(); ++k) {
        if (!c.layouts[k]) continue;
        if (auto st = layout_storage(c.inputs[k], *c.layouts[k], options.limits)) storages[k] = std::move(*st);
      }
    }
    const std::string line = request_line(c, id, storages);
    std::vector<std::span<const std::byte>> chunks = {std::as_bytes(std::span(line.data(), line.size()))};
    for (std::size_t k = 0; k < c.inputs.size(); ++k) chunks.push_back(storages[k] ? storages[k]->bytes() : c.inputs[k].bytes());

    const DType out_dtype = output_dtype(c);
    std::optional<Tensor> output;
    std::optional<BackendResult> answer;
    Incoming in;
    auto on_line = [&](Incoming& msg) -> std::optional<Fault> {
      const Json& j = *msg.line;
      if (!j.is_object()) return protocol_fault("the response is not a JSON object: \"" + printable(j.dump()) + "\"");
      const auto idit = j.find("id");
      if (idit != j.end() && idit->is_number_integer() && idit->get<std::int64_t>() < id &&
          idit->get<std::int64_t>() >= first_id) {
        // The id of a request this process has already answered: a second answer to it.
        const std::int64_t earlier = idit->get<std::int64_t>();
        stale_answer = true;
        late_fault(earlier, "a second response to request " + std::to_string(earlier) + " arrived while request " +
                                std::to_string(id) + " waited for its answer: \"" + printable(j.dump(), 120) + "\"");
        return late.back().fault;
      }
      if (idit == j.end() || !idit->is_number_integer() || idit->get<std::int64_t>() != id) {
        return protocol_fault("wrong id: expected " + std::to_string(id) + ", got " +
                              (idit == j.end() ? std::string("none") : printable(idit->dump())));
      }
      const auto st = j.find("status");
      if (st == j.end() || !st->is_string()) return protocol_fault("\"status\" missing or not a string");
      const std::string status = st->get<std::string>();
      std::string message;
      if (const auto m = j.find("message"); m != j.end() && m->is_string()) message = m->get<std::string>();
      // Cut at a character boundary, control characters escaped: it is printed and reported as is.
      message = backend_text(message, 2000);
      if (status == "error") {
        std::string code;
        if (const auto cd = j.find("code"); cd != j.end() && cd->is_string()) code = backend_text(cd->get<std::string>(), 200);
        answer = Rejected{code, message};
        return std::nullopt;
      }
      if (status == "unsupported") {
        answer = Unsupported{message};
        return std::nullopt;
      }
      if (status != "ok") return protocol_fault("unknown status " + json_quote(printable(status)));
      if (const auto dt = j.find("dtype"); dt != j.end() && (!dt->is_string() || *dt != dtype_name(out_dtype))) {
        return protocol_fault("\"dtype\" " + printable(dt->dump()) + " is not the expected " +
                              std::string(dtype_name(out_dtype)));
      }
      const auto sh = j.find("shape");
      if (sh == j.end() || !sh->is_array()) return protocol_fault("an ok response without a \"shape\" array");
      Shape shape;
      for (const Json& d : *sh) {
        if (!d.is_number_integer() || d.get<std::int64_t>() < 0 ||
            (d.is_number_unsigned() &&
             d.get<std::uint64_t>() > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))) {
          return protocol_fault("\"shape\" " + printable(sh->dump()) + " has an entry that is not a length");
        }
        shape.push_back(d.get<std::int64_t>());
      }
      // The limits decide before anything proportional to the shape is allocated.
      if (auto size = check_tensor_size(shape, options.limits, "the response shape"); !size) {
        return protocol_fault("huge shape " + printable(sh->dump(), 120) + ": " + size.error().message);
      }
      output.emplace(out_dtype, shape);
      msg.payload = &*output;
      msg.payload_bytes = output->bytes().size();
      return std::nullopt;
    };
    if (auto f = exchange(chunks, options.timeout_seconds, "case", in, on_line)) return *f;
    last_id = id;
    last_pattern = c.pattern;
    if (answer) return *answer;
    return std::move(*output);
  }
};

ProcessBackend::ProcessBackend(ProcessOptions options) : impl_(std::make_unique<Impl>(std::move(options))) {
  impl_->start();
}

ProcessBackend::~ProcessBackend() {
  Impl& p = *impl_;
  if (p.pid <= 0) return;
  // PROTOCOL A §5: bye, close stdin, let it exit; whatever is left after a grace period is killed.
  static constexpr char kBye[] = "{\"bye\":true}\n";
  ::send(p.in_fd, kBye, sizeof kBye - 1, MSG_NOSIGNAL | MSG_DONTWAIT);
  ::shutdown(p.in_fd, SHUT_WR);
  const auto until = Clock::now() + kExitGrace;
  while (Clock::now() < until) {
    int status = 0;
    if (::waitpid(p.pid, &status, WNOHANG) == p.pid) {
      ::kill(-p.pid, SIGKILL);  // what it left in its group
      unregister_group(p.pid);
      p.pid = -1;
      break;
    }
    pollfd fds[2] = {{p.out_fd, POLLIN, 0}, {p.err_fd, POLLIN, 0}};
    ::poll(fds, p.err_fd >= 0 ? 2 : 1, 10);
    p.drain_stdout_now();
    p.out_buf.clear();
    p.drain_stderr();
  }
  p.kill_process();
}

void kill_backend_process_groups() noexcept {
  for (auto& slot : g_groups) {
    if (const pid_t group = slot.load(); group > 0) ::kill(-group, SIGKILL);
  }
}

void request_stop(int signal) noexcept { g_stop_signal.store(signal == 0 ? SIGTERM : signal); }
int stop_requested() noexcept { return g_stop_signal.load(); }
void clear_stop_request() noexcept { g_stop_signal.store(0); }

std::string_view ProcessBackend::name() const { return impl_->name; }
const Capabilities& ProcessBackend::capabilities() const { return impl_->caps; }
BackendResult ProcessBackend::run(const Case& c) { return impl_->run(c); }
const std::optional<Fault>& ProcessBackend::start_failure() const { return impl_->start_failure; }
int ProcessBackend::restarts() const { return impl_->restarts; }
const std::string& ProcessBackend::notation() const { return impl_->notation; }
int ProcessBackend::pid() const { return impl_->pid; }
const std::vector<LateFault>& ProcessBackend::late_faults() const { return impl_->late; }

std::unique_ptr<ProcessBackend> make_process_backend(ProcessOptions options) {
  return std::make_unique<ProcessBackend>(std::move(options));
}

}  // namespace einfuzz
