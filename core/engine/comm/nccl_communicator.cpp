// NCCL called directly (CUDA builds). Every collective runs on the communicator's own
// high-priority stream after an event from the caller's stream, between two timeline events on
// that stream: the comm lane shows exactly when the collective ran. wait() makes the caller's
// current stream wait for the collective's end event; the host never blocks.
#include "core/engine/comm/communicator.h"

#include <cstdlib>
#include <cstring>

#include "core/engine/comm/rendezvous.h"
#include "core/engine/errors.h"
#include "core/engine/timing/timeline.h"

#ifdef TUNEBENCH_WITH_CUDA
#include <ATen/cuda/CUDAEvent.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <nccl.h>
#endif

namespace tunebench::engine {

#ifdef TUNEBENCH_WITH_CUDA
namespace {

void check(ncclResult_t rc, const std::string& what) {
  if (rc != ncclSuccess && rc != ncclInProgress)
    throw EngineError("nccl", protocol::kExitCommunication, what + " failed: " + ncclGetErrorString(rc));
}

ncclDataType_t nccl_type(at::ScalarType t) {
  switch (t) {
    case at::kFloat: return ncclFloat32;
    case at::kBFloat16: return ncclBfloat16;
    case at::kHalf: return ncclFloat16;
    case at::kDouble: return ncclFloat64;
    default: throw EngineError("internal", protocol::kExitInternal, "NCCL: unsupported dtype");
  }
}

class NcclWork final : public CommWork {
 public:
  explicit NcclWork(at::cuda::CUDAEvent&& done) : m_done(std::move(done)) {}
  void wait() override { m_done.block(c10::cuda::getCurrentCUDAStream()); }

 private:
  at::cuda::CUDAEvent m_done;
};

class NcclCommunicator final : public Communicator {
 public:
  NcclCommunicator(const RendezvousInfo& info, c10::Device device)
      : m_info(info),
        m_device(device),
        // High priority, so NCCL's blocks start as soon as SMs free up (7B DDP fused: 268.2 ms
        // against 271.6 at normal priority; docs/history/benchmarks-2026-11.md, "Two GPUs: compile
        // fused with DDP and FSDP").
        m_stream(c10::cuda::getStreamFromPool(/*isHighPriority=*/true, device.index())) {
    Rendezvous rv = rendezvous(info);
    m_peers = std::move(rv.peers);
    auto store = std::move(rv.store);
    ncclUniqueId id;
    if (info.rank == 0) {
      check(ncclGetUniqueId(&id), "ncclGetUniqueId");
      store->set("tunebench/nccl_id", std::vector<uint8_t>(reinterpret_cast<uint8_t*>(&id),
                                                            reinterpret_cast<uint8_t*>(&id) + sizeof(id)));
    }
    const std::vector<uint8_t> bytes = store->get("tunebench/nccl_id");
    if (bytes.size() != sizeof(id)) throw EngineError("nccl", protocol::kExitCommunication, "bad NCCL id in store");
    std::memcpy(&id, bytes.data(), sizeof(id));
    c10::cuda::CUDAGuard guard(device);
    check(ncclCommInitRank(&m_comm, info.world_size, id, info.rank), "ncclCommInitRank");
    m_store = store;  // keep rank 0's server alive for the trial
  }
  ~NcclCommunicator() override {
    if (m_comm) ncclCommDestroy(m_comm);
  }

  int rank() const override { return m_info.rank; }
  int size() const override { return m_info.world_size; }
  std::string backend() const override { return "nccl"; }
  std::string version() const override {
    int v = 0;
    ncclGetVersion(&v);
    return std::to_string(v / 10000) + "." + std::to_string((v % 10000) / 100) + "." + std::to_string(v % 100);
  }

  // A collective queued or running on the communication stream.
  bool collective_in_flight() const override { return cudaStreamQuery(m_stream.stream()) == cudaErrorNotReady; }

