// The guard around a run that loads a plugin into this process: a plugin that calls exit(0) or
// _exit(0) must not end the run with status 0 and no output, as if all passed. Under --isolate too:
// the library is loaded, its entry called and unloaded here, only its run calls are forked.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "einfuzz/backends/process.hpp"
#include "subcommand.hpp"

namespace einfuzz::cli {
namespace {

int g_done_fd = -1;          // child: the pipe end finish_guarded writes the status to
volatile pid_t g_child = -1;  // parent: where SIGINT/SIGTERM/SIGHUP are forwarded
volatile sig_atomic_t g_forwarded = 0;  // parent: the last signal forwarded

void forward(int sig) {
  g_forwarded = sig;
  if (g_child > 0) ::kill(g_child, sig);
}

void kill_backends_and_die(int sig) {
  kill_backend_process_groups();
  ::signal(sig, SIG_DFL);
  ::raise(sig);
}

bool loads_a_plugin(const std::vector<std::string>& specs) {
  for (const std::string& s : specs) {
    if (s.rfind("plugin:", 0) == 0) return true;
  }
  return false;
}

}  // namespace

void guard_in_process_plugins(const std::vector<std::string>& specs) {
  if (!loads_a_plugin(specs) || g_done_fd >= 0) return;
  int fds[2];
  if (::pipe(fds) != 0) return;  // unguarded, as before: the run itself is not affected
  std::fflush(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    return;
  }
  if (pid == 0) {
    ::close(fds[0]);
    g_done_fd = fds[1];
    return;  // the child does the work
  }
  // The parent: forward what a user or a CI runner sends to the process it started.
  ::close(fds[1]);
  g_child = pid;
  struct sigaction sa {};
  sa.sa_handler = forward;
  sigemptyset(&sa.sa_mask);
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) ::sigaction(sig, &sa, nullptr);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  unsigned char code = 0;
  ssize_t n = 0;
  while ((n = ::read(fds[0], &code, 1)) < 0 && errno == EINTR) {
  }
  if (n == 1 && WIFEXITED(status)) std::_Exit(code);
  // Ended by the signal the user sent (a second SIGINT, say): that is not the plugin's doing.
  if (WIFSIGNALED(status) && WTERMSIG(status) == g_forwarded) std::_Exit(128 + WTERMSIG(status));
  std::string how = WIFSIGNALED(status) ? "was killed by signal " + std::to_string(WTERMSIG(status)) + " (SIG" +
                                              (sigabbrev_np(WTERMSIG(status)) ? sigabbrev_np(WTERMSIG(status)) : "?") + ")"
                                        : "exited with status " + std::to_string(WEXITSTATUS(status));
  std::fprintf(stderr,
               "error[backendEndedRun]: the run ended before it finished: the process %s while a plugin was loaded "
               "in it (a plugin that crashes, aborts or calls exit takes the harness with it: in its calls, or in "
               "its load and unload code, which run here even under --isolate; --isolate runs each call in a "
               "worker, where this is a crash verdict). Nothing after the last line above was judged.\n",
               how.c_str());
  std::_Exit(kExitIncomplete);
}

void install_fatal_signal_cleanup() {
  struct sigaction sa {};
  sa.sa_handler = kill_backends_and_die;
  sigemptyset(&sa.sa_mask);
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) ::sigaction(sig, &sa, nullptr);
}

int finish_guarded(int status) {
  if (g_done_fd >= 0) {
    const auto code = static_cast<unsigned char>(status);
    while (::write(g_done_fd, &code, 1) < 0 && errno == EINTR) {
    }
    ::close(g_done_fd);
    g_done_fd = -1;
  }
  return status;
}

}  // namespace einfuzz::cli
