// Writing events: one JSON object per line, to a file, a local socket, a TCP peer or stdout.
//
// The worker's ranks, the replay tool and tests write through EventWriter. Writes are
// thread-safe (the telemetry sampler thread and the training thread share one writer) and each
// line is written whole with one write(2) loop, so a reader never sees half of a line from two
// writers interleaved.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include "core/protocol/events.h"

namespace tunebench::protocol {

// Formats an event as its wire line, including the trailing '\n'.
std::string format_line(const Event& event);

// Where lines go. Implementations need not be thread-safe: EventWriter serialises calls.
class LineSink {
 public:
  virtual ~LineSink() = default;
  // Returns false when the line could not be written (peer gone, disk full).
  virtual bool write_line(std::string_view line) = 0;
};

// A sink over a POSIX file descriptor. Owns (and closes) the fd when `owned` is true.
class FdLineSink final : public LineSink {
 public:
  FdLineSink(int fd, bool owned);
  ~FdLineSink() override;
  bool write_line(std::string_view line) override;

 private:
  int m_fd;
  bool m_owned;
};

// Opens the channel named by a spec: "file:PATH", "unix:PATH", "tcp://HOST:PORT", "stdout"
// or "-" (stdout), "stderr", "none". Throws std::runtime_error with a readable message on failure.
// A tcp:// sink with a non-empty `token` first writes the token line (event_token.h).
std::unique_ptr<LineSink> open_line_sink(const std::string& spec, const std::string& token = "");

class EventWriter {
 public:
  explicit EventWriter(std::unique_ptr<LineSink> sink);
  // Stamps header.trial and header.rank on every event written through write_payload().
  void set_identity(std::string trial, int rank);
  void write(const Event& event);
  // Convenience: wraps the payload in a header (trial, rank, now) and writes it.
  void write_payload(Payload payload);
  // False once any write failed; the worker keeps training but says so on stderr.
  bool ok() const;

 private:
  mutable std::mutex m_mutex;
  std::unique_ptr<LineSink> m_sink;
  std::string m_trial;
  int m_rank = 0;
  bool m_ok = true;
};

}  // namespace tunebench::protocol
