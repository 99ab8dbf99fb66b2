// Round trip of every event type through JSON, and the enum names on the wire.
#include <gtest/gtest.h>

#include "core/protocol/event_reader.h"
#include "core/protocol/event_writer.h"
#include "core/protocol/events.h"

namespace tp = tunebench::protocol;

namespace {

tp::Event roundtrip(const tp::Event& e) {
  tp::Event out;
  std::string why;
  std::string line = tp::format_line(e);
  EXPECT_EQ(line.back(), '\n');
  EXPECT_EQ(line.find('\n'), line.size() - 1) << "a line must hold exactly one newline";
  line.pop_back();
  EXPECT_TRUE(tp::parse_event_line(line, out, why)) << why;
  return out;
}

tp::Event with(tp::Payload p) {
  tp::Event e;
  e.header.trial = "t-42";
  e.header.rank = 3;
  e.header.t_us = 1764460800123456;
  e.payload = std::move(p);
  return e;
}

}  // namespace

TEST(Events, HelloRoundTrip) {
  tp::Hello h;
  h.host = "gpu-box";
  h.pid = 4242;
  h.world_size = 2;
  h.local_rank = 1;
  h.device = "NVIDIA H200";
  h.device_kind = "cuda";
  h.device_memory_bytes = 150754820096;
  h.driver = "580.159.04";
  h.cuda = "13.0";
  h.cudnn = "9.19";
  h.nccl = "2.28.9";
  h.torch = "2.11.0";
  h.backend = "nccl";
  h.env = {{"NCCL_P2P_DISABLE", "1"}, {"NCCL_NVLS_ENABLE", "0"}};
  h.topology = "GPU0: 18 NVLink links; GPU1: 18 NVLink links; GPU0-GPU1: PCIe node";
  h.config = {{"model", "7b"}, {"micro_batch", 1}};
  h.clock_offset_us = -17;
  const auto out = roundtrip(with(h));
  ASSERT_TRUE(out.is<tp::Hello>());
  const auto& g = out.as<tp::Hello>();
  EXPECT_EQ(out.header.trial, "t-42");
  EXPECT_EQ(out.header.rank, 3);
  EXPECT_EQ(out.header.t_us, 1764460800123456);
  EXPECT_EQ(g.host, h.host);
  EXPECT_EQ(g.pid, h.pid);
  EXPECT_EQ(g.world_size, 2);
  EXPECT_EQ(g.local_rank, 1);
  EXPECT_EQ(g.device, h.device);
  EXPECT_EQ(g.device_memory_bytes, h.device_memory_bytes);
  EXPECT_EQ(g.driver, h.driver);
  EXPECT_EQ(g.cudnn, h.cudnn);
  EXPECT_EQ(g.nccl, h.nccl);
  EXPECT_EQ(g.torch, h.torch);
  EXPECT_EQ(g.backend, "nccl");
  EXPECT_EQ(g.env, h.env);
  EXPECT_EQ(g.topology, h.topology);
  EXPECT_EQ(g.config, h.config);
  EXPECT_EQ(g.clock_offset_us, -17);
}

TEST(Events, ModelRoundTrip) {
  tp::ModelInfo m{6738415616, 6607343616, 4.2e10, "6*N_matmul + 12*L*D*T", 110000000000, 26953662464, "flash"};
  const auto out = roundtrip(with(m));
  const auto& g = out.as<tp::ModelInfo>();
  EXPECT_EQ(g.parameters, m.parameters);
  EXPECT_EQ(g.matmul_parameters, m.matmul_parameters);
  EXPECT_DOUBLE_EQ(g.flops_per_token, m.flops_per_token);
  EXPECT_EQ(g.flops_formula, m.flops_formula);
  EXPECT_EQ(g.predicted_peak_bytes, m.predicted_peak_bytes);
  EXPECT_EQ(g.parameter_bytes, m.parameter_bytes);
  EXPECT_EQ(g.attention, m.attention);
}

