// The guard around a run that loads a plugin into this process: a plugin that calls exit(0) or
// _exit(0) must not end the run with status 0 and no output, as if all passed. Under --isolate too:
// the library is loaded, its entry called and unloaded here, only its run calls are forked.
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>

#include "einfuzz/backends/process.hpp"
#include "subcommand.hpp"

namespace einfuzz::cli {
namespace {

// Child → parent: the status finish_guarded records, in a page shared by the fork. Not a pipe: a
// plugin that closes every descriptor from 3 up (as daemons do) closed it, and the run ended with
// backendEndedRun after its verdicts; one that then opened a file under that number got the byte.
constexpr unsigned kDone = 0x100;                  // set with the status: the run got to its end
std::atomic<unsigned>* g_done = nullptr;           // both: the shared word (null: unguarded)
bool g_guarded_child = false;                      // child: finish_guarded records its status
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
  if (!loads_a_plugin(specs) || g_done != nullptr) return;
  void* page = ::mmap(nullptr, sizeof(std::atomic<unsigned>), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (page == MAP_FAILED) return;  // unguarded, as before: the run itself is not affected
  g_done = new (page) std::atomic<unsigned>(0);
  std::fflush(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::munmap(page, sizeof(std::atomic<unsigned>));
    g_done = nullptr;
    return;
  }
  if (pid == 0) {
    g_guarded_child = true;
    return;  // the child does the work
  }
  // The parent: forward what a user or a CI runner sends to the process it started.
  g_child = pid;
  struct sigaction sa {};
  sa.sa_handler = forward;
  sigemptyset(&sa.sa_mask);
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) ::sigaction(sig, &sa, nullptr);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  const unsigned done = g_done->load();
  if ((done & kDone) != 0 && WIFEXITED(status)) std::_Exit(static_cast<int>(done & 0xff));
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
  if (g_guarded_child) g_done->store(kDone | static_cast<unsigned char>(status));
  return status;
}

}  // namespace einfuzz::cli
