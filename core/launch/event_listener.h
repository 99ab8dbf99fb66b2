// The headless runner's event channel: a unix socket (local ranks, and ssh's forwarded
// connections) and optionally a TCP listener whose connections must present the trial's token
// in their first line (slurm). Each connection gets its own protocol::EventReader, so a line
// split across reads, a bad line or a truncated last line are handled as everywhere else.
// Single-threaded: the caller polls poll_fds() and calls handle() (the GUI's EventChannel is the
// Qt counterpart).
#pragma once

#include <poll.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/protocol/event_reader.h"

namespace tunebench::launch {

class EventListener {
 public:
  struct Callbacks {
    std::function<void(protocol::Event&&)> event;
    std::function<void(const protocol::ReadProblem&)> problem;
    std::function<void(const std::string&)> log;  // dropped connections and other notices
  };
  explicit EventListener(Callbacks callbacks);
  ~EventListener();  // closes every socket and unlinks the unix socket
  EventListener(const EventListener&) = delete;
  EventListener& operator=(const EventListener&) = delete;

  // Listens on a unix socket at `path` (mode 0600). False with `error` set on failure.
  bool listen_unix(const std::string& path, std::string* error);
  // Listens on TCP `bind_address` (e.g. "0.0.0.0"), port 0 = any; connections must present `token`.
  bool listen_tcp(const std::string& bind_address, int port, const std::string& token, std::string* error);
  int tcp_port() const { return m_tcp_port; }

  // The fds to poll (listeners and connections), to be passed back to handle() after poll().
  void add_poll_fds(std::vector<pollfd>& fds) const;
  void handle(const std::vector<pollfd>& fds);
  int open_connections() const;
  int dropped_connections() const { return m_dropped; }
  // Ends every connection's reader (a truncated last line is reported) and closes it.
  void close_all();

 private:
  struct Connection;
  void accept_on(int listen_fd, bool tcp);
  void read_from(Connection& c);

  Callbacks m_callbacks;
  int m_unix_fd = -1, m_tcp_fd = -1, m_tcp_port = 0;
  std::string m_unix_path, m_token;
  std::vector<std::unique_ptr<Connection>> m_connections;
  int m_dropped = 0;
};

}  // namespace tunebench::launch