TEST(Events, StepRoundTripKeepsEveryInterval) {
  tp::Step s;
  s.step = 7;
  s.warmup = false;
  s.start_us = 1000;
  s.end_us = 269000;
  s.step_ms = 268.0;
  s.tokens = 2048;
  s.loss = 10.37;
  s.memory = {70LL << 30, 80LL << 30, 102LL << 30, 2};
  s.comm_ms = 41.5;
  s.exposed_comm_ms = 3.25;
  s.busbw_gbps = 301.5;
  s.skipped = true;
  s.intervals = {{tp::Lane::Host, tp::Phase::DataWait, 1000, 1100, "", 0, 0},
                 {tp::Lane::Host, tp::Phase::HostToDevice, 1100, 1150, "", 0, 0},
                 {tp::Lane::Compute, tp::Phase::Forward, 1150, 90000, "", 0, 0},
                 {tp::Lane::Compute, tp::Phase::Backward, 90000, 250000, "", 0, 0},
                 {tp::Lane::Compute, tp::Phase::Recompute, 95000, 120000, "block 31", 0, 0},
                 {tp::Lane::Comm, tp::Phase::AllReduce, 120000, 125000, "bucket 0", 26214400, 224.5},
                 {tp::Lane::Comm, tp::Phase::AllGather, 1, 2, "block 1", 5, 0},
                 {tp::Lane::Comm, tp::Phase::ReduceScatter, 3, 4, "block 1", 6, 1},
                 {tp::Lane::Comm, tp::Phase::Broadcast, 5, 6, "", 7, 0},
                 {tp::Lane::Compute, tp::Phase::Optimizer, 250000, 269000, "", 0, 0}};
  const auto out = roundtrip(with(s));
  const auto& g = out.as<tp::Step>();
  EXPECT_EQ(g.step, 7);
  EXPECT_EQ(g.start_us, 1000);
  EXPECT_EQ(g.end_us, 269000);
  EXPECT_DOUBLE_EQ(g.step_ms, 268.0);
  EXPECT_EQ(g.tokens, 2048);
  EXPECT_DOUBLE_EQ(g.loss, 10.37);
  EXPECT_EQ(g.memory.allocated_bytes, s.memory.allocated_bytes);
  EXPECT_EQ(g.memory.reserved_bytes, s.memory.reserved_bytes);
  EXPECT_EQ(g.memory.peak_bytes, s.memory.peak_bytes);
  EXPECT_EQ(g.memory.alloc_retries, 2);
  EXPECT_DOUBLE_EQ(g.comm_ms, 41.5);
  EXPECT_DOUBLE_EQ(g.exposed_comm_ms, 3.25);
  EXPECT_DOUBLE_EQ(g.busbw_gbps, 301.5);
  EXPECT_TRUE(g.skipped);
  ASSERT_EQ(g.intervals.size(), s.intervals.size());
  for (size_t i = 0; i < s.intervals.size(); ++i) {
    EXPECT_EQ(g.intervals[i].lane, s.intervals[i].lane) << i;
    EXPECT_EQ(g.intervals[i].phase, s.intervals[i].phase) << i;
    EXPECT_EQ(g.intervals[i].start_us, s.intervals[i].start_us) << i;
    EXPECT_EQ(g.intervals[i].end_us, s.intervals[i].end_us) << i;
    EXPECT_EQ(g.intervals[i].label, s.intervals[i].label) << i;
    EXPECT_EQ(g.intervals[i].bytes, s.intervals[i].bytes) << i;
    EXPECT_DOUBLE_EQ(g.intervals[i].busbw_gbps, s.intervals[i].busbw_gbps) << i;
  }
}

TEST(Events, GpuSampleKeepsAbsentFieldsAbsent) {
  tp::GpuSample g;
  g.index = 1;
  g.util_pct = 98;
  g.mem_used_bytes = 100LL << 30;
  g.mem_total_bytes = 141LL << 30;
  g.power_w = 612.5;
  g.sm_clock_mhz = 1980;
  g.temperature_c = 61;
  g.nvlink_tx_mbps = 150000;
  const auto out = roundtrip(with(g)).as<tp::GpuSample>();
  EXPECT_EQ(out.index, 1);
  EXPECT_EQ(out.util_pct, 98);
  EXPECT_EQ(out.mem_used_bytes, g.mem_used_bytes);
  EXPECT_EQ(out.mem_total_bytes, g.mem_total_bytes);
  EXPECT_EQ(out.power_w, 612.5);
  EXPECT_EQ(out.sm_clock_mhz, 1980);
  EXPECT_EQ(out.temperature_c, 61);
  EXPECT_EQ(out.nvlink_tx_mbps, 150000);
  EXPECT_FALSE(out.nvlink_rx_mbps.has_value());
  EXPECT_FALSE(out.pcie_tx_mbps.has_value());
  EXPECT_FALSE(out.cpu_pct.has_value());
  EXPECT_FALSE(out.rss_bytes.has_value());

  tp::GpuSample cpu;
  cpu.cpu_pct = 187.5;
  cpu.rss_bytes = 1234567;
  const auto c = roundtrip(with(cpu)).as<tp::GpuSample>();
  EXPECT_EQ(c.index, -1);
  EXPECT_EQ(c.cpu_pct, 187.5);
  EXPECT_EQ(c.rss_bytes, 1234567);
  EXPECT_FALSE(c.util_pct.has_value());
}

