// GPU busy and the classified GPU-idle gaps of one step (core/metrics/gpu_activity.h), on
// hand-made activity records whose answers can be counted by hand.
#include <gtest/gtest.h>

#include "core/metrics/exposed_comm.h"
#include "core/metrics/gpu_activity.h"

namespace tunebench::metrics {
namespace {

using protocol::Interval;
using protocol::Lane;
using protocol::Phase;

DeviceActivity kernel(int64_t start, int64_t end, Phase phase, int64_t launch) {
  return {start, end, Lane::Compute, phase, launch};
}

std::vector<const Interval*> of_phase(const GpuActivitySummary& s, Phase p) {
  std::vector<const Interval*> out;
  for (const auto& in : s.intervals)
    if (in.phase == p) out.push_back(&in);
  return out;
}

int64_t total(const GpuActivitySummary& s, Phase p) {
  int64_t t = 0;
  for (const auto* in : of_phase(s, p)) t += in->duration_us();
  return t;
}

TEST(GpuActivity, BusyIsTheUnionOfEveryActivityInTheWindow) {
  StepActivity st;
  st.start_us = 0;
  st.end_us = 1000;
  st.activities = {kernel(100, 300, Phase::Forward, 90), kernel(200, 400, Phase::Forward, 95),  // overlap: 300
                   {350, 500, Lane::Comm, Phase::AllReduce, 340},                                 // +100
                   {900, 1200, Lane::Host, Phase::HostToDevice, 890},                             // clipped: +100
                   kernel(-50, 20, Phase::Other, -60)};                                           // clipped: +20
  const auto s = summarise_gpu_activity(st);
  EXPECT_EQ(s.busy_us, 300 + 100 + 100 + 20);
  EXPECT_EQ(s.idle_us, 1000 - s.busy_us);
}

TEST(GpuActivity, ComputeLaneHoldsOnlyTheTimeComputeKernelsRanAndTheGapsTheRest) {
  StepActivity st;
  st.start_us = 0;
  st.end_us = 1000;
  // A forward of three kernels with gaps, then a backward kernel: the old "first kernel to last
  // kernel" interval would call 100..700 compute.
  st.activities = {kernel(100, 150, Phase::Forward, 90), kernel(300, 350, Phase::Forward, 250),
                   kernel(360, 400, Phase::Forward, 200), kernel(600, 700, Phase::Backward, 590)};
  const auto s = summarise_gpu_activity(st);
  EXPECT_EQ(total(s, Phase::Forward), 50 + 50 + 40);
  EXPECT_EQ(total(s, Phase::Backward), 100);
  int64_t idle = 0;
  for (Phase p : {Phase::HostWait, Phase::LaunchGap, Phase::SyncWait, Phase::DependencyWait}) idle += total(s, p);
  EXPECT_EQ(idle, 1000 - 240);
  EXPECT_EQ(s.busy_us, 240);
  // The compute lane covers the window exactly once: no overlaps, no holes.
  int64_t cursor = 0;
  for (const auto& in : s.intervals) {
    EXPECT_EQ(in.start_us, cursor);
    cursor = in.end_us;
  }
  EXPECT_EQ(cursor, 1000);
}

TEST(GpuActivity, GapsAreClassifiedByWhatTheHostDid) {
  StepActivity st;
  st.start_us = 0;
  st.end_us = 1000;
  st.activities = {
      kernel(0, 100, Phase::Forward, -1),
      kernel(105, 200, Phase::Forward, 50),    // launched at 50, before the GPU ran dry at 100: launch gap
      kernel(400, 500, Phase::Forward, 380),   // launched at 380, after 200: host wait
      kernel(700, 800, Phase::Backward, 690),  // the host was inside a sync from 450 to 690
  };
  st.syncs = {{450, 690, 1, ".item() (aten::_local_scalar_dense)"}};
  st.host_ops = {{190, 390, 1, "aten::batch_norm"},  // outermost op during the host wait
                 {200, 300, 1, "aten::empty"},       // nested: not named
                 {250, 395, 2, "aten::add"}};        // another thread, less overlap
  const auto s = summarise_gpu_activity(st);
  const auto launch = of_phase(s, Phase::LaunchGap);
  ASSERT_EQ(launch.size(), 1u);
  EXPECT_EQ(launch[0]->start_us, 100);
  EXPECT_EQ(launch[0]->end_us, 105);
  const auto host = of_phase(s, Phase::HostWait);
  ASSERT_EQ(host.size(), 2u);
  EXPECT_EQ(host[0]->start_us, 200);
  EXPECT_EQ(host[0]->end_us, 400);
  EXPECT_EQ(host[0]->label, "aten::batch_norm");
  const auto sync = of_phase(s, Phase::SyncWait);
  ASSERT_EQ(sync.size(), 1u);  // 500..700: the sync was in progress when the GPU ran dry
  EXPECT_EQ(host[1]->start_us, 800);  // the tail is the host's again
  EXPECT_EQ(host[1]->end_us, 1000);
  EXPECT_EQ(sync[0]->start_us, 500);
  EXPECT_EQ(sync[0]->end_us, 700);
  EXPECT_EQ(sync[0]->label, ".item() (aten::_local_scalar_dense)");
}

TEST(GpuActivity, TailAfterTheLastKernelIsASyncWhenTheHostWaitsThereElseAHostWait) {
  StepActivity st;
  st.start_us = 0;
  st.end_us = 100;
  st.activities = {kernel(0, 60, Phase::Optimizer, -1)};
  auto with_sync = st;
  with_sync.syncs = {{40, 99, 1, "cudaDeviceSynchronize (the step's own synchronisation)"}};
  const auto a = summarise_gpu_activity(with_sync);
  ASSERT_EQ(of_phase(a, Phase::SyncWait).size(), 1u);
  EXPECT_EQ(total(a, Phase::SyncWait), 40);
  const auto b = summarise_gpu_activity(st);
  EXPECT_EQ(total(b, Phase::HostWait), 40);
  EXPECT_EQ(of_phase(b, Phase::HostWait)[0]->label, "");  // no op: framework code
}

TEST(GpuActivity, GapsBetweenQueuedKernelsAreLaunchGapsWhileTheHostSitsInASync) {
  // A GPU-bound step: the host launched everything by 50 and waits in the step's own sync from 60
  // on while the device works through its queue. The gaps between those queued kernels are the
  // device's launch latency; only the tail after the last kernel is the synchronisation's.
  StepActivity st;
  st.start_us = 0;
  st.end_us = 400;
  st.activities = {kernel(0, 100, Phase::Forward, 5), kernel(102, 200, Phase::Backward, 20),
                   kernel(203, 350, Phase::Optimizer, 50)};
  st.syncs = {{60, 399, 1, "cudaDeviceSynchronize (the step's own synchronisation)"}};
  const auto s = summarise_gpu_activity(st);
  EXPECT_EQ(total(s, Phase::LaunchGap), 2 + 3);
  EXPECT_EQ(total(s, Phase::SyncWait), 50);  // 350..400: nothing left to run, the host still waiting
  EXPECT_EQ(total(s, Phase::HostWait), 0);
  // A kernel launched after the sync returned: the gap before it is the sync's.
  st.activities.push_back(kernel(500, 600, Phase::Forward, 450));
  st.end_us = 600;
  st.syncs = {{60, 440, 1, ".item() (aten::_local_scalar_dense)"}};
  const auto t = summarise_gpu_activity(st);
  ASSERT_EQ(of_phase(t, Phase::SyncWait).size(), 1u);
  EXPECT_EQ(of_phase(t, Phase::SyncWait)[0]->start_us, 350);
  EXPECT_EQ(of_phase(t, Phase::SyncWait)[0]->end_us, 500);
  EXPECT_EQ(of_phase(t, Phase::SyncWait)[0]->label, ".item() (aten::_local_scalar_dense)");
}

TEST(GpuActivity, AQueuedKernelHeldPastTheLaunchLatencyIsADependencyWaitNamedAfterItsStreamWait) {
  // Stream 7 ran a kernel to 100; the host queued a wait on stream 13's event (recorded at 30,
  // before the GPU ran dry) and the next kernel on stream 7 at 20. It started at 100 + 5,000:
  // something held it, not the launch.
  constexpr int64_t kHeld = 5'000;
  StepActivity st;
  st.start_us = 0;
  st.end_us = 100 + kHeld + 100;
  DeviceActivity first = kernel(0, 100, Phase::Forward, 5), held = kernel(100 + kHeld, st.end_us, Phase::Forward, 20);
  first.stream = held.stream = 7;
  st.activities = {first, held};
  st.stream_waits = {{15, 7, 13, 30, "aten::add_"}};
  const auto s = summarise_gpu_activity(st);
  EXPECT_EQ(total(s, Phase::DependencyWait), kHeld);
  EXPECT_EQ(total(s, Phase::LaunchGap), 0);
  ASSERT_EQ(of_phase(s, Phase::DependencyWait).size(), 1u);
  EXPECT_EQ(of_phase(s, Phase::DependencyWait)[0]->label,
            "cudaStreamWaitEvent: stream 7 waited for stream 13 (in aten::add_)");
  // The event recorded by the host 2 ms after the GPU ran dry: said so.
  st.stream_waits = {{15, 7, 13, 100 + 2'000, ""}};
  EXPECT_EQ(of_phase(summarise_gpu_activity(st), Phase::DependencyWait)[0]->label,
            "cudaStreamWaitEvent: stream 7 waited for stream 13, whose event the host recorded 2.0 ms after the GPU "
            "ran dry");
  // A wait on another stream does not name this one's gap; a collective the host ran in it does.
  st.stream_waits = {{15, 9, 13, 30, ""}};
  st.host_ops = {{50, 4'000, 1, "c10d::allreduce_"}};
  const auto c = summarise_gpu_activity(st);
  EXPECT_EQ(total(c, Phase::DependencyWait), kHeld);
  EXPECT_EQ(of_phase(c, Phase::DependencyWait)[0]->label, "c10d::allreduce_ (a collective)");
  // Nothing in the records: still a dependency wait, unnamed.
  st.host_ops.clear();
  EXPECT_EQ(of_phase(summarise_gpu_activity(st), Phase::DependencyWait)[0]->label, "");
}

TEST(GpuActivity, AKernelLaunchedWhileTheGpuSatIdleAndHeldAfterItsLaunchSplitsTheGap) {
  // The GPU ran dry at 100; the host spent until 200 in aten::mm, then launched the next kernel
  // (its launch call 200-210), which waited on another stream's event until 5,210: the host's part
  // is a host wait, the rest (from the launch call's return) a dependency wait.
  StepActivity st;
  st.start_us = 0;
  st.end_us = 5'300;
  DeviceActivity held = kernel(5'210, 5'300, Phase::Forward, 200);
  held.launch_end_us = 210;
  st.activities = {kernel(0, 100, Phase::Forward, 5), held};
  st.host_ops = {{100, 200, 1, "aten::mm"}};
  const auto s = summarise_gpu_activity(st);
  ASSERT_EQ(of_phase(s, Phase::HostWait).size(), 1u);
  EXPECT_EQ(of_phase(s, Phase::HostWait)[0]->start_us, 100);
  EXPECT_EQ(of_phase(s, Phase::HostWait)[0]->end_us, 210);
  EXPECT_EQ(of_phase(s, Phase::HostWait)[0]->label, "aten::mm");
  EXPECT_EQ(total(s, Phase::DependencyWait), 5'000);
  // Started right after a launch call that itself took 5 ms (a kernel's first launch loads its
  // module): the host's time, no dependency wait.
  held.launch_end_us = 5'200;
  st.activities = {kernel(0, 100, Phase::Forward, 5), held};
  const auto slow_launch = summarise_gpu_activity(st);
  EXPECT_EQ(total(slow_launch, Phase::DependencyWait), 0);
  EXPECT_EQ(total(slow_launch, Phase::HostWait), 5'110);
  // The launch call's end unknown: queued from its start.
  held.launch_end_us = -1;
  st.activities = {kernel(0, 100, Phase::Forward, 5), held};
  EXPECT_EQ(total(summarise_gpu_activity(st), Phase::DependencyWait), 5'010);
}

TEST(GpuActivity, QueuedGapsUpToTheLaunchLatencyAreLaunchGapsAndOneMicrosecondMoreIsNot) {
  StepActivity st;
  st.start_us = 0;
  const int64_t a_end = 100, b_start = a_end + kLaunchLatencyUs, b_end = b_start + 100;
  const int64_t c_start = b_end + kLaunchLatencyUs + 1;
  st.end_us = c_start + 100;
  st.activities = {kernel(0, a_end, Phase::Forward, 1), kernel(b_start, b_end, Phase::Forward, 2),
                   kernel(c_start, st.end_us, Phase::Forward, 3)};
  const auto s = summarise_gpu_activity(st);
  EXPECT_EQ(total(s, Phase::LaunchGap), kLaunchLatencyUs);
  EXPECT_EQ(total(s, Phase::DependencyWait), kLaunchLatencyUs + 1);
}

TEST(GpuActivity, WithoutLaunchTimesShortGapsAreLaunchGapsAndLongOnesHostWaits) {
  StepActivity st;
  st.start_us = 0;
  st.end_us = 300;
  st.activities = {kernel(0, 100, Phase::Forward, -1), kernel(100 + kShortGapUs, 150, Phase::Forward, -1),
                   kernel(250, 300, Phase::Forward, -1)};
  const auto s = summarise_gpu_activity(st);
  EXPECT_EQ(total(s, Phase::LaunchGap), kShortGapUs);
  EXPECT_EQ(total(s, Phase::HostWait), 100);
}

TEST(GpuActivity, CopiesGoToTheHostLaneAndCollectivesStayTheCallers) {
  StepActivity st;
  st.start_us = 0;
  st.end_us = 400;
  st.activities = {{0, 50, Lane::Host, Phase::HostToDevice, -1}, kernel(50, 200, Phase::Backward, 40),
                   {150, 300, Lane::Comm, Phase::AllReduce, 140}};
  const auto s = summarise_gpu_activity(st);
  EXPECT_EQ(s.busy_us, 300);
  EXPECT_EQ(total(s, Phase::HostToDevice), 50);
  EXPECT_EQ(of_phase(s, Phase::HostToDevice)[0]->lane, Lane::Host);
  EXPECT_TRUE(of_phase(s, Phase::AllReduce).empty());
  // Collective time not overlapped by compute kernels: 200..300, whatever the gap intervals say.
  std::vector<Interval> step = s.intervals;
  step.push_back({Lane::Comm, Phase::AllReduce, 150, 300, "", 0, 0.0});
  EXPECT_EQ(exposed_comm_us(step), 100);
  EXPECT_EQ(total(s, Phase::HostWait) + total(s, Phase::LaunchGap) + total(s, Phase::SyncWait), 100);  // 300..400
}

TEST(GpuActivity, OverlappingPhasesResolveByPriority) {
  StepActivity st;
  st.start_us = 0;
  st.end_us = 100;
  // A recompute kernel on a second stream overlapping a backward kernel: recompute wins there.
  st.activities = {kernel(0, 100, Phase::Backward, -1), kernel(20, 40, Phase::Recompute, -1)};
  const auto s = summarise_gpu_activity(st);
  EXPECT_EQ(total(s, Phase::Recompute), 20);
  EXPECT_EQ(total(s, Phase::Backward), 80);
  EXPECT_EQ(s.busy_us, 100);
}

TEST(GpuActivity, AnEmptyWindowHasNothingAndAnIdleWindowIsOneGap) {
  EXPECT_TRUE(summarise_gpu_activity(StepActivity{}).intervals.empty());
  StepActivity st;
  st.start_us = 10;
  st.end_us = 20;
  const auto s = summarise_gpu_activity(st);
  EXPECT_EQ(s.busy_us, 0);
  ASSERT_EQ(s.intervals.size(), 1u);
  EXPECT_EQ(s.intervals[0].phase, Phase::HostWait);
}

TEST(GpuActivity, SyncOpsAreNamedInWords) {
  EXPECT_EQ(describe_sync_op("aten::_local_scalar_dense"), ".item() (aten::_local_scalar_dense)");
  EXPECT_EQ(describe_sync_op("aten::my_op"), "aten::my_op");
  EXPECT_TRUE(is_sync_call("cudaStreamSynchronize"));
  EXPECT_TRUE(is_sync_call("cudaDeviceSynchronize"));
  EXPECT_FALSE(is_sync_call("cudaLaunchKernel"));
  EXPECT_FALSE(is_sync_call("cudaMemcpyAsync"));
}

}  // namespace
}  // namespace tunebench::metrics
