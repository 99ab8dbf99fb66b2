// The Devices line of the trial form (DeviceInventory::summary): what this machine has, in words.
#include <gtest/gtest.h>

#include "ui/runner/device_inventory.h"

using tunebench::ui::DeviceInventory;

TEST(DeviceInventory, ACpuMachineIsNamedWithItsCoresCountedRight) {
  DeviceInventory d;
  d.cpu_name = QStringLiteral("AMD EPYC");
  d.cpu_cores = 2;
  EXPECT_EQ(d.summary(), QStringLiteral("CPU: AMD EPYC (2 cores), no GPU"));
  d.cpu_cores = 1;
  EXPECT_EQ(d.summary(), QStringLiteral("CPU: AMD EPYC (1 core), no GPU"));
  d.cpu_name.clear();  // /proc/cpuinfo without a model name: no empty "CPU:  (" in the line
  EXPECT_EQ(d.summary(), QStringLiteral("CPU (1 core), no GPU"));
}
