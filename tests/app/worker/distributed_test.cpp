// DDP across separate worker processes over Gloo: equivalences with single-process training,
// compression tolerance, and failures (a killed rank, a rank that never arrives).
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <thread>

#include "core/protocol/exit_codes.h"
#include "worker_process.h"

namespace tt = tunebench::testing;

namespace {

using tunebench::testing::with;

// Trains with `args` on `world` ranks and returns rank 0's final parameters.
// A run that failed, or a file left by an earlier run, must not pass as a result: the file is
// removed first and must be there, non-empty, afterwards.
std::vector<float> train(int world, const std::vector<std::string>& args, const std::string& tag,
                         tunebench::protocol::TrialLog* rank0_events = nullptr) {
  const std::string params = ::testing::TempDir() + "/" + tag + ".params";
  ::unlink(params.c_str());
  auto runs = tt::start_ranks(world, with(args, {"--save-params", params}), tag);
  for (auto& r : runs) {
    const int code = tt::wait_rank(r, 240);
    EXPECT_EQ(code, 0) << tag << ": " << tt::stderr_of(r);
  }
  tt::kill_all(runs);
  if (rank0_events) *rank0_events = tt::events_of(runs[0]);
  auto out = tt::read_floats(params);
  EXPECT_FALSE(out.empty()) << tag << ": no parameters were written";
  return out;
}

// Starts rank `rank` of a `world`-rank trial on a given port: ranks with different flags.
tt::RankRun start_rank(int world, int rank, int port, const std::vector<std::string>& args, const std::string& tag) {
  return tt::start_ranks(world, args, tag, {{"MASTER_PORT", std::to_string(port)}}, rank).at(0);
}

struct Diff {
  double max_abs = 0;
  double max_ref = 0;
};
Diff diff(const std::vector<float>& a, const std::vector<float>& b, const std::vector<float>& base) {
  Diff d;
  EXPECT_EQ(a.size(), b.size());
  for (size_t i = 0; i < std::min(a.size(), b.size()); ++i) {
    d.max_abs = std::max(d.max_abs, std::abs(double(a[i]) - double(b[i])));
    d.max_ref = std::max(d.max_ref, std::abs(double(b[i]) - double(base[i])));  // size of the update
  }
  return d;
}

// One SGD step (lr 1): the parameter change is exactly minus the averaged gradient.
std::vector<std::string> sgd_step(int micro_batch, int accum = 1) {
  return with(tt::small_model_args(), {"--optimizer", "sgd", "--lr", "1.0", "--steps", "2", "--warmup", "1",
                                       "--micro-batch", std::to_string(micro_batch), "--grad-accum",
                                       std::to_string(accum), "--bucket-mb", "0.05", "--first-bucket-mb", "0.01"});
}

}  // namespace

TEST(Ddp, GradientsEqualSingleProcessGradientsOfTheSameGlobalBatch) {
  // 2 ranks x micro-batch 2 see exactly the samples of one rank with micro-batch 4.
  const auto init = train(1, with(sgd_step(4), {"--lr", "1e-30"}), "ddp-init");
  const auto single = train(1, sgd_step(4), "ddp-single");
  const auto ddp = train(2, with(sgd_step(2), {"--strategy", "ddp"}), "ddp-two");
  const Diff d = diff(ddp, single, init);
  EXPECT_GT(d.max_ref, 1e-3) << "the step must move the parameters for the comparison to mean anything";
  // fp32 sums in a different order: rounding only. Tolerance: 1e-5 of the largest update.
  EXPECT_LT(d.max_abs, 1e-5 * std::max(1.0, d.max_ref)) << "max |ddp - single| = " << d.max_abs;
}

TEST(Ddp, NoSyncAccumulationEqualsTheLargeBatch) {
  const auto init = train(1, with(sgd_step(8), {"--lr", "1e-30"}), "nosync-init");
  const auto single = train(1, sgd_step(8), "nosync-single");
  const auto accumulated = train(2, with(sgd_step(2, 2), {"--strategy", "ddp"}), "nosync-ddp");
  const Diff d = diff(accumulated, single, init);
  EXPECT_GT(d.max_ref, 1e-3);
  EXPECT_LT(d.max_abs, 1e-5 * std::max(1.0, d.max_ref));
}

