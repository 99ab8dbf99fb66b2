#include "core/launch/event_listener.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "core/protocol/event_token.h"

namespace tunebench::launch {

namespace {
constexpr size_t kReadBytes = 256 * 1024;  // per read, as the GUI's EventChannel

std::string peer_name(int fd) {
  sockaddr_storage addr{};
  socklen_t len = sizeof(addr);
  if (::getpeername(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) return "?";
  char host[INET6_ADDRSTRLEN] = "?";
  int port = 0;
  if (addr.ss_family == AF_INET) {
    auto* a = reinterpret_cast<sockaddr_in*>(&addr);
    ::inet_ntop(AF_INET, &a->sin_addr, host, sizeof(host));
    port = ntohs(a->sin_port);
  } else if (addr.ss_family == AF_INET6) {
    auto* a = reinterpret_cast<sockaddr_in6*>(&addr);
    ::inet_ntop(AF_INET6, &a->sin6_addr, host, sizeof(host));
    port = ntohs(a->sin6_port);
  }
  return std::string(host) + ":" + std::to_string(port);
}
}  // namespace

// Named, not anonymous: EventListener::Connection (external linkage) holds it.
namespace event_listener_detail {
struct Forward final : protocol::ReadListener {
  explicit Forward(const EventListener::Callbacks& c) : callbacks(c) {}
  void on_event(protocol::Event&& e) override {
    if (callbacks.event) callbacks.event(std::move(e));
  }
  void on_problem(const protocol::ReadProblem& p) override {
    if (callbacks.problem) callbacks.problem(p);
  }
  const EventListener::Callbacks& callbacks;
};
}  // namespace event_listener_detail

struct EventListener::Connection {
  Connection(int f, bool t, const Callbacks& c) : fd(f), needs_token(t), forward(c), reader(forward) {}
  int fd;
  bool needs_token;
  std::string first_line;  // bytes before the token line's '\n'
  event_listener_detail::Forward forward;
  protocol::EventReader reader;
};

EventListener::EventListener(Callbacks callbacks) : m_callbacks(std::move(callbacks)) {}

EventListener::~EventListener() {
  for (auto& c : m_connections) ::close(c->fd);
  if (m_unix_fd >= 0) ::close(m_unix_fd);
  if (m_tcp_fd >= 0) ::close(m_tcp_fd);
  if (!m_unix_path.empty()) ::unlink(m_unix_path.c_str());
}

bool EventListener::listen_unix(const std::string& path, std::string* error) {
  sockaddr_un addr{};
  if (path.size() >= sizeof(addr.sun_path)) {
    if (error) *error = "socket path too long: " + path;
    return false;
  }
  m_unix_fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  const mode_t old = ::umask(0177);  // owner only, from the first moment
  const bool ok = m_unix_fd >= 0 && ::bind(m_unix_fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0 &&
                  ::listen(m_unix_fd, 64) == 0;
  ::umask(old);
  if (!ok) {
    if (error) *error = "cannot listen on " + path + ": " + std::strerror(errno);
    return false;
  }
  m_unix_path = path;
  return true;
}

bool EventListener::listen_tcp(const std::string& bind_address, int port, const std::string& token,
                               std::string* error) {
  if (token.empty()) {
    if (error) *error = "a TCP event listener needs a token";
    return false;
  }
  m_token = token;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(uint16_t(port));
  if (::inet_pton(AF_INET, bind_address.c_str(), &addr.sin_addr) != 1) {
    if (error) *error = "not an IPv4 address: " + bind_address;
    return false;
  }
  m_tcp_fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  socklen_t len = sizeof(addr);
  if (m_tcp_fd < 0 || ::bind(m_tcp_fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      ::listen(m_tcp_fd, 64) != 0 || ::getsockname(m_tcp_fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    if (error) *error = "cannot listen on " + bind_address + ":" + std::to_string(port) + ": " + std::strerror(errno);
    return false;
  }
  m_tcp_port = ntohs(addr.sin_port);
  return true;
}

void EventListener::add_poll_fds(std::vector<pollfd>& fds) const {
  if (m_unix_fd >= 0) fds.push_back({m_unix_fd, POLLIN, 0});
  if (m_tcp_fd >= 0) fds.push_back({m_tcp_fd, POLLIN, 0});
  for (const auto& c : m_connections) fds.push_back({c->fd, POLLIN, 0});
}

void EventListener::handle(const std::vector<pollfd>& fds) {
  for (const pollfd& p : fds) {
    if (!(p.revents & (POLLIN | POLLHUP | POLLERR))) continue;
    if (p.fd == m_unix_fd) accept_on(m_unix_fd, false);
    else if (p.fd == m_tcp_fd) accept_on(m_tcp_fd, true);
    else
      for (auto& c : m_connections)
        if (c->fd == p.fd) {
          read_from(*c);
          break;
        }
  }
  m_connections.erase(std::remove_if(m_connections.begin(), m_connections.end(),
                                     [](const std::unique_ptr<Connection>& c) { return c->fd < 0; }),
                      m_connections.end());
}

void EventListener::accept_on(int listen_fd, bool tcp) {
  while (true) {
    const int fd = ::accept4(listen_fd, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (fd < 0) return;
    m_connections.push_back(std::make_unique<Connection>(fd, tcp, m_callbacks));
  }
}

void EventListener::read_from(Connection& c) {
  std::string buf(kReadBytes, '\0');
  const ssize_t n = ::read(c.fd, buf.data(), buf.size());
  if (n < 0 && (errno == EAGAIN || errno == EINTR)) return;
  if (n <= 0) {
    if (!c.needs_token) c.reader.finish();
    ::close(c.fd);
    c.fd = -1;
    return;
  }
  std::string_view data(buf.data(), size_t(n));
  if (c.needs_token) {
    const auto nl = data.find('\n');
    c.first_line.append(data.substr(0, nl));
    if (nl == std::string_view::npos && c.first_line.size() <= protocol::kMaxTokenLineBytes) return;
    const auto check = c.first_line.size() > protocol::kMaxTokenLineBytes
                           ? protocol::TokenCheck::Missing
                           : protocol::check_event_token_line(c.first_line, m_token);
    if (check != protocol::TokenCheck::Ok) {
      ++m_dropped;
      if (m_callbacks.log)
        m_callbacks.log("dropped an event connection from " + peer_name(c.fd) +
                        (check == protocol::TokenCheck::Wrong ? ": wrong token" : ": no token in its first line"));
      ::close(c.fd);
      c.fd = -1;
      return;
    }
    c.needs_token = false;
    data = data.substr(nl + 1);
  }
  if (!data.empty()) c.reader.feed(data);
}

int EventListener::open_connections() const { return int(m_connections.size()); }

void EventListener::close_all() {
  for (auto& c : m_connections) {
    if (c->fd < 0) continue;
    if (!c->needs_token) c->reader.finish();
    ::close(c->fd);
    c->fd = -1;
  }
  m_connections.clear();
}

}  // namespace tunebench::launch
