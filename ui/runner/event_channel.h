// The event channel of one trial: a local socket every rank connects to, one stream per rank
// (ssh forwards remote ranks' connections to it), and for SLURM a TCP listener with a token.
//
// Each connection gets its own EventReader (streams never share a partial line). Parsed events
// are not emitted one by one: they are collected and delivered as one EventBatch every
// kFlushIntervalMs, so an 8-rank run costs the views ~20 updates a second, not thousands.
// Lines that are not events become log lines, never errors.
//
// Every read from a socket goes through one place and takes at most kMaxReadBytes; the rest waits
// for the next turn of the event loop, also when a rank disconnects with megabytes still
// buffered and when flush() is called, so no flood can hold the GUI thread. A connection counts
// as open until its last byte has been parsed.
#pragma once

#include <memory>
#include <vector>

#include <QObject>
#include <QString>

#include "ui/runner/runner_types.h"

class QLocalServer;
class QLocalSocket;
class QTcpServer;
class QTimer;

namespace tunebench::ui {

class EventChannel : public QObject {
  Q_OBJECT
 public:
  static constexpr int kFlushIntervalMs = 50;
  static constexpr qint64 kMaxReadBytes = 256 * 1024;  // parsed per event-loop turn and connection

  explicit EventChannel(QObject* parent = nullptr);
  ~EventChannel() override;

  // Listens on `socketPath` (removing a stale file first); false with errorString() on failure.
  bool listen(const QString& socketPath);
  QString errorString() const { return m_error; }
  QString spec() const;  // "unix:PATH", as passed to --events
  // Also listens on TCP (all addresses; port 0: any) for ranks on other hosts (SLURM). A TCP
  // connection's first line must be the token line of `token` (core/protocol/event_token.h);
  // others are dropped and logged. False with errorString() on failure.
  bool listenTcp(const QString& token, quint16 port = 0);
  quint16 tcpPort() const;
  int droppedConnections() const { return m_dropped; }
  void close();

  // Reads at most kMaxReadBytes more per connection and emits the pending batch now.
  void flush();
  // Connections still connected or still holding unread bytes.
  int openConnections() const;
  // The most bytes parsed from one connection at once (tests and the benchmark check the bound).
  qint64 largestRead() const { return m_largestRead; }

 signals:
  void eventsArrived(const tunebench::ui::EventBatch& batch);
  void logLine(const tunebench::ui::LogLine& line);
  void connectionClosed();

 private:
  struct Connection;
  void onNewConnection();
  void onNewTcpConnection();
  bool checkToken(Connection& c);  // false: not yet (or dropped)
  // Parses at most kMaxReadBytes of `c`; schedules itself again while bytes remain.
  void readFrom(Connection& c);
  void finishIfDrained(Connection& c);
  void scheduleFlush();

  QLocalServer* m_server = nullptr;
  QTcpServer* m_tcpServer = nullptr;
  QString m_token;
  int m_dropped = 0;
  QTimer* m_flushTimer = nullptr;
  std::vector<std::unique_ptr<Connection>> m_connections;
  EventBatch m_pending;
  QString m_path;
  QString m_error;
  qint64 m_largestRead = 0;
};

}  // namespace tunebench::ui
