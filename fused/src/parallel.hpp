// Fused's parallel chunks: task 0 on the calling thread, the others on worker threads that the
// calling thread keeps for its life. A chunk decides its own output range and writes only there, so
// which thread runs it never changes a bit; what the workers save is a thread's creation and exit
// per call (tens of microseconds, more under ASan: the fuzz targets ask for 2 or 3 tasks on half
// their inputs).
#pragma once

#include <cstdint>
#include <type_traits>

namespace einfuzz::fused::detail {

/// A borrowed `void(unsigned task)` callable (the caller's lambda outlives run_tasks).
class TaskFn {
 public:
  template <class F>
    requires(!std::is_same_v<std::remove_cvref_t<F>, TaskFn>)
  TaskFn(F& f) noexcept  // NOLINT(google-explicit-constructor): a view, as std::function_ref
      : object_(static_cast<void*>(&f)), call_([](void* o, unsigned t) { (*static_cast<F*>(o))(t); }) {}
  void operator()(unsigned task) const { call_(object_, task); }

 private:
  void* object_;
  void (*call_)(void*, unsigned);
};

/// Runs body(t) for every t in [0, tasks) and returns when all have returned: t = 0 on the calling
/// thread, t >= 1 on this thread's workers (started when first needed; a thread that cannot be
/// started leaves its tasks to the calling thread). A forked child starts its own workers. `body`
/// must not throw: like a std::jthread's, an exception ends the program.
void run_tasks(unsigned tasks, TaskFn body) noexcept;

/// The worker threads the calling thread holds (tests: a second call starts none).
unsigned worker_threads() noexcept;

}  // namespace einfuzz::fused::detail
