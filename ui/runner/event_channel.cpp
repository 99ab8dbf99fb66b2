#include "ui/runner/event_channel.h"

#include <algorithm>

#include <QLocalServer>
#include <QLocalSocket>
#include <QTcpServer>
#include <QTcpSocket>
#include <QTimer>

#include "core/protocol/event_reader.h"
#include "core/protocol/event_token.h"

namespace tunebench::ui {

// One rank's stream. The rank is learned from the first event's header (a connection carries
// exactly one rank by contract).
struct EventChannel::Connection final : protocol::ReadListener {
  EventChannel* channel = nullptr;
  QIODevice* socket = nullptr;  // a QLocalSocket, or a QTcpSocket that must present the token first
  bool needsToken = false;
  protocol::EventReader reader{*this};
  int rank = -1;
  bool disconnected = false;  // the rank closed; bytes may still be buffered
  bool finished = false;      // every byte parsed, the reader finished
  bool readScheduled = false;

  void on_event(protocol::Event&& event) override {
    rank = event.header.rank;
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

bool EventChannel::listenTcp(const QString& token, quint16 port) {
  if (token.isEmpty()) {
    m_error = QStringLiteral("a TCP event channel needs a token");
    return false;
  }
  m_token = token;
  if (!m_tcpServer) {
    m_tcpServer = new QTcpServer(this);
    connect(m_tcpServer, &QTcpServer::newConnection, this, &EventChannel::onNewTcpConnection);
  }
  if (!m_tcpServer->listen(QHostAddress::Any, port)) {
    m_error = m_tcpServer->errorString();
    return false;
  }
  return true;
}

quint16 EventChannel::tcpPort() const { return m_tcpServer ? m_tcpServer->serverPort() : 0; }

void EventChannel::onNewTcpConnection() {
  while (QTcpSocket* socket = m_tcpServer->nextPendingConnection()) {
    auto c = std::make_unique<Connection>();
    c->channel = this;
    c->socket = socket;
    c->needsToken = true;
    socket->setParent(this);
    Connection* raw = c.get();
    connect(socket, &QTcpSocket::readyRead, this, [this, raw] { readFrom(*raw); });
    connect(socket, &QTcpSocket::disconnected, this, [this, raw] {
      raw->disconnected = true;
      readFrom(*raw);
    });
    m_connections.push_back(std::move(c));
    readFrom(*raw);
  }
}

// The first line of a TCP connection must be the trial's token line; anything else ends the
// connection before a byte of it is parsed as an event (docs/LAUNCH.md).
bool EventChannel::checkToken(Connection& c) {
  auto* tcp = static_cast<QTcpSocket*>(c.socket);
  const auto drop = [&](const char* why) {
    bool v4 = false;  // "::ffff:10.0.0.5" (a dual-stack listener) is shown as 10.0.0.5
    const quint32 ip4 = tcp->peerAddress().toIPv4Address(&v4);
    const QString peer = v4 ? QHostAddress(ip4).toString() : tcp->peerAddress().toString();
    ++m_dropped;
    emit logLine({-1, LogLine::Source::Runner,
                  QStringLiteral("dropped an event connection from %1:%2: %3")
                      .arg(peer)
                      .arg(tcp->peerPort())
                      .arg(QLatin1String(why))});
    tcp->disconnect(this);
    tcp->abort();
    c.finished = true;
    return false;
  };
  if (!tcp->canReadLine()) {
    if (tcp->bytesAvailable() > qint64(protocol::kMaxTokenLineBytes)) return drop("no token in its first line");
    if (c.disconnected) return drop("closed before presenting a token");
    return false;
  }
  QByteArray line = tcp->readLine(qint64(protocol::kMaxTokenLineBytes) + 2);
  if (line.endsWith('\n')) line.chop(1);
  switch (protocol::check_event_token_line(std::string_view(line.constData(), size_t(line.size())),
                                           m_token.toStdString())) {
    case protocol::TokenCheck::Ok: c.needsToken = false; return true;
    case protocol::TokenCheck::Wrong: return drop("wrong token");
    case protocol::TokenCheck::Missing: return drop("no token in its first line");
  }
  return false;
}

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
  if (m_tcpServer) m_tcpServer->close();
  // Connections stay allocated until the channel dies: close() can run inside a socket's own
  // signal, and a queued readFrom() may still name a connection. Aborted sockets read nothing.
  for (auto& c : m_connections) {
    c->socket->disconnect(this);
    if (auto* local = qobject_cast<QLocalSocket*>(c->socket)) local->abort();
    else if (auto* tcp = qobject_cast<QTcpSocket*>(c->socket)) tcp->abort();
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
  if (c.needsToken && !checkToken(c)) return;
  // Bounded work per wake-up: a rank that floods the socket must not hold the event loop (and so
  // the window) for the time it takes to parse megabytes. The rest is read on the next turn.
  const QByteArray bytes = c.socket->read(kMaxReadBytes);
  if (!bytes.isEmpty()) {
    m_largestRead = std::max<qint64>(m_largestRead, bytes.size());
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
    if (!c->finished && !c->needsToken && c->socket->bytesAvailable() > 0 && !c->readScheduled) {
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
    if (!c->finished && (c->disconnected || c->socket->isOpen())) ++n;
  return n;
}

}  // namespace tunebench::ui
