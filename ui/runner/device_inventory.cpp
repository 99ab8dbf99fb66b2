#include "ui/runner/device_inventory.h"

#include <QFile>
#include <QThread>

#include "core/telemetry/nvml.h"

namespace tunebench::ui {

QString DeviceInventory::summary() const {
  if (gpus.isEmpty()) {
    const QString cores = cpu_cores == 1 ? QStringLiteral("1 core") : QStringLiteral("%1 cores").arg(cpu_cores);
    return cpu_name.isEmpty() ? QStringLiteral("CPU (%1), no GPU").arg(cores)
                              : QStringLiteral("CPU: %1 (%2), no GPU").arg(cpu_name, cores);
  }
  QStringList parts;
  for (const GpuDevice& g : gpus)
    parts << QStringLiteral("GPU %1: %2 (%3 GiB)")
                 .arg(g.index)
                 .arg(g.name)
                 .arg(double(g.memory_bytes) / (1 << 30), 0, 'f', 1);
  return parts.join(QStringLiteral("; "));
}

DeviceInventory detect_devices() {
  DeviceInventory inv;
  telemetry::Nvml nvml;
  if (nvml.available()) {
    for (const auto& d : nvml.devices())
      inv.gpus.push_back({d.index, QString::fromStdString(d.name), d.memory_total_bytes});
  } else {
    inv.nvml_error = QString::fromStdString(nvml.error());
  }
  inv.cpu_cores = QThread::idealThreadCount();
  QFile cpuinfo(QStringLiteral("/proc/cpuinfo"));
  // readAll, not atEnd()/readLine(): /proc files report size 0, so atEnd() is true at once.
  if (cpuinfo.open(QIODevice::ReadOnly)) {
    for (const QByteArray& line : cpuinfo.readAll().split('\n'))
      if (line.startsWith("model name")) {
        inv.cpu_name = QString::fromUtf8(line.mid(line.indexOf(':') + 1)).trimmed();
        break;
      }
  }
  if (inv.cpu_name.isEmpty()) inv.cpu_name = QStringLiteral("unknown CPU");
  return inv;
}

std::vector<config::Problem> device_problems(const config::TrialConfig& c, const DeviceInventory& devices) {
  std::vector<config::Problem> out;
  const bool cuda = c.device == config::Device::Cuda || (c.device == config::Device::Auto && devices.hasGpu());
  if (c.device == config::Device::Cuda && !devices.hasGpu()) {
    out.push_back({"device", "no GPU detected on this machine (" + devices.nvml_error.toStdString() + "); choose cpu"});
  } else if (c.world_size > devices.maxWorldSize(cuda)) {
    out.push_back({"world_size",
                   cuda ? "only " + std::to_string(devices.gpus.size()) + " GPU(s) detected: at most that many ranks"
                        : "at most " + std::to_string(DeviceInventory::kMaxCpuRanks) + " ranks on the CPU (Gloo)"});
  }
  return out;
}

}  // namespace tunebench::ui