TEST(Events, LogWarningErrorDoneRoundTrip) {
  const auto log = roundtrip(with(tp::Log{"info", "line with \"quotes\"\nand a newline\tand tab"}));
  EXPECT_EQ(log.as<tp::Log>().level, "info");
  EXPECT_EQ(log.as<tp::Log>().message, "line with \"quotes\"\nand a newline\tand tab");

  const auto warn = roundtrip(with(tp::Warning{"cuda-graph", "capture unsupported"}));
  EXPECT_EQ(warn.as<tp::Warning>().kind, "cuda-graph");
  EXPECT_EQ(warn.as<tp::Warning>().message, "capture unsupported");

  tp::Error err{"oom", "CUDA out of memory", {{"requested_bytes", 1073741824}, {"reserved_bytes", 5}}};
  const auto e = roundtrip(with(err)).as<tp::Error>();
  EXPECT_EQ(e.kind, "oom");
  EXPECT_EQ(e.message, "CUDA out of memory");
  EXPECT_EQ(e.details.at("requested_bytes").get<int64_t>(), 1073741824);

  tp::Done d;
  d.exit_code = 3;
  d.summary = {8, 268.5, 267.0, 270.25, 7630.0, 0.331, 109521666048, 40.0, 2.5, 0.1, 9.87};
  const auto out = roundtrip(with(d)).as<tp::Done>();
  EXPECT_EQ(out.exit_code, 3);
  EXPECT_EQ(out.summary.measured_steps, 8);
  EXPECT_DOUBLE_EQ(out.summary.step_ms_median, 268.5);
  EXPECT_DOUBLE_EQ(out.summary.step_ms_p25, 267.0);
  EXPECT_DOUBLE_EQ(out.summary.step_ms_p75, 270.25);
  EXPECT_DOUBLE_EQ(out.summary.tokens_per_s, 7630.0);
  EXPECT_DOUBLE_EQ(out.summary.mfu, 0.331);
  EXPECT_EQ(out.summary.peak_bytes, 109521666048);
  EXPECT_DOUBLE_EQ(out.summary.comm_ms_median, 40.0);
  EXPECT_DOUBLE_EQ(out.summary.exposed_comm_ms_median, 2.5);
  EXPECT_DOUBLE_EQ(out.summary.data_wait_ms_median, 0.1);
  EXPECT_DOUBLE_EQ(out.summary.final_loss, 9.87);
}

TEST(Events, LinkProbeRoundTripsThroughTheReader) {
  tp::LinkProbe p;
  p.collective = tp::Phase::AllReduce;
  p.dtype = "bf16";
  p.bytes = 26214400;
  p.world_size = 2;
  p.iterations = 20;
  p.time_us = 117.0;
  p.algbw_gbps = 224.05;
  p.busbw_gbps = 224.05;
  const auto out = roundtrip(with(p)).as<tp::LinkProbe>();
  EXPECT_EQ(out.collective, tp::Phase::AllReduce);
  EXPECT_EQ(out.dtype, "bf16");
  EXPECT_EQ(out.bytes, 26214400);
  EXPECT_EQ(out.world_size, 2);
  EXPECT_EQ(out.iterations, 20);
  EXPECT_DOUBLE_EQ(out.time_us, 117.0);
  EXPECT_DOUBLE_EQ(out.busbw_gbps, 224.05);
  EXPECT_EQ(tp::type_name(tp::Payload{p}), "probe");
  EXPECT_TRUE(tp::is_event_type("probe"));
  EXPECT_FALSE(tp::is_event_type("telepathy"));
  // a probe of something that is not a collective is a bad event
  nlohmann::json j = tp::to_json(with(p));
  j["collective"] = "forward";
  EXPECT_THROW(tp::event_from_json(j), std::invalid_argument);
}

TEST(Events, PhaseAndLaneNamesAreStable) {
  EXPECT_EQ(tp::to_string(tp::Phase::DataWait), "data_wait");
  EXPECT_EQ(tp::to_string(tp::Phase::HostToDevice), "h2d");
  EXPECT_EQ(tp::to_string(tp::Phase::AllReduce), "all_reduce");
  EXPECT_EQ(tp::to_string(tp::Lane::Comm), "comm");
  for (int i = 0; i <= static_cast<int>(tp::Phase::Other); ++i) {
    const auto p = static_cast<tp::Phase>(i);
    EXPECT_EQ(tp::phase_from_string(tp::to_string(p)), p);
  }
  EXPECT_FALSE(tp::phase_from_string("nope").has_value());
  EXPECT_EQ(tp::default_lane(tp::Phase::ReduceScatter), tp::Lane::Comm);
  EXPECT_EQ(tp::default_lane(tp::Phase::HostToDevice), tp::Lane::Host);
  EXPECT_EQ(tp::default_lane(tp::Phase::Backward), tp::Lane::Compute);
}
