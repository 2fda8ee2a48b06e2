// The `cmd:` backend's pipeline (ProcessBackend::submit/collect): a thread per backend process runs
// the submitted case while the harness runs the reference and the in-process backends.
#include <stdexcept>
#include <utility>

#include "process_impl.hpp"

namespace einfuzz {

ProcessBackend::Pipeline::Pipeline(Impl& impl) : impl_(impl), thread_([this] { serve(); }) {}

ProcessBackend::Pipeline::~Pipeline() {
  {
    std::lock_guard lock(mutex_);
    quit_ = true;
  }
  wake_.notify_one();
  thread_.join();
}

void ProcessBackend::Pipeline::serve() {
  std::unique_lock lock(mutex_);
  while (true) {
    wake_.wait(lock, [&] { return quit_ || job_.has_value(); });
    if (!job_) return;  // quit with nothing to run
    const Case c = std::move(*job_);
    job_.reset();
    lock.unlock();
    std::optional<BackendResult> r;
    std::exception_ptr e;
    try {
      r.emplace(impl_.run(c));
    } catch (...) {
      e = std::current_exception();  // handed to collect, which throws it as `run` would have
    }
    lock.lock();
    result_ = std::move(r);
    error_ = e;
    done_ = true;
    finished_.notify_one();
  }
}

void ProcessBackend::Pipeline::submit(const Case& c) {
  discard_in_flight();
  // A copy: once submit returns, nothing the caller does to `c` (another backend writing to its
  // inputs) can reach this backend's request.
  Case copy = c;
  {
    std::lock_guard lock(mutex_);
    job_ = std::move(copy);
    in_flight_ = true;
    done_ = false;
  }
  wake_.notify_one();
}

BackendResult ProcessBackend::Pipeline::collect() {
  std::unique_lock lock(mutex_);
  if (!in_flight_) throw std::logic_error("ProcessBackend::collect without a submitted case");
  finished_.wait(lock, [&] { return done_; });
  in_flight_ = false;
  done_ = false;
  std::optional<BackendResult> r = std::exchange(result_, std::nullopt);
  if (const std::exception_ptr e = std::exchange(error_, nullptr)) std::rethrow_exception(e);
  return std::move(*r);
}

void ProcessBackend::Pipeline::discard_in_flight() {
  std::unique_lock lock(mutex_);
  if (!in_flight_) return;
  finished_.wait(lock, [&] { return done_; });
  in_flight_ = false;
  done_ = false;
  result_.reset();
  error_ = nullptr;
}

void ProcessBackend::submit(const Case& c) {
  if (!pipeline_) pipeline_ = std::make_unique<Pipeline>(*impl_);
  pipeline_->submit(c);
}

BackendResult ProcessBackend::collect() {
  if (!pipeline_) throw std::logic_error("ProcessBackend::collect without a submitted case");
  return pipeline_->collect();
}

}  // namespace einfuzz
