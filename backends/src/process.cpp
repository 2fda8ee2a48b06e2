// PROTOCOL A client, the process side: spawns the backend's command, exchanges the hello and one
// request/response per case over pipes, and turns everything the process does wrong into a Fault with
// evidence. The wire format is in process_wire.cpp, numpy notation in numpy_notation.cpp.
#include "einfuzz/backends/process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

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

#include "einfuzz/core/text.hpp"
#include "process_impl.hpp"

extern char** environ;

namespace einfuzz {

namespace {

using Json = wire::Json;
using Clock = std::chrono::steady_clock;

using wire::json_quote;
using wire::kProtocol;
using wire::printable;
using child::kill_token_holders;
using child::register_group;
using child::seconds_text;
using child::set_nonblocking;
using child::signal_text;
using child::status_text;
using child::StderrRing;
using child::unregister_group;

/// How long an exiting process may take to finish before it is killed (for its exit status).
constexpr std::chrono::milliseconds kExitGrace{1000};

}  // namespace

ProcessBackend::Impl::Impl(ProcessOptions o) : options(std::move(o)), err_ring(options.stderr_bytes) {
  name = options.name.empty() ? "cmd:" + options.command : options.name;
  caps.version = "(no hello yet)";
}

void ProcessBackend::Impl::close_fds() {
  for (int* fd : {&in_fd, &out_fd, &err_fd}) {
    if (*fd >= 0) ::close(*fd);
    *fd = -1;
  }
  out_buf.clear();
}

int ProcessBackend::Impl::kill_process() {
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

void ProcessBackend::Impl::drain_stderr() {
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

Fault ProcessBackend::Impl::crash_fault(const std::string& what) {
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

Fault ProcessBackend::Impl::timeout_fault(const std::string& what) {
  drain_stderr();
  const std::string tail = err_ring.tail(options.stderr_lines);
  kill_process();
  return Fault{FaultKind::timeout, what + "; the process group was killed" + tail};
}

Fault ProcessBackend::Impl::protocol_fault(const std::string& what) {
  drain_stderr();
  const std::string tail = err_ring.tail(options.stderr_lines);
  kill_process();  // the stream cannot be trusted any more: restart before the next case
  return Fault{FaultKind::protocol, what + tail};
}

std::optional<Fault> ProcessBackend::Impl::spawn() {
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
  token = child::next_token();
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

std::optional<Fault> ProcessBackend::Impl::start() {
  const double hello_timeout =
      starts == 0 ? options.hello_timeout_seconds : std::min(options.hello_timeout_seconds, options.timeout_seconds);
  if (starts++ > 0) ++restarts;
  first_id = next_id;
  if (auto f = spawn()) {
    f->at_start = true;
    start_failure = f;
    return f;
  }
  const std::string hello = "{\"protocol\":" + json_quote(kProtocol) + ",\"hello\":true}\n";
  auto line = exchange_line(hello, hello_timeout, "hello");
  if (auto* f = std::get_if<Fault>(&line)) {
    f->evidence = "hello failed: " + f->evidence;
    f->at_start = true;
    start_failure = *f;
    return *f;
  }
  if (auto f = read_hello(std::get<Json>(line))) {
    start_failure = protocol_fault("hello: " + f->evidence);
    start_failure->at_start = true;
    return start_failure;
  }
  start_failure.reset();
  return std::nullopt;
}

ProcessBackend::ProcessBackend(ProcessOptions options) : impl_(std::make_unique<Impl>(std::move(options))) {
  impl_->start();
}

std::string ProcessBackend::Impl::say_bye() {
  std::string seen;  // the first 4 KiB it wrote, out_buf's bytes first
  if (pid <= 0) return seen;
  const auto keep = [&] {
    seen.append(out_buf, 0, std::min(out_buf.size(), std::size_t{4096} - std::min(seen.size(), std::size_t{4096})));
    out_buf.clear();  // read on: a flooding process must not block on a full pipe
  };
  keep();
  // PROTOCOL A §5: bye, close stdin, let it exit; whatever is left after a grace period is killed.
  static constexpr char kBye[] = "{\"bye\":true}\n";
  ::send(in_fd, kBye, sizeof kBye - 1, MSG_NOSIGNAL | MSG_DONTWAIT);
  ::shutdown(in_fd, SHUT_WR);
  const auto until = Clock::now() + kExitGrace;
  while (Clock::now() < until) {
    int status = 0;
    if (::waitpid(pid, &status, WNOHANG) == pid) {
      ::kill(-pid, SIGKILL);  // what it left in its group
      unregister_group(pid);
      pid = -1;
      break;
    }
    pollfd fds[2] = {{out_fd, POLLIN, 0}, {err_fd, POLLIN, 0}};
    ::poll(fds, err_fd >= 0 ? 2 : 1, 10);
    drain_stdout_now();
    keep();
    drain_stderr();
  }
  drain_stdout_now();  // what an exiting process wrote last
  keep();
  kill_process();
  return seen;
}

ProcessBackend::~ProcessBackend() {
  pipeline_.reset();  // the thread finishes the case it runs before the process is told bye
  impl_->say_bye();
}

std::vector<LateFault> ProcessBackend::take_late_faults() {
  if (pipeline_) pipeline_->discard_in_flight();  // its answer would come after this call
  Impl& p = *impl_;
  std::vector<LateFault> out(p.late.begin() + static_cast<std::ptrdiff_t>(p.late_taken), p.late.end());
  // Only the last few stay for late_faults(): a campaign takes them after every case, so a backend
  // that answers every case twice does not make it keep a case per case.
  constexpr std::size_t kKept = 16;
  if (p.late.size() > kKept) p.late.erase(p.late.begin(), p.late.end() - static_cast<std::ptrdiff_t>(kKept));
  p.late_taken = p.late.size();
  return out;
}

void ProcessBackend::finish() {
  if (pipeline_) pipeline_->discard_in_flight();
  Impl& p = *impl_;
  if (p.pid <= 0) return;
  const std::string seen = p.say_bye();
  if (!seen.empty()) {
    const bool answered = p.last_id >= p.first_id;
    p.late_fault(answered ? p.last_id : 0,
                 (seen.size() >= 4096 ? "4096 bytes or more" : std::to_string(seen.size()) + " bytes") +
                     " on stdout after the complete " +
                     (answered ? "response to request " + std::to_string(p.last_id) : std::string("hello")) +
                     ", before it exited on bye (a second message or a long payload), starting \"" +
                     printable(seen, 60) + "\"");
  }
}

std::string_view ProcessBackend::name() const { return impl_->name; }
const Capabilities& ProcessBackend::capabilities() const { return impl_->caps; }
BackendResult ProcessBackend::run(const Case& c) {
  if (pipeline_) pipeline_->discard_in_flight();  // one exchange on the stream at a time
  return impl_->run(c);
}
const std::optional<Fault>& ProcessBackend::start_failure() const { return impl_->start_failure; }
int ProcessBackend::restarts() const { return impl_->restarts; }
const std::string& ProcessBackend::notation() const { return impl_->notation; }
int ProcessBackend::pid() const { return impl_->pid; }
const std::vector<LateFault>& ProcessBackend::late_faults() const { return impl_->late; }

std::unique_ptr<ProcessBackend> make_process_backend(ProcessOptions options) {
  return std::make_unique<ProcessBackend>(std::move(options));
}

}  // namespace einfuzz