TEST(Ddp, OverlapOffGivesTheSameResult) {
  const auto on = train(2, with(sgd_step(2), {"--strategy", "ddp"}), "overlap-on");
  const auto off = train(2, with(sgd_step(2), {"--strategy", "ddp", "--ddp-overlap", "false"}), "overlap-off");
  ASSERT_EQ(on.size(), off.size());
  for (size_t i = 0; i < on.size(); ++i) ASSERT_EQ(on[i], off[i]) << i;
}

TEST(Ddp, Bf16AndFp16CompressionStayWithinTheirTolerance) {
  const auto init = train(1, with(sgd_step(4), {"--lr", "1e-30"}), "cmp-init");
  const auto exact = train(2, with(sgd_step(2), {"--strategy", "ddp"}), "cmp-exact");
  for (const char* c : {"bf16", "fp16"}) {
    const auto compressed = train(2, with(sgd_step(2), {"--strategy", "ddp", "--compression", c}), std::string("cmp-") + c);
    const Diff d = diff(compressed, exact, init);
    // bf16 keeps 8 significant bits (relative error 2^-8), fp16 11 bits; the update may differ by
    // that much (plus one more rounding for the averaging), never more.
    const double tolerance = std::string(c) == "bf16" ? 1.0 / 128 : 1.0 / 1024;
    EXPECT_LT(d.max_abs, tolerance * d.max_ref) << c;
    EXPECT_GT(d.max_abs, 0.0) << c << ": compression must actually change the bits that travel";
  }
}

