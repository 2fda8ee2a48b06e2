// Isolation: fork a worker per call, bound it (RLIMIT_AS, a wall-clock timeout), and read its
// result back through a pipe in a small binary format checked against the limits.
#include "einfuzz/harness/isolate.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <new>
#include <optional>
#include <string>

#include "einfuzz/backends/process.hpp"
#include "einfuzz/core/check_case.hpp"
#include "inputs_checksum.hpp"

#if defined(__SANITIZE_ADDRESS__)
#define EINFUZZ_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define EINFUZZ_ASAN 1
#endif
#endif

namespace einfuzz {

namespace {

using Clock = std::chrono::steady_clock;

enum class Tag : std::uint8_t { tensor = 0, rejected = 1, unsupported = 2, fault = 3, gradients = 4 };

// ---------------------------------------------------------------------------------------------
// Worker side: write the result, then _exit.

bool write_all(int fd, const void* data, std::size_t n) {
  const auto* p = static_cast<const char*>(data);
  while (n > 0) {
    const ssize_t w = ::write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    p += w;
    n -= static_cast<std::size_t>(w);
  }
  return true;
}

template <class T>
bool put(int fd, T v) {
  return write_all(fd, &v, sizeof v);
}

bool put_string(int fd, const std::string& s) {
  const auto n = static_cast<std::uint32_t>(std::min<std::size_t>(s.size(), 1u << 20));
  return put(fd, n) && write_all(fd, s.data(), n);
}

/// One tensor after its tag: dtype, rank, lengths, byte count, bytes.
bool write_tensor(int fd, const Tensor& t) {
  const auto bytes = t.bytes();
  bool ok = put(fd, static_cast<std::uint8_t>(t.dtype())) && put(fd, static_cast<std::uint32_t>(t.rank()));
  for (std::int64_t d : t.shape()) ok = ok && put(fd, d);
  return ok && put(fd, static_cast<std::uint64_t>(bytes.size())) && write_all(fd, bytes.data(), bytes.size());
}

bool write_result(int fd, const BackendResult& r) {
  if (const auto* t = std::get_if<Tensor>(&r)) return put(fd, Tag::tensor) && write_tensor(fd, *t);
  if (const auto* g = std::get_if<Gradients>(&r)) {
    // A VJP's answer: the count, then each tensor as above.
    bool ok = put(fd, Tag::gradients) && put(fd, static_cast<std::uint32_t>(g->tensors.size()));
    for (const Tensor& t : g->tensors) ok = ok && write_tensor(fd, t);
    return ok;
  }
  if (const auto* j = std::get_if<Rejected>(&r)) {
    return put(fd, Tag::rejected) && put_string(fd, j->code) && put_string(fd, j->message);
  }
  if (const auto* u = std::get_if<Unsupported>(&r)) return put(fd, Tag::unsupported) && put_string(fd, u->message);
  const auto& f = std::get<Fault>(r);
  return put(fd, Tag::fault) && put(fd, static_cast<std::uint8_t>(f.kind)) && put_string(fd, f.evidence);
}

[[noreturn]] void worker(Backend& backend, const Case& c, const IsolateOptions& options, int fd) {
  // What the backend prints goes to stderr: the parent's stdout carries its reports (--json).
  ::dup2(STDERR_FILENO, STDOUT_FILENO);
#ifndef EINFUZZ_ASAN
  if (options.address_space_bytes > 0) {
    const rlimit limit{options.address_space_bytes, options.address_space_bytes};
    ::setrlimit(RLIMIT_AS, &limit);
  }
#endif
  const std::uint64_t before = inputs_checksum(c);
  BackendResult result = Unsupported{};
  try {
    result = backend.run(c);
  } catch (const std::bad_alloc&) {
    result = Fault{FaultKind::crash, "out of memory (std::bad_alloc)"};
  } catch (const std::exception& e) {
    result = Fault{FaultKind::crash, std::string("the backend threw: ") + e.what()};
  } catch (...) {
    result = Fault{FaultKind::crash, "the backend threw a non-standard exception"};
  }
  if (inputs_checksum(c) != before) result = Fault{FaultKind::input_modified, "the backend wrote to its inputs"};
  const bool ok = write_result(fd, result);
  ::close(fd);
  // No destructors, no atexit handlers: the parent owns every resource this copy inherited.
  ::_exit(ok ? 0 : 3);
}

// ---------------------------------------------------------------------------------------------
// Parent side: read and check the result.

class Reader {
 public:
  explicit Reader(std::string_view data) : data_(data) {}
  template <class T>
  bool get(T& v) {
    if (data_.size() - pos_ < sizeof v) return false;
    std::memcpy(&v, data_.data() + pos_, sizeof v);
    pos_ += sizeof v;
    return true;
  }
  bool get_string(std::string& s) {
    std::uint32_t n = 0;
    if (!get(n) || data_.size() - pos_ < n) return false;
    s.assign(data_.data() + pos_, n);
    pos_ += n;
    return true;
  }
  bool get_bytes(std::span<std::byte> out) {
    if (data_.size() - pos_ < out.size()) return false;
    if (!out.empty()) std::memcpy(out.data(), data_.data() + pos_, out.size());
    pos_ += out.size();
    return true;
  }
  bool done() const { return pos_ == data_.size(); }

