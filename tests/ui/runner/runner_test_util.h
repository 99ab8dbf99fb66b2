// Helpers for runner tests: a fake-worker request and a process-liveness check.
#pragma once

#include <csignal>
#include <cerrno>
#include <sys/types.h>

#include <QString>

#include "ui/runner/runner_types.h"

namespace tunebench::ui::test {

inline TrialRequest fake_request(const QString& id, int world, int steps) {
  TrialRequest r;
  r.id = id;
  r.config.device = config::Device::Cpu;
  r.config.strategy = world > 1 ? config::Strategy::Ddp : config::Strategy::Single;
  r.config.world_size = world;
  r.config.steps = steps;
  r.config.warmup = 1;
  r.worker_program = QStringLiteral(TUNEBENCH_FAKE_WORKER);
  return r;
}

// True while a process with this pid exists and is not a zombie we still have to reap. The
// runner reaps its children, so a gone pid answers ESRCH.
inline bool process_alive(qint64 pid) { return pid > 0 && (::kill(pid_t(pid), 0) == 0 || errno != ESRCH); }

// Fault injection for the fake worker travels through the environment the runner passes on.
struct FakeMode {
  explicit FakeMode(const char* mode, int rank = 0, int atStep = 2) {
    qputenv("TUNEBENCH_FAKE_MODE", mode);
    qputenv("TUNEBENCH_FAKE_RANK", QByteArray::number(rank));
    qputenv("TUNEBENCH_FAKE_AT_STEP", QByteArray::number(atStep));
  }
  ~FakeMode() {
    qunsetenv("TUNEBENCH_FAKE_MODE");
    qunsetenv("TUNEBENCH_FAKE_RANK");
    qunsetenv("TUNEBENCH_FAKE_AT_STEP");
  }
};

}  // namespace tunebench::ui::test