TEST(Ddp, KilledRankEndsTheOthersWithAnErrorInsteadOfAHang) {
  auto runs = tt::start_ranks(2, with(tt::small_model_args(), {"--strategy", "ddp", "--steps", "100000", "--warmup",
                                                               "1", "--collective-timeout-s", "15"}),
                              "killed");
  // Wait for rank 1 to be training, then kill it. A rank 1 that never trains fails the test: the
  // others would then end at the rendezvous, not because a training peer was lost.
  bool training = false;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(240);
  while (!training && std::chrono::steady_clock::now() < deadline) {
    try {
      const auto log = tt::events_of(runs[1]);
      training = log.ranks.count(1) && !log.ranks.at(1).steps.empty();
    } catch (const std::runtime_error&) {
      // the event file does not exist yet
    }
    if (!training) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  if (!training) tt::kill_all(runs);
  ASSERT_TRUE(training) << "rank 1 never finished a step: " << tt::stderr_of(runs[1]);
  ::kill(runs[1].pid, SIGKILL);
  const int code = tt::wait_rank(runs[0], 60);
  tt::kill_all(runs);
  EXPECT_EQ(code, tunebench::protocol::kExitCommunication) << tt::stderr_of(runs[0]);
  const auto log = tt::events_of(runs[0]);
  ASSERT_FALSE(log.ranks.at(0).steps.empty()) << "rank 0 never trained beside rank 1";
  ASSERT_FALSE(log.ranks.at(0).errors.empty());
  const auto& error = log.ranks.at(0).errors.back().value;
  EXPECT_TRUE(error.kind == "comm" || error.kind == "timeout") << error.kind;
  // Not just "Connection closed by peer [127.0.0.1]:8579": the rank that was lost, by name.
  const std::string lost = "rank 1 (pid " + std::to_string(runs[1].pid);
  EXPECT_NE(error.message.find(lost), std::string::npos) << error.message;
  EXPECT_NE(error.message.find("has exited"), std::string::npos) << error.message;
}

TEST(Ddp, RanksWithDifferentModelsStopAtTheRendezvousWithTheDifference) {
  const int port = tt::free_port();
  const auto args = with(tt::small_model_args(), {"--strategy", "ddp", "--steps", "3", "--warmup", "1"});
  std::vector<tt::RankRun> runs = {start_rank(2, 0, port, args, "mismatch"),
                                   start_rank(2, 1, port, with(args, {"--dim", "128"}), "mismatch")};
  for (auto& r : runs) EXPECT_EQ(tt::wait_rank(r, 120), tunebench::protocol::kExitConfig) << tt::stderr_of(r);
  tt::kill_all(runs);
  for (int r = 0; r < 2; ++r) {
    const auto log = tt::events_of(runs[r]);
    ASSERT_EQ(log.ranks.at(r).errors.size(), 1u) << "rank " << r;
    const auto& e = log.ranks.at(r).errors[0].value;
    EXPECT_EQ(e.kind, "config");
    EXPECT_NE(e.message.find("rank 1 runs a different configuration than rank 0: dim 128 vs 64"), std::string::npos)
        << e.message;
    ASSERT_TRUE(log.ranks.at(r).done) << "rank " << r << " ended without a done event";
    EXPECT_EQ(log.ranks.at(r).done->exit_code, tunebench::protocol::kExitConfig);
  }
}

TEST(Ddp, AForeignListenerOnMasterPortEndsEveryRankWithinTheRendezvousTimeout) {
  // Something else listens on MASTER_PORT: rank 0 cannot host the store, rank 1 connects to a
  // program that never answers. Both must end with a rendezvous error, none may hang.
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  ASSERT_EQ(::listen(fd, 16), 0);
  socklen_t len = sizeof(addr);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  const int port = ntohs(addr.sin_port);
  const auto args = with(tt::small_model_args(), {"--strategy", "ddp", "--rendezvous-timeout-s", "3"});
  std::vector<tt::RankRun> runs = {start_rank(2, 0, port, args, "foreign"), start_rank(2, 1, port, args, "foreign")};
  // A hang guard, not a timing assertion: the timeout is 3 s; a rank still running after 90 s hangs.
  for (auto& r : runs) EXPECT_EQ(tt::wait_rank(r, 90), tunebench::protocol::kExitCommunication) << tt::stderr_of(r);
  tt::kill_all(runs);
  ::close(fd);
  for (int r = 0; r < 2; ++r) {
    const auto log = tt::events_of(runs[r]);
    ASSERT_FALSE(log.ranks.at(r).errors.empty()) << "rank " << r;
    EXPECT_EQ(log.ranks.at(r).errors[0].value.kind, "rendezvous") << log.ranks.at(r).errors[0].value.message;
  }
}

TEST(Ddp, RankThatNeverArrivesIsARendezvousErrorOnTheOthers) {
  auto runs = tt::start_ranks(2, with(tt::small_model_args(), {"--strategy", "ddp", "--rendezvous-timeout-s", "3"}),
                              "lonely", {}, /*only_rank=*/0);
  const int code = tt::wait_rank(runs[0], 60);
  tt::kill_all(runs);
  EXPECT_EQ(code, tunebench::protocol::kExitCommunication);
  const auto log = tt::events_of(runs[0]);
  ASSERT_FALSE(log.ranks.at(0).errors.empty());
  EXPECT_EQ(log.ranks.at(0).errors[0].value.kind, "rendezvous");
  EXPECT_NE(log.ranks.at(0).errors[0].value.message.find("1 of 2"), std::string::npos);
}

TEST(Ddp, CommLaneCarriesEveryBucket) {
  auto runs = tt::start_ranks(2, with(sgd_step(2), {"--strategy", "ddp"}), "commlane");
  for (auto& r : runs) ASSERT_EQ(tt::wait_rank(r, 240), 0) << tt::stderr_of(r);
  const auto log = tt::events_of(runs[0]);
  for (const auto& s : log.ranks.at(0).steps)
    for (const auto& in : s.intervals) {
      EXPECT_GE(in.start_us, s.start_us) << "step " << s.step << " " << tunebench::protocol::to_string(in.phase);
      EXPECT_LE(in.end_us, s.end_us) << "step " << s.step;
    }
  const auto& step = log.ranks.at(0).steps.back();
  int buckets = 0;
  int64_t bytes = 0;
  for (const auto& in : step.intervals)
    if (in.lane == tunebench::protocol::Lane::Comm) {
      EXPECT_EQ(in.phase, tunebench::protocol::Phase::AllReduce);
      EXPECT_EQ(in.label.rfind("bucket ", 0), 0u);
      EXPECT_GT(in.bytes, 0);
      EXPECT_GE(in.busbw_gbps, 0.0);
      bytes += in.bytes;
      ++buckets;
    }
  EXPECT_GT(buckets, 2) << "a 50 KiB bucket cap splits the small model into several buckets";
  // every fp32 gradient travels once: 4 bytes per parameter
  ASSERT_TRUE(log.ranks.at(0).model);
  EXPECT_EQ(bytes, 4 * log.ranks.at(0).model->parameters);
  EXPECT_GT(step.comm_ms, 0.0);
  EXPECT_GE(step.exposed_comm_ms, 0.0);
}

namespace {
std::vector<std::string> adamw_steps(int steps) {
  return with(tt::small_model_args(), {"--optimizer", "adamw", "--lr", "1e-3", "--steps", std::to_string(steps + 1),
                                       "--warmup", "1", "--micro-batch", "2", "--fsdp-param-dtype", "fp32",
                                       "--fsdp-reduce-dtype", "fp32"});
}
double max_abs_diff(const std::vector<float>& a, const std::vector<float>& b) {
  EXPECT_EQ(a.size(), b.size());
  double m = 0;
  for (size_t i = 0; i < std::min(a.size(), b.size()); ++i) m = std::max(m, std::abs(double(a[i]) - double(b[i])));
  return m;
}
}  // namespace

TEST(Fsdp, ParametersAfterThreeAdamWStepsEqualDdpInBothModes) {
  const auto init = train(2, with(adamw_steps(3), {"--strategy", "ddp", "--lr", "1e-30"}), "fsdp-init");
  const auto ddp = train(2, with(adamw_steps(3), {"--strategy", "ddp"}), "fsdp-ddp");
  const double moved = max_abs_diff(ddp, init);
  EXPECT_GT(moved, 1e-3) << "three AdamW steps of lr 1e-3 must move the parameters";
  for (const char* mode : {"full_shard", "shard_grad_op"}) {
    const auto fsdp = train(2, with(adamw_steps(3), {"--strategy", "fsdp", "--fsdp-mode", mode}), std::string("fsdp-") + mode);
    ASSERT_EQ(fsdp.size(), ddp.size()) << mode;
    // Same sums in the same order: equal up to float rounding of the optimizer arithmetic.
    EXPECT_LT(max_abs_diff(fsdp, ddp), 1e-6) << mode;
  }
}

TEST(Fsdp, CheckpointingAndPrefetchDoNotChangeTheResult) {
  tunebench::protocol::TrialLog base_events, ckpt_events;
  const auto base = train(2, with(adamw_steps(2), {"--strategy", "fsdp"}), "fsdp-base", &base_events);
  const auto ckpt =
      train(2, with(adamw_steps(2), {"--strategy", "fsdp", "--checkpointing", "true", "--fsdp-prefetch", "false"}),
            "fsdp-ckpt", &ckpt_events);
  // Both runs trained (the parameters moved by AdamW's first steps) ...
  const auto init = train(2, with(adamw_steps(2), {"--strategy", "fsdp", "--lr", "1e-30"}), "fsdp-ckpt-init");
  ASSERT_FALSE(base.empty());
  EXPECT_GT(max_abs_diff(base, init), 1e-4) << "the comparison means nothing if training did not move anything";
  // ... and the second one really recomputed: its backward carries recompute intervals, the first none.
  auto recomputes = [](const tunebench::protocol::TrialLog& log) {
    int n = 0;
    for (const auto& s : log.ranks.at(0).steps)
      for (const auto& in : s.intervals) n += in.phase == tunebench::protocol::Phase::Recompute;
    return n;
  };
  EXPECT_GT(recomputes(ckpt_events), 0);
  EXPECT_EQ(recomputes(base_events), 0);
  EXPECT_LT(max_abs_diff(ckpt, base), 1e-6);
}

TEST(Fsdp, CommLaneCarriesGathersAndReduceScattersPerUnitAndShardsTheState) {
  auto runs = tt::start_ranks(2, with(adamw_steps(1), {"--strategy", "fsdp"}), "fsdp-lane");
  for (auto& r : runs) ASSERT_EQ(tt::wait_rank(r, 240), 0) << tt::stderr_of(r);
  const auto log = tt::events_of(runs[0]);
  const auto& rank0 = log.ranks.at(0);
  const auto& step = rank0.steps.back();
  int gathers = 0, scatters = 0;
  for (const auto& in : step.intervals) {
    if (in.phase == tunebench::protocol::Phase::AllGather) ++gathers;
    if (in.phase == tunebench::protocol::Phase::ReduceScatter) ++scatters;
    if (in.lane == tunebench::protocol::Lane::Comm) {
      EXPECT_GT(in.bytes, 0);
    }
  }
  const int units = 2 + 2;  // embedding, 2 blocks, head
  EXPECT_EQ(scatters, units);
  // FULL_SHARD gathers every unit in forward and all but the head again in backward.
  EXPECT_EQ(gathers, units + units - 1);
  // The optimizer holds only this rank's shard: half the parameters (plus padding).
  ASSERT_TRUE(rank0.model);
  EXPECT_LE(rank0.model->parameter_bytes, 4 * (rank0.model->parameters / 2 + 4));
  EXPECT_GE(rank0.model->parameter_bytes, 4 * (rank0.model->parameters / 2));
}

// compile 'fused' swaps the model's ops for autograd Functions with hand-written backwards; DDP's
// bucket hooks and FSDP's gather/reduce-scatter hooks must see the same gradients through them.
// (On the CPU the Functions run their composite reference: this checks the plumbing and the
// formulas; the CUDA kernels are checked against the same references on the GPU.)
TEST(Ddp, FusedKernelsKeepTheBucketsAndTheResult) {
  const auto init = train(1, with(sgd_step(4), {"--lr", "1e-30"}), "fused-init");
  const auto composite = train(2, with(sgd_step(2), {"--strategy", "ddp"}), "fused-ddp-composite");
  const auto fused = train(2, with(sgd_step(2), {"--strategy", "ddp", "--compile", "fused"}), "fused-ddp");
  const Diff d = diff(fused, composite, init);
  EXPECT_GT(d.max_ref, 1e-3);
  EXPECT_LT(d.max_abs, 1e-5 * std::max(1.0, d.max_ref)) << "max |fused - composite| = " << d.max_abs;
}

TEST(Fsdp, FusedKernelsGiveTheCompositeResultInBothModes) {
  // SGD: its update is linear in the gradient, so rounding-level differences stay rounding-level.
  const std::vector<std::string> fp32 = {"--strategy", "fsdp", "--fsdp-param-dtype", "fp32", "--fsdp-reduce-dtype", "fp32"};
  const auto init = train(1, with(sgd_step(4), {"--lr", "1e-30"}), "fused-fsdp-init");
  const auto composite = train(2, with(sgd_step(2), fp32), "fused-fsdp-composite");
  for (const char* mode : {"full_shard", "shard_grad_op"}) {
    const auto fused =
        train(2, with(sgd_step(2), with(fp32, {"--fsdp-mode", mode, "--compile", "fused"})), std::string("fused-fsdp-") + mode);
    const Diff d = diff(fused, composite, init);
    EXPECT_GT(d.max_ref, 1e-3) << mode;
    EXPECT_LT(d.max_abs, 1e-5 * std::max(1.0, d.max_ref)) << mode;
  }
}

TEST(Ddp, GroupedQueryAttentionAndTiedEmbeddingsEqualTheSingleProcess) {
  // Llama-3.2-1B's features small: 4 query heads on 2 key/value heads, the head tied to the
  // embedding. DDP's buckets hold the narrower q/k/v projection and the one shared matrix (whose
  // gradient sums both uses before its bucket is reduced): the same update as one process.
  const std::vector<std::string> gqa = {"--kv-heads", "2", "--tie-embeddings", "true"};
  const auto init = train(1, with(with(sgd_step(4), gqa), {"--lr", "1e-30"}), "gqa-init");
  const auto single = train(1, with(sgd_step(4), gqa), "gqa-single");
  const auto ddp = train(2, with(with(sgd_step(2), gqa), {"--strategy", "ddp"}), "gqa-ddp");
  ASSERT_EQ(single.size(), init.size());
  const Diff d = diff(ddp, single, init);
  EXPECT_GT(d.max_ref, 1e-3);
  EXPECT_LT(d.max_abs, 1e-5 * std::max(1.0, d.max_ref)) << "max |ddp - single| = " << d.max_abs;
}

TEST(Fsdp, GroupedQueryAttentionUnitsEqualDdp) {
  const std::vector<std::string> gqa = {"--kv-heads", "1"};  // multi-query: one key/value head for 4
  const auto ddp = train(2, with(with(adamw_steps(2), gqa), {"--strategy", "ddp"}), "gqa-fsdp-ddp");
  const auto fsdp = train(2, with(with(adamw_steps(2), gqa), {"--strategy", "fsdp"}), "gqa-fsdp");
  ASSERT_EQ(fsdp.size(), ddp.size());
  EXPECT_LT(max_abs_diff(fsdp, ddp), 1e-6);
}
