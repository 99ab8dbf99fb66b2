// Gloo through libtorch 1.13's c10d (CPU). Gloo has no reduce-scatter, no _allgather_base and no
// AVG: all-gather is done in list form into views of the output, reduce-scatter as an all-reduce
// of a copy followed by taking this rank's slice, AVG as SUM then divide (docs/ARCHITECTURE.md,
// "libtorch 1.13 and 2.11": collectives).
// Collectives run synchronously from the caller's point of view: the interval recorded on the
// comm lane is the host time the collective took.
#include "core/engine/comm/communicator.h"

#ifdef TUNEBENCH_WITH_GLOO
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#endif

#include "core/engine/comm/rendezvous.h"
#include "core/engine/errors.h"
#include "core/engine/timing/timeline.h"

namespace tunebench::engine {

#ifdef TUNEBENCH_WITH_GLOO
namespace {

class DoneWork final : public CommWork {
 public:
  void wait() override {}
};

class GlooCommunicator final : public Communicator {
 public:
  GlooCommunicator(const RendezvousInfo& info, Rendezvous rv) : m_info(info) {
    m_peers = std::move(rv.peers);
    auto store = std::move(rv.store);
    auto options = c10d::ProcessGroupGloo::Options::create(info.collective_timeout);
    // Ranks on one host talk over loopback; across hosts Gloo binds to this host's address.
    const bool local = info.master_addr == "127.0.0.1" || info.master_addr == "localhost";
    options->devices.push_back(local ? c10d::ProcessGroupGloo::createDeviceForHostname("127.0.0.1")
                                     : c10d::ProcessGroupGloo::createDefaultDevice());
    options->threads = 2;
    m_pg = c10::make_intrusive<c10d::ProcessGroupGloo>(store, info.rank, info.world_size, options);
  }

  int rank() const override { return m_info.rank; }
  int size() const override { return m_info.world_size; }
  std::string backend() const override { return "gloo"; }
  std::string version() const override { return "gloo (libtorch c10d)"; }

  std::unique_ptr<CommWork> all_reduce_avg(const at::Tensor& t, const std::string& label) override {
    delay_arrival();
    const int h = begin(protocol::Phase::AllReduce, label, t);
    // Gloo cannot reduce bf16: the values keep their bf16 rounding but travel as fp32.
    const bool widen = t.scalar_type() == at::kBFloat16;
    std::vector<at::Tensor> tensors = {widen ? t.to(at::kFloat) : t};
    run(m_pg->allreduce(tensors), "all-reduce " + label);
    tensors[0].div_(m_info.world_size);
    if (widen) t.copy_(tensors[0]);
    end(h);
    return std::make_unique<DoneWork>();
  }

  std::unique_ptr<CommWork> all_gather(const at::Tensor& out, const at::Tensor& shard, const std::string& label) override {
    delay_arrival();
    const int h = begin(protocol::Phase::AllGather, label, out);
    const bool widen = out.scalar_type() == at::kBFloat16;  // Gloo has no bf16: travel as fp32
    const at::Tensor target = widen ? at::empty(out.sizes(), out.options().dtype(at::kFloat)) : out;
    std::vector<std::vector<at::Tensor>> outputs(1);
    for (int r = 0; r < m_info.world_size; ++r) outputs[0].push_back(target.narrow(0, r * shard.numel(), shard.numel()));
    std::vector<at::Tensor> inputs = {widen ? shard.to(at::kFloat) : shard};
    run(m_pg->allgather(outputs, inputs), "all-gather " + label);
    if (widen) out.copy_(target);
    end(h);
    return std::make_unique<DoneWork>();
  }

  std::unique_ptr<CommWork> reduce_scatter_avg(const at::Tensor& out, const at::Tensor& input,
                                               const std::string& label) override {
    delay_arrival();
    const int h = begin(protocol::Phase::ReduceScatter, label, input);
    std::vector<at::Tensor> tensors = {input.to(at::kFloat, /*non_blocking=*/false, /*copy=*/true)};
    run(m_pg->allreduce(tensors), "reduce-scatter " + label);
    out.copy_(tensors[0].narrow(0, m_info.rank * out.numel(), out.numel())).div_(m_info.world_size);
    end(h);
    return std::make_unique<DoneWork>();
  }

  void broadcast(const at::Tensor& t) override {
    std::vector<at::Tensor> tensors = {t};
    run(m_pg->broadcast(tensors), "broadcast");
  }

  void barrier() override { run(m_pg->barrier(), "barrier"); }

 private:
  int begin(protocol::Phase phase, const std::string& label, const at::Tensor& t) {
    return m_timeline ? m_timeline->begin(phase, label, t.numel() * static_cast<int64_t>(t.element_size())) : -1;
  }
  void end(int h) {
    if (m_timeline) m_timeline->end(h);
  }
  void run(const c10::intrusive_ptr<c10d::Work>& work, const std::string& what) const {
    struct InFlight {
      std::atomic<int>& n;
      explicit InFlight(std::atomic<int>& c) : n(c) { ++n; }
      ~InFlight() { --n; }
    } in_flight(m_in_flight);
    try {
      if (work) work->wait();
    } catch (const std::exception& e) {
      throw EngineError("comm", protocol::kExitCommunication,
                        "Gloo " + what + " failed: " + e.what() + ". " + describe_lost_peers());
    }
  }

  RendezvousInfo m_info;
  c10::intrusive_ptr<c10d::ProcessGroupGloo> m_pg;
};

}  // namespace

std::unique_ptr<Communicator> make_gloo_communicator(const RendezvousInfo& info) {
  return std::make_unique<GlooCommunicator>(info, rendezvous(info));
}
#else
std::unique_ptr<Communicator> make_gloo_communicator(const RendezvousInfo&) {
  throw unsupported("this libtorch has no Gloo (pip wheels ship no Gloo headers): CPU ranks need Debian's libtorch");
}
#endif

}  // namespace tunebench::engine
