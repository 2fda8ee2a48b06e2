// Internal to the `cmd:` backend: the state of one backend process and its members, defined in
// process.cpp (the process's lifetime: spawn, kill, faults with evidence) and process_exchange.cpp
// (one exchange: write a request, read a line and its payload; hello; one case), and the pipeline
// thread that runs cases submitted with submit/collect (process_pipeline.cpp).
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <variant>
#include <vector>

#include "einfuzz/backends/process.hpp"
#include "process_child.hpp"
#include "process_wire.hpp"

namespace einfuzz {

struct ProcessBackend::Impl {
  explicit Impl(ProcessOptions o);

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
  child::StderrRing err_ring;
  std::int64_t next_id = 1;
  std::int64_t first_id = 1;      // the first request id this process was sent
  std::int64_t last_id = 0;       // the last request answered (its response complete), 0: none
  std::string last_pattern;       // that request's pattern, for the evidence of a late fault
  std::optional<Case> last_case;  // that request's case, which a late fault is charged to
  bool stale_answer = false;      // the fault just returned is a response to an earlier request
  std::vector<LateFault> late;
  std::size_t late_taken = 0;     // late faults already handed out by take_late_faults

  // -------------------------------------------------------------------------------------------
  // Process lifetime

  void close_fds();

  /// Kills the whole process group and reaps the shell; returns the wait status (or -1).
  int kill_process();

  /// PROTOCOL A §5: bye, stdin closed, then up to kExitGrace for the process to exit while stdout
  /// and stderr are drained; then what is left is killed. Returns the first 4 KiB the process had
  /// written to stdout and not been read (out_buf's, then what came).
  std::string say_bye();

  /// Reads what stderr holds now, at most 1 MiB per call: a backend writing as fast as this reads
  /// must not keep the harness here past its deadlines.
  void drain_stderr();

  /// The process stopped talking (stdout closed or stdin refused): give it a moment to exit, so
  /// the evidence can say how it ended, then kill what is left.
  Fault crash_fault(const std::string& what);

  Fault timeout_fault(const std::string& what);

  Fault protocol_fault(const std::string& what);

  std::optional<Fault> spawn();

  /// Starts the process and exchanges the hello; the fault (and no process) when either fails.
  /// The first start (on construction) may take hello_timeout_seconds; a restart happens inside a
  /// case, so its hello gets no more than the case's timeout.
  std::optional<Fault> start();

  // -------------------------------------------------------------------------------------------
  // One exchange: write the request, read one JSON line (and its payload)

  /// The parsed line and, when a payload follows, where to put it.
  struct Incoming {
    std::optional<wire::Json> line;
    Tensor* payload = nullptr;       // set by the caller once the line is validated
    std::size_t payload_bytes = 0;   // bytes the line announced
    std::size_t payload_have = 0;    // bytes received so far
  };

  std::variant<wire::Json, Fault> exchange_line(const std::string& request, double timeout_seconds, const char* what);

  /// Writes `chunks` and reads until one complete message: a JSON line, and when `on_line` asks
  /// for it (by setting `in.payload`), the payload bytes. Drains stderr throughout. A line that
  /// `on_line` consumed (it reset `in.line`) is skipped and reading goes on. Bytes after the message
  /// are a fault, unless `leave_extra`: then they stay in `out_buf` for the next exchange to find.
  template <class OnLine>
  std::optional<Fault> exchange(std::span<const std::span<const std::byte>> chunks, double timeout_seconds,
                                const char* what, Incoming& in, OnLine on_line, bool leave_extra = false);

  void copy_payload(Incoming& in, const char* data, std::size_t n);

  /// Reads what stdout has now into out_buf (payload bytes straight into the output tensor, no
  /// second copy of a large result). Returns the bytes read, or nullopt at end of file.
  std::optional<std::size_t> read_stdout(Incoming& in);

  /// Non-blocking: pulls whatever stdout holds right now into out_buf (for the long-payload check).
  void drain_stdout_now();

  // -------------------------------------------------------------------------------------------
  // Hello and capabilities

  std::optional<Fault> read_hello(const wire::Json& j);

  // -------------------------------------------------------------------------------------------
  // Requests and responses

  /// Records a fault that belongs to request `request` although it surfaced later (the bytes
  /// arrived after that request's response was complete), and kills the process unless the
  /// stream is still `in_step` (a whole line was read and skipped). Request 0 is the hello: its
  /// fault carries `found_on`, the case being run when it surfaced, since no case caused it.
  void late_fault(std::int64_t request, const std::string& what, const Case* found_on = nullptr, bool in_step = false);

  BackendResult run(const Case& c);

  /// Sends one case on the running process and reads its answer.
  BackendResult exchange_case(const Case& c);
};

/// The thread that runs submitted cases on one backend process (ProcessBackend::submit/collect):
/// the caller's thread hands over a copy of the case and later waits for its result, while this
/// thread runs Impl::run, the same code `run` uses, so every fault rule holds unchanged.
struct ProcessBackend::Pipeline {
  explicit Pipeline(Impl& impl);
  /// Stops the thread once the case it runs (if any) is done.
  ~Pipeline();
  Pipeline(const Pipeline&) = delete;
  Pipeline& operator=(const Pipeline&) = delete;

  void submit(const Case& c);
  /// The submitted case's result; rethrows what Impl::run threw.
  BackendResult collect();
  /// Waits for a case still in flight and drops its result (before a synchronous `run`).
  void discard_in_flight();

 private:
  void serve();

  Impl& impl_;
  std::mutex mutex_;
  std::condition_variable wake_;      // the thread: a case (or the end) arrived
  std::condition_variable finished_;  // the caller: the result is there
  std::optional<Case> job_;           // handed over, not yet taken by the thread
  std::optional<BackendResult> result_;
  std::exception_ptr error_;
  bool in_flight_ = false;  // submitted and not collected
  bool done_ = false;       // the in-flight case's result (or error) is there
  bool quit_ = false;
  std::thread thread_;      // last: started once every member above exists
};

}  // namespace einfuzz
