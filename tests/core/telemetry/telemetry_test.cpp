// Telemetry without a GPU: NVML absent is handled, /proc sampling sees real CPU work.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <mutex>
#include <vector>

#include "core/telemetry/nvml.h"
#include "core/telemetry/process_sampler.h"
#include "core/telemetry/sampler_thread.h"

namespace tt = tunebench::telemetry;

TEST(Nvml, MissingLibraryIsUnavailableNotFatal) {
  tt::Nvml nvml("libnvidia-ml-does-not-exist.so.1");
  EXPECT_FALSE(nvml.available());
  EXPECT_FALSE(nvml.error().empty());
  EXPECT_TRUE(nvml.devices().empty());
  EXPECT_TRUE(nvml.driver_version().empty());
  const auto s = nvml.sample(0);
  EXPECT_FALSE(s.util_pct.has_value());
}

TEST(ProcessSampler, SeesCpuWorkAndResidentMemory) {
  tt::ProcessSampler sampler;
  sampler.sample();
  // Busy for ~150 ms of CPU time.
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(150);
  volatile double x = 0;
  while (std::chrono::steady_clock::now() < until) x = x + std::sqrt(x + 1.0);
  const auto s = sampler.sample();
  ASSERT_TRUE(s.cpu_pct.has_value());
  EXPECT_GT(*s.cpu_pct, 20.0);   // one busy thread, ticks are 10 ms
  EXPECT_LT(*s.cpu_pct, 400.0);
  ASSERT_TRUE(s.rss_bytes.has_value());
  EXPECT_GT(*s.rss_bytes, 1 << 20);
  EXPECT_EQ(s.index, -1);
}

TEST(ProcessSampler, VanishedProcessGivesEmptyFields) {
  tt::ProcessSampler sampler(999999999);
  const auto s = sampler.sample();
  EXPECT_FALSE(s.cpu_pct.has_value());
  EXPECT_FALSE(s.rss_bytes.has_value());
}

TEST(SamplerThread, SamplesAtTheRequestedRateAndStops) {
  std::mutex m;
  std::vector<tunebench::protocol::GpuSample> got;
  {
    tt::SamplerThread thread(-1, 50.0, [&](tunebench::protocol::GpuSample s) {
      std::lock_guard<std::mutex> lock(m);
      got.push_back(std::move(s));
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
  }  // destructor stops and joins
  std::lock_guard<std::mutex> lock(m);
  EXPECT_GE(got.size(), 3u);  // ~15 expected; bound loose for a loaded CI machine
  EXPECT_LE(got.size(), 40u);
  for (const auto& s : got) EXPECT_TRUE(s.rss_bytes.has_value());
}
