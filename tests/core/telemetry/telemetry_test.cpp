// Telemetry without a GPU: NVML absent is handled, /proc sampling sees real CPU work.
#include <gtest/gtest.h>

#include <ctime>

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
  // The sampler's share is compared with the share this thread really got: on a loaded machine
  // 150 ms of CPU time can take much longer than 150 ms, and a fixed threshold would then fail.
  const auto thread_cpu_s = [] {
    timespec ts{};
    ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return double(ts.tv_sec) + double(ts.tv_nsec) / 1e9;
  };
  tt::ProcessSampler sampler;
  sampler.sample();
  const auto wall0 = std::chrono::steady_clock::now();
  const double cpu0 = thread_cpu_s();
  volatile double x = 0;
  while (thread_cpu_s() - cpu0 < 0.3 && std::chrono::steady_clock::now() - wall0 < std::chrono::seconds(20))
    x = x + std::sqrt(x + 1.0);
  const auto s = sampler.sample();
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
  const double got_pct = 100.0 * (thread_cpu_s() - cpu0) / wall;
  ASSERT_TRUE(s.cpu_pct.has_value());
  // /proc counts in 10 ms ticks: 300 ms of work is read within a few ticks.
  EXPECT_GT(*s.cpu_pct, 0.6 * got_pct) << "this thread got " << got_pct << " % of a core";
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
  auto count = [&] {
    std::lock_guard<std::mutex> lock(m);
    return got.size();
  };
  const auto start = std::chrono::steady_clock::now();
  double seconds = 0;
  {
    tt::SamplerThread thread(-1, 50.0, [&](tunebench::protocol::GpuSample s) {
      std::lock_guard<std::mutex> lock(m);
      got.push_back(std::move(s));
    });
    // Waits for samples (a hang guard of 60 s, no timing): a loaded machine only makes them later.
    while (count() < 3 && std::chrono::steady_clock::now() - start < std::chrono::seconds(60))
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }  // destructor stops and joins
  seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::lock_guard<std::mutex> lock(m);
  ASSERT_GE(got.size(), 3u);
  // The rate is an upper bound whatever the load: 50 per second of wall time (twice, for the
  // first sample at once and timer slack), never one per loop turn.
  EXPECT_LE(double(got.size()), 2.0 * (1.0 + 50.0 * seconds)) << got.size() << " samples in " << seconds << " s";
  for (const auto& s : got) EXPECT_TRUE(s.rss_bytes.has_value());
}
