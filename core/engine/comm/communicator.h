// Collectives between the ranks of a trial, with the timing the timeline needs.
//
// Two implementations: NCCL called directly on the worker's own communication stream (CUDA
// builds), so each collective has exact start and end events; and Gloo through libtorch's c10d
// (CPU builds; what CI exercises), where all-gather is done in list form into views of one buffer,
// and reduce-scatter and averaging are emulated (docs/ARCHITECTURE.md, "libtorch 1.13 and 2.11":
// collectives).
// Every collective is asynchronous: it returns a CommWork whose wait() orders the caller's
// current stream after the collective (GPU) or blocks until it completed (CPU).
#pragma once

#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <ATen/ATen.h>

#include "core/protocol/events.h"

namespace tunebench::engine {

class Timeline;

class CommWork {
 public:
  virtual ~CommWork() = default;
  // Makes the current stream wait for the collective (GPU), or blocks until done (CPU).
  virtual void wait() = 0;
};

struct RendezvousInfo {
  int rank = 0;
  int world_size = 1;
  int local_rank = 0;
  std::string master_addr = "127.0.0.1";
  int master_port = 29500;
  std::chrono::milliseconds timeout{120000};            // for the ranks to find each other
  std::chrono::milliseconds collective_timeout{300000};  // for one collective (Gloo)
  std::string host;         // this rank's host name, so the others can name it when it is lost
  std::string config_json;  // the TrialConfig as run: ranks that disagree stop at the rendezvous
};

// Who a rank is, learnt at the rendezvous.
struct PeerInfo {
  std::string host;
  int64_t pid = 0;
};

class Communicator {
 public:
  virtual ~Communicator() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  virtual std::string backend() const = 0;  // "nccl" | "gloo"
  virtual std::string version() const = 0;  // e.g. NCCL "2.28.9"

  // In-place average of `t` over all ranks (sum, then divide by the world size).
  virtual std::unique_ptr<CommWork> all_reduce_avg(const at::Tensor& t, const std::string& label) = 0;
  // `out` (world * shard.numel()) receives every rank's `shard`, rank order.
  virtual std::unique_ptr<CommWork> all_gather(const at::Tensor& out, const at::Tensor& shard,
                                               const std::string& label) = 0;
  // `out` (input.numel() / world) receives this rank's slice of the sum of `input` over ranks,
  // divided by the world size (an averaged reduce-scatter, as FSDP's gradient reduction).
  virtual std::unique_ptr<CommWork> reduce_scatter_avg(const at::Tensor& out, const at::Tensor& input,
                                                       const std::string& label) = 0;
  // Blocking broadcast from rank 0 (start-up only).
  virtual void broadcast(const at::Tensor& t) = 0;
  virtual void barrier() = 0;

  // Where collectives are timed. Set once by the trainer.
  void set_timeline(Timeline* timeline) { m_timeline = timeline; }
  // True while this rank is inside a collective (Gloo: blocked in it; NCCL: its stream still has a
  // collective queued or running). The watchdog's words: a rank that times out inside a collective
  // waited for the others, one that times out outside any stalled itself. Safe from any thread.
  virtual bool collective_in_flight() const { return m_in_flight.load() > 0; }

  // TUNEBENCH_COLLECTIVE_DELAY (switches.h): sleep this long before each collective this rank
  // starts, before its timing begins, so that it arrives last on purpose. 0: off.
  void set_arrival_delay_ms(double ms) { m_arrival_delay_ms = ms; }

  // After a collective failed: which rank was lost. Peers on this host are checked (their process
  // is gone or a zombie): "rank 1 (pid 4711 on node-a) has exited". Others are named as unknown.
  std::string describe_lost_peers() const;

 protected:
  // The implementations call this first in every collective (not in broadcast and barrier).
  void delay_arrival() const {
    if (m_arrival_delay_ms > 0) std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(m_arrival_delay_ms));
  }

  Timeline* m_timeline = nullptr;
  double m_arrival_delay_ms = 0;
  mutable std::atomic<int> m_in_flight{0};  // blocking collectives in progress (Gloo)
  std::vector<PeerInfo> m_peers;  // indexed by rank, from the rendezvous
};

// Joins the other ranks (c10d TCPStore at master_addr:master_port; rank 0 hosts it) and creates
// the communicator for `device` (NCCL on CUDA, Gloo on the CPU). Throws EngineError kind
// "rendezvous" (exit 4) when not every rank arrives within the timeout, naming how many did, and
// kind "config" (exit 2) on every rank when a rank's configuration differs from rank 0's.
std::unique_ptr<Communicator> make_communicator(const RendezvousInfo& info, c10::Device device);

}  // namespace tunebench::engine
