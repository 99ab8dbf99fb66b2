// Link curves: interpolation of measured points, the alpha-beta model of the catalogue, curves
// from probe events and from a trial's own collectives, and the transport key.
#include <gtest/gtest.h>

#include "core/predict/link_model.h"

namespace tp = tunebench::predict;
namespace pr = tunebench::protocol;

TEST(LinkCurve, InterpolatesInLogSizeAndHoldsItsEnds) {
  tp::LinkCurve c;
  c.points = {{1e6, 10.0}, {1e8, 30.0}};
  EXPECT_DOUBLE_EQ(c.busbw_at(1e3), 10.0);
  EXPECT_DOUBLE_EQ(c.busbw_at(1e10), 30.0);
  EXPECT_NEAR(c.busbw_at(1e7), 20.0, 1e-9);  // halfway in log(size)
  // two ranks: an all-reduce of S bytes moves S on the bus (2(n-1)/n = 1)
  EXPECT_NEAR(c.collective_ms(pr::Phase::AllReduce, 1e8, 2), 1e8 / 30e9 * 1e3, 1e-9);
  EXPECT_NEAR(c.collective_ms(pr::Phase::AllGather, 1e8, 4), 0.75 * 1e8 / 30e9 * 1e3, 1e-9);
  EXPECT_EQ(c.collective_ms(pr::Phase::AllReduce, 1e8, 1), 0.0);
}

TEST(LinkCurve, CatalogueNvlinkReproducesTheMeasurementsItWasFittedTo) {
  const auto c = tp::link_from_catalogue(*tunebench::hardware::find_link("nvlink4"));
  // docs/BENCHMARKS.md, "All-reduce bus bandwidth": 326 GB/s at 1 GiB, 224 GB/s at 25 MB (2x H200)
  EXPECT_NEAR(c.busbw_at(1073741824.0), 326.0, 0.03 * 326);
  EXPECT_NEAR(c.busbw_at(26214400.0), 224.0, 0.05 * 224);
  EXPECT_LT(c.busbw_at(1e6), c.busbw_at(1e9));
}

namespace {
pr::Hello hello(const std::string& host, std::map<std::string, std::string> env) {
  pr::Hello h;
  h.host = host;
  h.device = "NVIDIA H200";
  h.device_kind = "cuda";
  h.world_size = 2;
  h.env = std::move(env);
  return h;
}
}  // namespace

TEST(LinkCurve, FromAProbeTakesTheMedianOfTheRanksPerSize) {
  pr::TrialLog log;
  for (int rank : {0, 1}) {
    log.ranks[rank].hello = hello("a", {});
    for (double bw : {10.0, 20.0}) {
      pr::LinkProbe p;
      p.bytes = bw == 10.0 ? 1 << 20 : 1 << 24;
      p.busbw_gbps = bw + rank * 2;  // rank 1 a little faster
      log.ranks[rank].probes.push_back(p);
    }
  }
  const auto c = tp::link_from_probe(log, "probe");
  ASSERT_EQ(c.points.size(), 2u);
  EXPECT_DOUBLE_EQ(c.points[0].second, 11.0);
  EXPECT_DOUBLE_EQ(c.points[1].second, 21.0);
  EXPECT_TRUE(c.measured());
}

TEST(LinkCurve, FromATrialUsesMeasuredStepsOnly) {
  pr::TrialLog log;
  log.ranks[0].hello = hello("a", {});
  for (int s = 0; s < 3; ++s) {
    pr::Step step;
    step.step = s;
    step.warmup = s == 0;
    pr::Interval in;
    in.lane = pr::Lane::Comm;
    in.phase = pr::Phase::AllReduce;
    in.start_us = 0;
    in.end_us = 1000;
    in.bytes = 1000000;
    in.busbw_gbps = s == 0 ? 1.0 : 5.0;  // the warm-up step's figure must not count
    step.intervals.push_back(in);
    log.ranks[0].steps.push_back(step);
  }
  const auto c = tp::link_from_trial(log, "t");
  ASSERT_EQ(c.points.size(), 1u);
  EXPECT_DOUBLE_EQ(c.points[0].second, 5.0);
}

TEST(TransportKey, NamesTheDeviceHostsAndPathVariablesOnly) {
  pr::TrialLog a, b, c;
  a.ranks[0].hello = hello("x", {{"NCCL_P2P_DISABLE", "1"}, {"NCCL_DEBUG", "INFO"}});
  b.ranks[0].hello = hello("x", {{"NCCL_P2P_DISABLE", "1"}});
  c.ranks[0].hello = hello("x", {});
  c.ranks[1].hello = hello("y", {});
  EXPECT_EQ(tp::transport_key(a), tp::transport_key(b));  // NCCL_DEBUG does not change the path
  EXPECT_NE(tp::transport_key(a), tp::transport_key(c));
  EXPECT_NE(tp::transport_key(c).find("2 host(s)"), std::string::npos);
  EXPECT_EQ(tp::transport_key(b), tp::transport_key("NVIDIA H200", 1, {{"NCCL_P2P_DISABLE", "1"}}));
}
