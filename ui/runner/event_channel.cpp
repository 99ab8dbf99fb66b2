#include "ui/runner/event_channel.h"

#include <algorithm>

#include <QLocalServer>
#include <QLocalSocket>
#include <QTimer>

#include "core/protocol/event_reader.h"

namespace tunebench::ui {

// One rank's stream. The rank is learned from the first event's header (a connection carries
// exactly one rank by contract).
struct EventChannel::Connection final : protocol::ReadListener {
  EventChannel* channel = nullptr;
  QLocalSocket* socket = nullptr;
  protocol::EventReader reader{*this};
  int rank = -1;
  bool disconnected = false;  // the rank closed; bytes may still be buffered
  bool finished = false;      // every byte parsed, the reader finished
  bool readScheduled = false;

  void on_event(protocol::Event&& event) override {
    rank = event.header.rank;
    channel->m_lastHeard[rank].start();
    channel->m_pending.push_back(std::move(event));
  }
  void on_problem(const protocol::ReadProblem& problem) override {
    LogLine line{rank, LogLine::Source::Event,
                 QStringLiteral("event line %1: %2: %3")
                     .arg(problem.line_number)
                     .arg(QString::fromStdString(problem.message), QString::fromStdString(problem.excerpt))};
    emit channel->logLine(line);
  }
};

EventChannel::EventChannel(QObject* parent)
    : QObject(parent), m_server(new QLocalServer(this)), m_flushTimer(new QTimer(this)) {
  m_flushTimer->setSingleShot(true);
  m_flushTimer->setInterval(kFlushIntervalMs);
  connect(m_flushTimer, &QTimer::timeout, this, &EventChannel::flush);
  connect(m_server, &QLocalServer::newConnection, this, &EventChannel::onNewConnection);
}

EventChannel::~EventChannel() { close(); }

bool EventChannel::listen(const QString& socketPath) {
  QLocalServer::removeServer(socketPath);
  m_server->setSocketOptions(QLocalServer::UserAccessOption);
  if (!m_server->listen(socketPath)) {
    m_error = m_server->errorString();
    return false;
  }
  m_path = m_server->fullServerName();
  return true;
}

QString EventChannel::spec() const { return QStringLiteral("unix:") + m_path; }

void EventChannel::close() {
  m_server->close();
  // Connections stay allocated until the channel dies: close() can run inside a socket's own
  // signal, and a queued readFrom() may still name a connection. Aborted sockets read nothing.
  for (auto& c : m_connections) {
    c->socket->disconnect(this);
    c->socket->abort();
    c->finished = true;
  }
}

void EventChannel::onNewConnection() {
  while (QLocalSocket* socket = m_server->nextPendingConnection()) {
    auto c = std::make_unique<Connection>();
    c->channel = this;
    c->socket = socket;
    socket->setParent(this);
    Connection* raw = c.get();
    connect(socket, &QLocalSocket::readyRead, this, [this, raw] { readFrom(*raw); });
    connect(socket, &QLocalSocket::disconnected, this, [this, raw] {
      raw->disconnected = true;
      readFrom(*raw);  // the rest, bounded, over the next turns; then finishIfDrained
    });
    m_connections.push_back(std::move(c));
    readFrom(*raw);
  }
}

void EventChannel::readFrom(Connection& c) {
  c.readScheduled = false;
  if (c.finished) return;
  // Bounded work per wake-up: a rank that floods the socket must not hold the event loop (and so
  // the window) for the time it takes to parse megabytes. The rest is read on the next turn.
  const QByteArray bytes = c.socket->read(kMaxReadBytes);
  if (!bytes.isEmpty()) {
    m_largestRead = std::max<qint64>(m_largestRead, bytes.size());
    if (c.rank >= 0) m_lastHeard[c.rank].start();
    c.reader.feed(std::string_view(bytes.constData(), size_t(bytes.size())));
    scheduleFlush();
  }
  if (c.socket->bytesAvailable() > 0) {
    if (!c.readScheduled) {
      c.readScheduled = true;
      Connection* raw = &c;
      QTimer::singleShot(0, c.socket, [this, raw] { readFrom(*raw); });
    }
    return;
  }
  finishIfDrained(c);
}

void EventChannel::finishIfDrained(Connection& c) {
  if (!c.disconnected || c.finished || c.socket->bytesAvailable() > 0) return;
  c.finished = true;
  c.reader.finish();  // a rank killed mid-line leaves a truncated line: report it
  flush();
  emit connectionClosed();
}

void EventChannel::scheduleFlush() {
  if (!m_pending.empty() && !m_flushTimer->isActive()) m_flushTimer->start();
}

void EventChannel::flush() {
  for (auto& c : m_connections)
    if (!c->finished && c->socket->bytesAvailable() > 0 && !c->readScheduled) {
      // One bounded read, like any other; readFrom schedules the rest.
      const QByteArray bytes = c->socket->read(kMaxReadBytes);
      m_largestRead = std::max<qint64>(m_largestRead, bytes.size());
      c->reader.feed(std::string_view(bytes.constData(), size_t(bytes.size())));
      if (c->socket->bytesAvailable() > 0) {
        c->readScheduled = true;
        Connection* raw = c.get();
        QTimer::singleShot(0, c->socket, [this, raw] { readFrom(*raw); });
      }
    }
  m_flushTimer->stop();
  if (m_pending.empty()) return;
  EventBatch batch;
  batch.swap(m_pending);
  emit eventsArrived(batch);
}

int EventChannel::openConnections() const {
  int n = 0;
  for (const auto& c : m_connections)
    if (!c->finished && (c->socket->state() == QLocalSocket::ConnectedState || c->disconnected)) ++n;
  return n;
}

qint64 EventChannel::silenceMs(int rank) const {
  auto it = m_lastHeard.find(rank);
  return it == m_lastHeard.end() ? -1 : it->second.elapsed();
}

}  // namespace tunebench::ui
