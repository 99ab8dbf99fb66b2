// The energy counter and NVML GPM through a stand-in NVML (fake_nvml.cpp): values where the GPU
// gives them, and otherwise the reason, once, as a warning the trial keeps.
#include <gtest/gtest.h>

#include <stdlib.h>

#include <chrono>
#include <mutex>
#include <thread>
#include <vector>

#include "core/telemetry/nvml.h"
#include "core/telemetry/sampler_thread.h"

namespace tt = tunebench::telemetry;
namespace tp = tunebench::protocol;

namespace {
struct Mode {
  explicit Mode(const char* m) { ::setenv("FAKE_NVML_MODE", m, 1); }
  ~Mode() { ::unsetenv("FAKE_NVML_MODE"); }
};
}  // namespace

TEST(NvmlCounters, AHopperGpuGivesEnergyAndActivityFromItsSecondSampleOn) {
  Mode mode("gpm-ok");
  tt::Nvml nvml(FAKE_NVML);
  ASSERT_TRUE(nvml.available()) << nvml.error();
  const auto first = nvml.sample(0);
  ASSERT_TRUE(first.counters.energy_mj);
  EXPECT_FALSE(first.counters.sm_activity_pct);  // a rate needs two samples
  const auto second = nvml.sample(0);
  EXPECT_EQ(*second.counters.energy_mj - *first.counters.energy_mj, 1000);
  EXPECT_EQ(second.counters.sm_activity_pct, 55.0);
  EXPECT_EQ(second.counters.sm_occupancy_pct, 33.0);
  EXPECT_EQ(second.counters.tensor_activity_pct, 22.0);
  EXPECT_EQ(nvml.sample(0).counters.tensor_activity_pct, 22.0);  // the samples are paired in turn
  EXPECT_EQ(nvml.gpm_problem(0), "");
  EXPECT_EQ(nvml.energy_problem(0), "");
}

TEST(NvmlCounters, EachReasonForNoActivityIsNamed) {
  const std::pair<const char*, const char*> cases[] = {
      {"gpm-unsupported", "this GPU has no GPM counters (NVML GPM needs a Hopper or newer GPU)"},
      {"gpm-no-permission", "no permission to read the GPU's performance counters"},
      {"gpm-in-use", "held by another profiler (DCGM's profiling module, Nsight) (NVML: In use by another client)"},
  };
  for (const auto& [m, words] : cases) {
    SCOPED_TRACE(m);
    Mode mode(m);
    tt::Nvml nvml(FAKE_NVML);
    for (int i = 0; i < 3; ++i) {
      const auto s = nvml.sample(0);
      EXPECT_FALSE(s.counters.sm_activity_pct || s.counters.tensor_activity_pct);
      EXPECT_TRUE(s.counters.energy_mj);  // energy does not depend on GPM
    }
    EXPECT_NE(nvml.gpm_problem(0).find(words), std::string::npos) << nvml.gpm_problem(0);
  }
  tt::Nvml old(FAKE_NVML_NO_GPM);
  old.sample(0);
  EXPECT_NE(old.gpm_problem(0).find("this driver's NVML has no GPM"), std::string::npos) << old.gpm_problem(0);
}

TEST(NvmlCounters, AMissingEnergyCounterIsNamed) {
  Mode mode("no-energy");
  tt::Nvml nvml(FAKE_NVML);
  EXPECT_FALSE(nvml.sample(0).counters.energy_mj);
  EXPECT_NE(nvml.energy_problem(0).find("the energy counter is not read: Not Supported"), std::string::npos)
      << nvml.energy_problem(0);
}

TEST(NvmlCounters, WithoutNvmlTheReasonIsNvmlItself) {
  tt::Nvml nvml("libnvidia-ml-does-not-exist.so.1");
  EXPECT_NE(nvml.gpm_problem(0).find("NVML not available"), std::string::npos);
  EXPECT_FALSE(nvml.sample(0).counters.any());
}

TEST(NvmlCounters, ReturnCodesMapToReasons) {
  EXPECT_NE(tt::gpm_unavailable_reason(3, "Not Supported").find("does not support GPM"), std::string::npos);
  EXPECT_NE(tt::gpm_unavailable_reason(4, "x").find("no permission"), std::string::npos);
  EXPECT_NE(tt::gpm_unavailable_reason(23, "x").find("another profiler"), std::string::npos);
  EXPECT_NE(tt::gpm_unavailable_reason(999, "Unknown Error").find("GPM failed (NVML: Unknown Error)"), std::string::npos);
}

TEST(NvmlCounters, TheSamplerThreadSaysOnceWhatItsSamplesLack) {
  Mode mode("gpm-in-use");
  std::mutex m;
  std::vector<tp::Warning> warnings;
  int samples = 0;
  {
    tt::SamplerThread sampler(
        0, 200.0,
        [&](tp::GpuSample s) {
          std::lock_guard<std::mutex> lock(m);
          ++samples;
          EXPECT_TRUE(s.counters.energy_mj);
        },
        [&](tp::Warning w) {
          std::lock_guard<std::mutex> lock(m);
          warnings.push_back(std::move(w));
        },
        FAKE_NVML);
    for (int i = 0; i < 400; ++i) {
      {
        std::lock_guard<std::mutex> lock(m);
        if (samples >= 5) break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }
  ASSERT_GE(samples, 5);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_EQ(warnings[0].kind, "gpm");
  EXPECT_NE(warnings[0].message.find("SM and tensor-core activity unavailable: the performance counters are held by another profiler"),
            std::string::npos)
      << warnings[0].message;
}
