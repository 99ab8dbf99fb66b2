// TraceStreambuf: the bytes of a trace file as a std::streambuf, gunzipped on the fly.
//
// torch.profiler writes plain JSON (export_chrome_trace) or gzip (tensorboard_trace_handler with
// use_gzip): the first two bytes (1f 8b) decide, not the file name. The buffer holds one 256 KiB
// chunk of the source and one of output, whatever the file's size, so the JSON parser above it
// streams. It never throws on bad bytes: a truncated gzip stream, corrupt deflate data or a
// cancelled read end the stream early and say why in error(), which the reader turns into its
// message. It does not parse JSON.
#pragma once

#include <zlib.h>

#include <cstdint>
#include <cstdio>
#include <functional>
#include <memory>
#include <streambuf>
#include <string>
#include <string_view>
#include <vector>

namespace tunebench::import {

class TraceStreambuf : public std::streambuf {
 public:
  static constexpr size_t kChunkBytes = 256u << 10;
  // Called after each chunk of the source is read with the source bytes read so far; returning
  // false cancels: the stream ends and cancelled() is true.
  using Progress = std::function<bool(int64_t source_bytes_read)>;

  // Reads a file; throws TraceError when it cannot be opened or is not a regular file.
  explicit TraceStreambuf(const std::string& path);
  // Reads `bytes`, which must outlive the buffer (fuzzing, tests).
  explicit TraceStreambuf(std::string_view bytes);
  ~TraceStreambuf() override;
  TraceStreambuf(const TraceStreambuf&) = delete;
  TraceStreambuf& operator=(const TraceStreambuf&) = delete;

  void set_progress(Progress progress) { m_progress = std::move(progress); }

  bool gzip() const { return m_gzip; }
  int64_t source_bytes() const { return m_source_bytes; }  // size of the file (or buffer)
  int64_t source_read() const { return m_source_read; }    // consumed so far
  int64_t output_bytes() const { return m_output_total; }  // uncompressed bytes produced so far
  // Why the stream ended before its natural end: "" when it did not.
  const std::string& error() const { return m_error; }
  bool truncated() const { return m_truncated; }
  bool cancelled() const { return m_cancelled; }

 protected:
  int_type underflow() override;

 private:
  void start();
  bool read_source();  // next chunk of the source into m_in; false at its end or on cancel
  int_type fail(std::string why);

  std::unique_ptr<std::FILE, int (*)(std::FILE*)> m_file{nullptr, &std::fclose};
  std::string_view m_memory;
  std::vector<char> m_in;
  std::vector<char> m_out;
  size_t m_in_begin = 0, m_in_end = 0;  // unread part of m_in (plain mode)
  z_stream m_zs{};
  bool m_gzip = false;
  bool m_zs_ready = false;
  bool m_member_ended = false;  // the last gzip member reached its trailer
  bool m_source_eof = false;
  bool m_done = false;
  bool m_truncated = false;
  bool m_cancelled = false;
  int64_t m_source_bytes = 0;
  int64_t m_source_read = 0;
  int64_t m_output_total = 0;
  std::string m_error;
  Progress m_progress;
};

}  // namespace tunebench::import
