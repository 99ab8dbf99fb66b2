#include "core/import/trace_streambuf.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>

#include "core/import/trace_error.h"

namespace tunebench::import {

TraceStreambuf::TraceStreambuf(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) throw TraceError("cannot open " + path + ": " + std::strerror(errno));
  if (!S_ISREG(st.st_mode)) throw TraceError("cannot import " + path + ": it is not a regular file");
  m_file.reset(std::fopen(path.c_str(), "rb"));
  if (!m_file) throw TraceError("cannot open " + path + ": " + std::strerror(errno));
  m_source_bytes = static_cast<int64_t>(st.st_size);
  start();
}

TraceStreambuf::TraceStreambuf(std::string_view bytes) : m_memory(bytes) {
  m_source_bytes = static_cast<int64_t>(bytes.size());
  start();
}

TraceStreambuf::~TraceStreambuf() {
  if (m_zs_ready) inflateEnd(&m_zs);
}

void TraceStreambuf::start() {
  m_in.resize(kChunkBytes);
  m_out.resize(kChunkBytes);
  setg(m_out.data(), m_out.data(), m_out.data());
  if (!read_source()) return;
  m_gzip = m_in_end - m_in_begin >= 2 && static_cast<unsigned char>(m_in[0]) == 0x1f &&
           static_cast<unsigned char>(m_in[1]) == 0x8b;
  if (!m_gzip) return;
  // 15 + 16: a gzip wrapper (not zlib or raw deflate), the largest window.
  if (inflateInit2(&m_zs, 15 + 16) != Z_OK) {
    fail("zlib could not be initialised");
    return;
  }
  m_zs_ready = true;
  m_zs.next_in = reinterpret_cast<Bytef*>(m_in.data());
  m_zs.avail_in = static_cast<uInt>(m_in_end);
}

bool TraceStreambuf::read_source() {
  if (m_source_eof || m_cancelled) return false;
  size_t n = 0;
  if (m_file) {
    n = std::fread(m_in.data(), 1, m_in.size(), m_file.get());
    if (n == 0 && std::ferror(m_file.get())) {
      fail(std::string("read error: ") + std::strerror(errno));
      return false;
    }
  } else {
    const size_t offset = static_cast<size_t>(m_source_read);
    n = std::min(m_in.size(), m_memory.size() - offset);
    std::memcpy(m_in.data(), m_memory.data() + offset, n);
  }
  m_in_begin = 0;
  m_in_end = n;
  m_source_read += static_cast<int64_t>(n);
  if (n == 0) {
    m_source_eof = true;
    return false;
  }
  if (m_progress && !m_progress(m_source_read)) {
    m_cancelled = true;
    fail("cancelled");
    return false;
  }
  return true;
}

TraceStreambuf::int_type TraceStreambuf::fail(std::string why) {
  if (m_error.empty()) m_error = std::move(why);
  m_done = true;
  return traits_type::eof();
}

TraceStreambuf::int_type TraceStreambuf::underflow() {
  if (gptr() < egptr()) return traits_type::to_int_type(*gptr());
  if (m_done) return traits_type::eof();
  if (!m_gzip) {
    // Plain JSON: hand out the source chunk itself.
    if (m_in_begin >= m_in_end && !read_source()) {
      m_done = true;
      return traits_type::eof();
    }
    std::memcpy(m_out.data(), m_in.data() + m_in_begin, m_in_end - m_in_begin);
    const size_t n = m_in_end - m_in_begin;
    m_in_begin = m_in_end;
    m_output_total += static_cast<int64_t>(n);
    setg(m_out.data(), m_out.data(), m_out.data() + n);
    return traits_type::to_int_type(*gptr());
  }
  for (;;) {
    if (m_member_ended) {
      // A gzip file may hold several members (concatenated .gz files); anything else after the
      // trailer is ignored, as gzip(1) does with trailing zeros.
      if (m_zs.avail_in == 0 && !read_source()) break;
      if (m_zs.avail_in == 0) {
        m_zs.next_in = reinterpret_cast<Bytef*>(m_in.data());
        m_zs.avail_in = static_cast<uInt>(m_in_end);
      }
      if (static_cast<unsigned char>(m_zs.next_in[0]) != 0x1f) break;
      inflateReset(&m_zs);
      m_member_ended = false;
    }
    if (m_zs.avail_in == 0) {
      if (!read_source()) {
        if (m_cancelled || !m_error.empty()) return traits_type::eof();
        m_truncated = true;
        return fail("the gzip stream ends before its end marker (the file is truncated)");
      }
      m_zs.next_in = reinterpret_cast<Bytef*>(m_in.data());
      m_zs.avail_in = static_cast<uInt>(m_in_end);
    }
    m_zs.next_out = reinterpret_cast<Bytef*>(m_out.data());
    m_zs.avail_out = static_cast<uInt>(m_out.size());
    const int ret = inflate(&m_zs, Z_NO_FLUSH);
    const size_t produced = m_out.size() - m_zs.avail_out;
    if (ret == Z_STREAM_END) {
      m_member_ended = true;
    } else if ((ret != Z_OK && ret != Z_BUF_ERROR) || (ret == Z_BUF_ERROR && produced == 0 && m_zs.avail_in > 0)) {
      return fail(std::string("corrupt gzip data (zlib: ") + (m_zs.msg ? m_zs.msg : "error " + std::to_string(ret)) +
                  ")");
    }
    if (produced > 0) {
      m_output_total += static_cast<int64_t>(produced);
      setg(m_out.data(), m_out.data(), m_out.data() + produced);
      return traits_type::to_int_type(*gptr());
    }
  }
  m_done = true;
  return traits_type::eof();
}

}  // namespace tunebench::import