  std::unique_ptr<CommWork> all_reduce_avg(const at::Tensor& t, const std::string& label) override {
    return launch(protocol::Phase::AllReduce, label, bytes(t), {t}, [&](cudaStream_t s) {
      check(ncclAllReduce(t.data_ptr(), t.data_ptr(), static_cast<size_t>(t.numel()), nccl_type(t.scalar_type()),
                          ncclAvg, m_comm, s),
            "all-reduce " + label);
    });
  }

  std::unique_ptr<CommWork> all_gather(const at::Tensor& out, const at::Tensor& shard, const std::string& label) override {
    return launch(protocol::Phase::AllGather, label, bytes(out), {out, shard}, [&](cudaStream_t s) {
      check(ncclAllGather(shard.data_ptr(), out.data_ptr(), static_cast<size_t>(shard.numel()),
                          nccl_type(shard.scalar_type()), m_comm, s),
            "all-gather " + label);
    });
  }

  std::unique_ptr<CommWork> reduce_scatter_avg(const at::Tensor& out, const at::Tensor& input,
                                               const std::string& label) override {
    return launch(protocol::Phase::ReduceScatter, label, bytes(input), {out, input}, [&](cudaStream_t s) {
      check(ncclReduceScatter(input.data_ptr(), out.data_ptr(), static_cast<size_t>(out.numel()),
                              nccl_type(input.scalar_type()), ncclAvg, m_comm, s),
            "reduce-scatter " + label);
    });
  }

  void broadcast(const at::Tensor& t) override {
    launch(protocol::Phase::Broadcast, "parameters", bytes(t), {t}, [&](cudaStream_t s) {
      check(ncclBroadcast(t.data_ptr(), t.data_ptr(), static_cast<size_t>(t.numel()), nccl_type(t.scalar_type()), 0,
                          m_comm, s),
            "broadcast");
    })->wait();
  }

  void barrier() override {
    at::Tensor one = at::ones({1}, at::TensorOptions().device(m_device).dtype(at::kFloat));
    all_reduce_avg(one, "barrier")->wait();
    c10::cuda::getCurrentCUDAStream().synchronize();
  }

 private:
  static int64_t bytes(const at::Tensor& t) { return t.numel() * static_cast<int64_t>(t.element_size()); }

  template <class F>
  std::unique_ptr<CommWork> launch(protocol::Phase phase, const std::string& label, int64_t nbytes,
                                   std::initializer_list<at::Tensor> tensors, F&& op) {
    if (label != "barrier") delay_arrival();
    const auto caller = c10::cuda::getCurrentCUDAStream(m_device.index());
    at::cuda::CUDAEvent ready;
    ready.record(caller);
    ready.block(m_stream);  // the collective starts after the caller's queued work
    const int h = m_timeline ? m_timeline->begin(phase, label, nbytes, m_stream.stream()) : -1;
    op(m_stream.stream());
    if (m_timeline) m_timeline->end(h, m_stream.stream());
    // The caching allocator must not hand these buffers out again before the collective is done.
    for (const auto& t : tensors) c10::cuda::CUDACachingAllocator::recordStream(t.storage().data_ptr(), m_stream);
    at::cuda::CUDAEvent done;
    done.record(m_stream);
    return std::make_unique<NcclWork>(std::move(done));
  }

  RendezvousInfo m_info;
  c10::Device m_device;
  c10::cuda::CUDAStream m_stream;
  ncclComm_t m_comm = nullptr;
  c10::intrusive_ptr<c10d::Store> m_store;
};

}  // namespace

std::unique_ptr<Communicator> make_nccl_communicator(const RendezvousInfo& info, c10::Device device) {
  return std::make_unique<NcclCommunicator>(info, device);
}
#else
std::unique_ptr<Communicator> make_nccl_communicator(const RendezvousInfo&, c10::Device) {
  throw unsupported("this worker was built without CUDA/NCCL");
}
#endif

std::unique_ptr<Communicator> make_gloo_communicator(const RendezvousInfo& info);

std::unique_ptr<Communicator> make_communicator(const RendezvousInfo& info, c10::Device device) {
  if (device.is_cuda()) return make_nccl_communicator(info, device);
  return make_gloo_communicator(info);
}

}  // namespace tunebench::engine