 private:
  std::string_view data_;
  std::size_t pos_ = 0;
};

/// One tensor as write_tensor wrote it, its rank checked against `max_rank` and its size against the
/// limits before it is allocated.
std::optional<Tensor> read_tensor(Reader& in, const Limits& limits, std::size_t max_rank) {
  std::uint8_t dtype = 0;
  std::uint32_t rank = 0;
  if (!in.get(dtype) || dtype >= dtype_table().size() || !in.get(rank) || rank > max_rank) {
    return std::nullopt;
  }
  Shape shape(rank);
  for (auto& d : shape) {
    if (!in.get(d)) return std::nullopt;
  }
  std::uint64_t n = 0;
  if (!in.get(n) || !check_tensor_size(shape, limits, "the isolated result")) return std::nullopt;
  Tensor t(static_cast<DType>(dtype), shape);
  const auto bytes = t.bytes();
  if (n != bytes.size()) return std::nullopt;
  // A fresh tensor of this harness: filling its storage in place is fine.
  if (!in.get_bytes({const_cast<std::byte*>(bytes.data()), bytes.size()})) return std::nullopt;
  return t;
}

std::optional<BackendResult> parse_result(std::string_view data, const Limits& limits, std::size_t max_rank) {
  Reader in(data);
  Tag tag{};
  if (!in.get(tag)) return std::nullopt;
  switch (tag) {
    case Tag::tensor: {
      auto t = read_tensor(in, limits, max_rank);
      if (!t || !in.done()) return std::nullopt;
      return BackendResult(std::move(*t));
    }
    case Tag::gradients: {
      std::uint32_t count = 0;
      // At most one tensor per operand (SEMANTICS §13.4: at most 64 operands by default).
      if (!in.get(count) || count > 4096) return std::nullopt;
      Gradients g;
      for (std::uint32_t k = 0; k < count; ++k) {
        auto t = read_tensor(in, limits, max_rank);
        if (!t) return std::nullopt;
        g.tensors.push_back(std::move(*t));
      }
      if (!in.done()) return std::nullopt;
      return BackendResult(std::move(g));
    }
    case Tag::rejected: {
      Rejected r;
      if (!in.get_string(r.code) || !in.get_string(r.message) || !in.done()) return std::nullopt;
      return BackendResult(std::move(r));
    }
    case Tag::unsupported: {
      Unsupported u;
      if (!in.get_string(u.message) || !in.done()) return std::nullopt;
      return BackendResult(std::move(u));
    }
    case Tag::fault: {
      std::uint8_t kind = 0;
      Fault f;
      if (!in.get(kind) || kind > static_cast<std::uint8_t>(FaultKind::input_modified) || !in.get_string(f.evidence) ||
          !in.done()) {
        return std::nullopt;
      }
      f.kind = static_cast<FaultKind>(kind);
      return BackendResult(std::move(f));
    }
  }
  return std::nullopt;
}

std::string signal_text(int sig) {
  const char* name = sigabbrev_np(sig);
  return std::to_string(sig) + (name ? std::string(" (SIG") + name + ")" : std::string());
}

std::string limit_text(const IsolateOptions& options) {
#ifdef EINFUZZ_ASAN
  return "; no address-space limit (AddressSanitizer build)";
#else
  if (options.address_space_bytes == 0) return "";
  return "; address-space limit " + std::to_string(options.address_space_bytes >> 20) + " MiB";
#endif
}

int reap(pid_t pid) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return status;
}

class IsolatedBackend final : public Backend {
 public:
  IsolatedBackend(std::unique_ptr<Backend> inner, const IsolateOptions& options)
      : inner_(std::move(inner)), options_(options) {}
  std::string_view name() const override { return inner_->name(); }
  const Capabilities& capabilities() const override { return inner_->capabilities(); }
  BackendResult run(const Case& c) override {
    bool forked = false;
    BackendResult r = run_isolated(*inner_, c, options_, &forked);
    // The worker called the backend (or may have, before it crashed): advance what that call did.
    if (forked) inner_->ran_in_copy(c);
    return r;
  }

 private:
  std::unique_ptr<Backend> inner_;
  IsolateOptions options_;
};

}  // namespace

