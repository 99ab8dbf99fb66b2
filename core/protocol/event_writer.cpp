#include "core/protocol/event_writer.h"

#include "core/protocol/event_token.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace tunebench::protocol {
namespace {

[[noreturn]] void fail(const std::string& what) {
  throw std::runtime_error(what + ": " + std::strerror(errno));
}

int connect_unix(const std::string& path) {
  sockaddr_un addr{};
  if (path.size() >= sizeof(addr.sun_path)) throw std::runtime_error("socket path too long: " + path);
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) fail("socket");
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    const int err = errno;
    ::close(fd);
    errno = err;
    fail("cannot connect to event socket " + path);
  }
  return fd;
}

int connect_tcp(const std::string& hostport) {
  const auto colon = hostport.rfind(':');
  if (colon == std::string::npos) throw std::runtime_error("tcp spec needs HOST:PORT, got " + hostport);
  const std::string host = hostport.substr(0, colon);
  const std::string port = hostport.substr(colon + 1);
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  if (int rc = ::getaddrinfo(host.c_str(), port.c_str(), &hints, &res); rc != 0)
    throw std::runtime_error("cannot resolve " + hostport + ": " + gai_strerror(rc));
  int fd = -1;
  for (addrinfo* p = res; p; p = p->ai_next) {
    fd = ::socket(p->ai_family, p->ai_socktype | SOCK_CLOEXEC, p->ai_protocol);
    if (fd < 0) continue;
    if (::connect(fd, p->ai_addr, p->ai_addrlen) == 0) break;
    ::close(fd);
    fd = -1;
  }
  ::freeaddrinfo(res);
  if (fd < 0) fail("cannot connect to " + hostport);
  return fd;
}

}  // namespace

std::string format_line(const Event& event) {
  // dump() escapes control characters and replaces invalid UTF-8, so a line never contains a
  // raw newline: the framing cannot be broken by a log message.
  std::string line = to_json(event).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  line.push_back('\n');
  return line;
}

FdLineSink::FdLineSink(int fd, bool owned) : m_fd(fd), m_owned(owned) {}

FdLineSink::~FdLineSink() {
  if (m_owned && m_fd >= 0) ::close(m_fd);
}

bool FdLineSink::write_line(std::string_view line) {
  const char* p = line.data();
  size_t left = line.size();
  while (left > 0) {
    const ssize_t n = ::write(m_fd, p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    p += n;
    left -= static_cast<size_t>(n);
  }
  return true;
}

std::unique_ptr<LineSink> open_line_sink(const std::string& spec, const std::string& token) {
  if (spec == "stdout" || spec == "-") return std::make_unique<FdLineSink>(STDOUT_FILENO, false);
  if (spec == "stderr") return std::make_unique<FdLineSink>(STDERR_FILENO, false);
  if (spec == "none") {
    struct NullSink final : LineSink {
      bool write_line(std::string_view) override { return true; }
    };
    return std::make_unique<NullSink>();
  }
  if (spec.rfind("file:", 0) == 0) {
    const std::string path = spec.substr(5);
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0) fail("cannot open event file " + path);
    return std::make_unique<FdLineSink>(fd, true);
  }
  if (spec.rfind("unix:", 0) == 0) return std::make_unique<FdLineSink>(connect_unix(spec.substr(5)), true);
  if (spec.rfind("tcp://", 0) == 0) {
    auto sink = std::make_unique<FdLineSink>(connect_tcp(spec.substr(6)), true);
    if (!token.empty() && !sink->write_line(event_token_line(token))) fail("cannot send the event token to " + spec);
    return sink;
  }
  throw std::runtime_error("unknown event channel '" + spec +
                           "' (use file:PATH, unix:PATH, tcp://HOST:PORT or stdout)");
}

EventWriter::EventWriter(std::unique_ptr<LineSink> sink) : m_sink(std::move(sink)) {}

void EventWriter::set_identity(std::string trial, int rank) {
  std::lock_guard<std::mutex> lock(m_mutex);
  m_trial = std::move(trial);
  m_rank = rank;
}

void EventWriter::write(const Event& event) {
  const std::string line = format_line(event);
  std::lock_guard<std::mutex> lock(m_mutex);
  if (!m_sink->write_line(line)) m_ok = false;
}

void EventWriter::write_payload(Payload payload) {
  Event e;
  {
    std::lock_guard<std::mutex> lock(m_mutex);
    e.header.trial = m_trial;
    e.header.rank = m_rank;
  }
  e.header.t_us = now_us();
  e.payload = std::move(payload);
  write(e);
}

bool EventWriter::ok() const {
  std::lock_guard<std::mutex> lock(m_mutex);
  return m_ok;
}

}  // namespace tunebench::protocol
