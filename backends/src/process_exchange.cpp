// The `cmd:` backend's exchanges (PROTOCOL A over the pipes of process.cpp's child): write a request,
// read one line and its payload under the timeout, the hello, and one case with its late faults.
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <type_traits>
#include <utility>

#include "einfuzz/core/check_case.hpp"
#include "einfuzz/core/text.hpp"
#include "process_impl.hpp"

namespace einfuzz {
namespace {

using Clock = std::chrono::steady_clock;
using wire::Json;
using wire::printable;
using child::seconds_text;
using child::signal_text;

}  // namespace

template <class OnLine>
std::optional<Fault> ProcessBackend::Impl::exchange(std::span<const std::span<const std::byte>> chunks,
                                                  double timeout_seconds, const char* what, Incoming& in,
                                                  OnLine on_line, bool leave_extra) {
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
        auto parsed = wire::parse_line(out_buf.substr(0, nl), options.max_line_bytes);
        out_buf.erase(0, nl + 1);
        if (auto* why = std::get_if<std::string>(&parsed)) return protocol_fault(*why);
        in.line = std::move(std::get<Json>(parsed));
        if constexpr (!std::is_same_v<OnLine, std::nullptr_t>) {
          if (auto f = on_line(in)) return f;
          if (!in.line) continue;  // consumed: not this request's message
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
      if (!out_buf.empty() && !leave_extra) {
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

std::variant<Json, Fault> ProcessBackend::Impl::exchange_line(const std::string& request, double timeout_seconds, const char* what) {
  std::vector<std::span<const std::byte>> chunks = {std::as_bytes(std::span(request.data(), request.size()))};
  Incoming in;
  // Only the hello is exchanged line by line: what follows it is a fault of the hello that the
  // first case's exchange finds (run, exchange_case), wherever the pipe happened to split it.
  if (auto f = exchange(chunks, timeout_seconds, what, in, nullptr, /*leave_extra=*/true)) return *f;
  return std::move(*in.line);
}

void ProcessBackend::Impl::copy_payload(Incoming& in, const char* data, std::size_t n) {
  if (n == 0) return;  // an empty output may have no storage at all
  auto* dst = reinterpret_cast<char*>(const_cast<std::byte*>(in.payload->bytes().data()));
  std::memcpy(dst + in.payload_have, data, n);
  in.payload_have += n;
}

std::optional<std::size_t> ProcessBackend::Impl::read_stdout(Incoming& in) {
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

void ProcessBackend::Impl::drain_stdout_now() {
  if (out_fd < 0) return;
  char buf[4096];
  while (out_buf.size() < 4096) {
    const ssize_t n = ::read(out_fd, buf, sizeof buf);
    if (n <= 0) return;
    out_buf.append(buf, static_cast<std::size_t>(n));
  }
}

std::optional<Fault> ProcessBackend::Impl::read_hello(const Json& j) {
  auto decoded = wire::decode_hello(j, options.command, notation);
  if (auto* why = std::get_if<std::string>(&decoded)) return Fault{FaultKind::protocol, std::move(*why)};
  // The first hello fixes the capabilities; a restarted process is held to them.
  if (!hello_done) {
    caps = std::move(std::get<Capabilities>(decoded));
    hello_done = true;
  }
  return std::nullopt;
}

void ProcessBackend::Impl::late_fault(std::int64_t request, const std::string& what, const Case* found_on,
                                      bool in_step) {
  const Fault f = in_step ? Fault{FaultKind::protocol, what} : protocol_fault(what);
  if (request == 0) {
    late.push_back(LateFault{0, found_on ? found_on->pattern : std::string(), f,
                             found_on ? std::optional<Case>(*found_on) : std::nullopt});
    return;
  }
  const bool last = request == last_id;
  late.push_back(LateFault{request, last ? last_pattern : std::string(), f, last ? last_case : std::nullopt});
}

BackendResult ProcessBackend::Impl::run(const Case& c) {
  // A stopping run starts nothing new (no restart, no request): it only waits for its workers.
  if (const int sig = stop_requested()) return Fault{FaultKind::timeout, "interrupted by signal " + signal_text(sig)};
  if (auto why = wire::not_describable(c)) return Unsupported{*why};
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
                   " (a second message or a long payload), starting \"" + printable(out_buf, 60) + "\"",
               &c);
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


BackendResult ProcessBackend::Impl::exchange_case(const Case& c) {
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
  const std::string line = wire::request_line(c, id, storages);
  std::vector<std::span<const std::byte>> chunks = {std::as_bytes(std::span(line.data(), line.size()))};
  for (std::size_t k = 0; k < c.inputs.size(); ++k) chunks.push_back(storages[k] ? storages[k]->bytes() : c.inputs[k].bytes());
  // A VJP: the cotangent's bytes after the inputs'; the answer is one cotangent per input.
  if (c.is_vjp()) chunks.push_back(c.cotangent->bytes());
  const std::optional<std::size_t> gradients = c.is_vjp() ? std::optional(c.inputs.size()) : std::nullopt;
  std::vector<Shape> gradient_shapes;

  const DType out_dtype = wire::output_dtype(c);
  std::optional<Tensor> output;
  std::optional<BackendResult> answer;
  Incoming in;
  bool hello_recorded = false;  // once per request: a flood of them records nothing more
  auto on_line = [&](Incoming& msg) -> std::optional<Fault> {
    if (wire::is_hello_answer(*msg.line)) {
      // A second hello in place of this answer: the hello's fault, not this case's. The line is
      // whole and carries no payload, so the stream is in step and this answer is still read.
      if (!hello_recorded) {
        late_fault(0, "a second hello arrived while request " + std::to_string(id) + " waited for its answer: \"" +
                          printable(msg.line->dump(), 120) + "\"",
                   &c, /*in_step=*/true);
      }
      hello_recorded = true;
      msg.line.reset();
      return std::nullopt;
    }
    wire::Response r = wire::decode_response(*msg.line, id, first_id, out_dtype, options.limits, gradients);
    if (const auto* stale = std::get_if<wire::StaleResponse>(&r)) {
      // The id of a request this process has already answered: a second answer to it.
      stale_answer = true;
      late_fault(stale->request, "a second response to request " + std::to_string(stale->request) +
                                     " arrived while request " + std::to_string(id) + " waited for its answer: \"" +
                                     printable(msg.line->dump(), 120) + "\"");
      return late.back().fault;
    }
    if (const auto* bad = std::get_if<wire::BadResponse>(&r)) return protocol_fault(bad->what);
    if (const auto* payload = std::get_if<wire::Payload>(&r)) {
      if (auto why = wire::oversized_answer(c, payload->shape, options.limits)) return protocol_fault(*why);
      if (auto why = wire::overranked_answer(c, payload->shapes.empty() ? std::span(&payload->shape, 1) : std::span(payload->shapes))) {
        return protocol_fault(*why);
      }
      output.emplace(out_dtype, payload->shape);
      gradient_shapes = payload->shapes;
      msg.payload = &*output;
      msg.payload_bytes = output->bytes().size();
      return std::nullopt;
    }
    if (auto* rejection = std::get_if<Rejected>(&r)) {
      answer = std::move(*rejection);
    } else {
      answer = std::get<Unsupported>(std::move(r));
    }
    return std::nullopt;
  };
  if (auto f = exchange(chunks, options.timeout_seconds, "case", in, on_line)) return *f;
  last_id = id;
  last_pattern = c.pattern;
  last_case = c;
  if (answer) return *answer;
  if (gradients) return wire::split_gradients(*output, gradient_shapes);
  return std::move(*output);
}

}  // namespace einfuzz
