// The c10d TCPStore every rank meets at, a counted arrival barrier on it that can name how many
// ranks arrived when some never do, and the check that every rank runs rank 0's configuration.
#pragma once

#include <memory>
#include <vector>

#include <torch/csrc/distributed/c10d/TCPStore.hpp>

#include "core/engine/comm/communicator.h"

namespace tunebench::engine {

struct Rendezvous {
  c10::intrusive_ptr<c10d::Store> store;
  std::vector<PeerInfo> peers;  // every rank's host and pid, indexed by rank
};

// Connects (rank 0: hosts) the store, waits until all ranks have checked in, and compares every
// rank's configuration with rank 0's. Throws EngineError("rendezvous") after info.timeout and
// EngineError("config") on every rank when a configuration differs ("rank 1 runs a different
// configuration than rank 0: dim 128 vs 64").
Rendezvous rendezvous(const RendezvousInfo& info);

}  // namespace tunebench::engine
