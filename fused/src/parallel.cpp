// run_tasks: the calling thread's workers, kept between calls (parallel.hpp).
#include "parallel.hpp"

#include <unistd.h>

#include <algorithm>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <system_error>
#include <thread>
#include <vector>

namespace einfuzz::fused::detail {
namespace {

/// The workers of one calling thread. One call at a time (only its owner calls run), so one mutex
/// and a generation count are the whole protocol: a call publishes the body and how many workers
/// take part, and returns when that many have finished. A worker cannot miss its call: the next
/// generation starts only after every worker of this one has counted itself done.
class Pool {
 public:
  Pool() = default;
  Pool(const Pool&) = delete;
  Pool& operator=(const Pool&) = delete;

  ~Pool() {
    {
      const std::lock_guard lock(mutex_);
      stop_ = true;
    }
    work_.notify_all();
    for (std::thread& t : threads_) t.join();
  }

  void run(unsigned tasks, TaskFn body) {
    while (threads_.size() + 1 < tasks) {
      try {
        threads_.emplace_back([this, index = static_cast<unsigned>(threads_.size())] { work(index); });
      } catch (const std::system_error&) {
        break;  // no thread available: the tasks without a worker run here, same bits
      }
    }
    const auto helpers = static_cast<unsigned>(std::min<std::size_t>(threads_.size(), tasks - 1));
    {
      const std::lock_guard lock(mutex_);
      body_ = &body;
      helpers_ = helpers;
      pending_ = helpers;
      ++generation_;
    }
    if (helpers != 0) work_.notify_all();
    body(0);
    for (unsigned t = helpers + 1; t < tasks; ++t) body(t);
    std::unique_lock lock(mutex_);
    done_.wait(lock, [&] { return pending_ == 0; });
  }

  unsigned size() const noexcept { return static_cast<unsigned>(threads_.size()); }

 private:
  /// Worker `index` runs task index + 1 of every call that has at least index + 1 helpers.
  void work(unsigned index) {
    std::uint64_t seen = 0;
    std::unique_lock lock(mutex_);
    for (;;) {
      work_.wait(lock, [&] { return stop_ || generation_ != seen; });
      if (stop_) return;
      seen = generation_;
      if (index >= helpers_) continue;
      const TaskFn* body = body_;
      lock.unlock();
      (*body)(index + 1);
      lock.lock();
      if (--pending_ == 0) done_.notify_one();
    }
  }

  std::vector<std::thread> threads_;
  std::mutex mutex_;
  std::condition_variable work_, done_;
  const TaskFn* body_ = nullptr;
  unsigned helpers_ = 0, pending_ = 0;
  std::uint64_t generation_ = 0;
  bool stop_ = false;
};

/// This thread's pool and the process it was made in. A forked child inherits the variable but not
/// the workers: it neither waits for them nor joins them, it leaves that pool alone (leaked on
/// purpose, a few hundred bytes) and makes its own.
struct PoolSlot {
  std::unique_ptr<Pool> pool;
  pid_t owner = 0;

  ~PoolSlot() {
    if (pool && owner != getpid()) static_cast<void>(pool.release());
  }

  Pool& get() {
    const pid_t self = getpid();
    if (pool && owner != self) static_cast<void>(pool.release());
    if (!pool) {
      pool = std::make_unique<Pool>();
      owner = self;
    }
    return *pool;
  }
};

thread_local PoolSlot slot;

}  // namespace

void run_tasks(unsigned tasks, TaskFn body) noexcept {
  if (tasks <= 1) {
    if (tasks == 1) body(0);
    return;
  }
  slot.get().run(tasks, body);
}

unsigned worker_threads() noexcept {
  return slot.pool && slot.owner == getpid() ? slot.pool->size() : 0;
}

}  // namespace einfuzz::fused::detail