BackendResult run_isolated(Backend& backend, const Case& c, const IsolateOptions& options, bool* forked) {
  if (forked != nullptr) *forked = false;
  if (const int sig = stop_requested()) return Fault{FaultKind::timeout, "--isolate: interrupted by signal " + signal_text(sig)};
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    return Fault{FaultKind::crash, std::string("--isolate: cannot create a pipe: ") + std::strerror(errno)};
  }
  std::fflush(nullptr);  // buffered output would otherwise be written twice
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    return Fault{FaultKind::crash, std::string("--isolate: cannot fork: ") + std::strerror(errno)};
  }
  if (forked != nullptr) *forked = true;
  if (pid == 0) {
    ::setpgid(0, 0);  // its own group: whatever the backend forks is killed with it
    ::close(fds[0]);
    worker(backend, c, options, fds[1]);
  }
  ::setpgid(pid, pid);  // also here, so the group exists before the parent may signal it
  ::close(fds[1]);
  ::fcntl(fds[0], F_SETFL, ::fcntl(fds[0], F_GETFL) | O_NONBLOCK);

  // The most a well-formed result can take: the largest tensor the limits allow, plus headers.
  const std::uint64_t cap = static_cast<std::uint64_t>(options.limits.max_tensor_elements) * 8 + (std::uint64_t{4} << 20);
  const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                           std::chrono::duration<double>(options.timeout_seconds));
  std::string data;
  bool eof = false;
  bool oversized = false;
  // A process the backend forked may hold the pipe open after the worker exited: the worker's
  // exit ends the read too (what it wrote is in the pipe by then).
  std::optional<int> exited;
  char buf[65536];
  int interrupted = 0;
  while (!eof && !oversized) {
    const auto now = Clock::now();
    if (now >= deadline) break;
    if ((interrupted = stop_requested()) != 0) break;  // SIGINT/SIGTERM: the caller discards this case
    pollfd p{fds[0], POLLIN, 0};
    const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now).count() + 1;
    const bool ready = ::poll(&p, 1, static_cast<int>(std::min<long long>(ms, 100))) > 0;
    while (ready) {
      const ssize_t n = ::read(fds[0], buf, sizeof buf);
      if (n > 0) {
        data.append(buf, static_cast<std::size_t>(n));
        if (data.size() > cap) {
          oversized = true;
          break;
        }
        continue;
      }
      if (n == 0) eof = true;
      break;  // EOF, EAGAIN or an error
    }
    if (!eof && !oversized && !exited) {
      int st = 0;
      if (::waitpid(pid, &st, WNOHANG) == pid) {
        exited = st;
        ssize_t n = 0;
        while ((n = ::read(fds[0], buf, sizeof buf)) > 0 && data.size() <= cap) data.append(buf, static_cast<std::size_t>(n));
        oversized = data.size() > cap;
        eof = true;
      }
    }
  }
  ::close(fds[0]);
  ::kill(-pid, SIGKILL);  // what the worker left running (its own exit, or ours below, is reaped)
  if (!eof && !oversized) {
    ::kill(pid, SIGKILL);
    reap(pid);
    if (interrupted) return Fault{FaultKind::timeout, "--isolate: interrupted by signal " + signal_text(interrupted)};
    char secs[32];
    std::snprintf(secs, sizeof secs, "%g", options.timeout_seconds);
    return Fault{FaultKind::timeout, std::string("--isolate: no result within ") + secs + " s; the worker was killed" +
                                         limit_text(options)};
  }
  if (oversized && !exited) ::kill(pid, SIGKILL);
  const int status = exited ? *exited : reap(pid);
  if (!oversized) {
    if (auto r = parse_result(data, options.limits, answer_rank_bound(c))) return std::move(*r);
  }
  std::string how;
  if (WIFSIGNALED(status)) {
    how = "killed by signal " + signal_text(WTERMSIG(status));
  } else if (WIFEXITED(status)) {
    how = "exited with status " + std::to_string(WEXITSTATUS(status));
  }
  if (oversized) how = "sent a result over the size limit (" + std::to_string(data.size()) + " bytes)";
  return Fault{FaultKind::crash, "--isolate: the worker " + how + " without a complete result" + limit_text(options)};
}

std::unique_ptr<Backend> isolate_backend(std::unique_ptr<Backend> backend, const IsolateOptions& options) {
  if (dynamic_cast<ProcessBackend*>(backend.get()) != nullptr) return backend;
  return std::make_unique<IsolatedBackend>(std::move(backend), options);
}

void isolate_backends(std::vector<std::unique_ptr<Backend>>& backends, const IsolateOptions& options) {
  for (auto& b : backends) b = isolate_backend(std::move(b), options);
}

}  // namespace einfuzz
