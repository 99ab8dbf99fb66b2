// Helpers for window tests: a window that uses the fake worker and an injected CPU-only machine.
#pragma once

#include <memory>

#include <gtest/gtest.h>

#include <QFile>
#include <QFileInfo>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

#include "core/config/trial_config.h"
#include "tests/ui/wait_for.h"
#include "ui/runner/background_jobs.h"
#include "ui/windows/main_window.h"
#include "ui/windows/trial_form.h"

namespace tunebench::ui::test {

inline DeviceInventory cpu_machine() {
  DeviceInventory d;
  d.cpu_name = QStringLiteral("Test CPU");
  d.cpu_cores = 4;
  d.nvml_error = QStringLiteral("no NVML in tests");
  return d;
}

inline DeviceInventory one_gpu_machine() {
  DeviceInventory d = cpu_machine();
  d.gpus.push_back({0, QStringLiteral("NVIDIA H200"), qint64(143771) << 20});
  return d;
}

// The forum example's machine: two GPUs, so its DDP x2 follow-ups pass the device check.
inline DeviceInventory two_gpu_machine() {
  DeviceInventory d = one_gpu_machine();
  d.gpus.push_back({1, QStringLiteral("NVIDIA H200"), qint64(143771) << 20});
  return d;
}

inline std::unique_ptr<MainWindow> make_window(const DeviceInventory& devices = cpu_machine()) {
  MainWindow::Options o;
  o.workerProgram = QStringLiteral(TUNEBENCH_FAKE_WORKER);
  o.useSettings = false;
  o.detectDevices = false;
  o.devices = devices;
  auto w = std::make_unique<MainWindow>(o);
  w->resize(1400, 900);
  w->show();
  // Shortcuts (Ctrl+R, Ctrl+.) only reach an active window.
  w->activateWindow();
  EXPECT_TRUE(QTest::qWaitForWindowActive(w.get()));
  return w;
}

// The tiny CPU preset, a few steps: a trial the fake worker runs in moments.
inline config::TrialConfig quick_cpu_trial(const char* name, int steps = 6) {
  config::TrialConfig c = *config::trial_preset("cpu-tiny");
  c.steps = steps;
  c.warmup = 1;
  c.name = name;
  return c;
}

// Runs one trial through the window (Run) and waits for its end.
inline void run_and_wait(MainWindow& w, const config::TrialConfig& c, int timeoutMs = 30000) {
  QSignalSpy finished(&w, &MainWindow::trialFinished);
  w.form()->setConfig(c);
  ASSERT_TRUE(w.runTrial());
  TB_WAIT_FOR(finished.size() == 1, timeoutMs);
}

// Waits until the window's background jobs (session reads and writes) are done.
inline void wait_jobs(MainWindow& w) { TB_WAIT_FOR(w.jobs()->waitForIdle(kTimeoutMs), kTimeoutMs); }

// A writable copy of a shipped file (a session in sessions/ or tests/data) in `dir`.
inline QString copy_of(const QTemporaryDir& dir, const QString& shipped) {
  const QString path = dir.filePath(QFileInfo(shipped).fileName());
  QFile::copy(shipped, path);
  QFile::setPermissions(path, QFile::permissions(path) | QFileDevice::WriteOwner);
  return path;
}

}  // namespace tunebench::ui::test
