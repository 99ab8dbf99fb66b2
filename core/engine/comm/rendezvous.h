// The c10d TCPStore every rank meets at, and a counted arrival barrier on it that can name how
// many ranks arrived when some never do.
#pragma once

#include <memory>

#include <torch/csrc/distributed/c10d/TCPStore.hpp>

#include "core/engine/comm/communicator.h"

namespace tunebench::engine {

// Connects (rank 0: hosts) the store and waits until all ranks have checked in. Throws
// EngineError("rendezvous") after info.timeout.
c10::intrusive_ptr<c10d::Store> rendezvous(const RendezvousInfo& info);

}  // namespace tunebench::engine
