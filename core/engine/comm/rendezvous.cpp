#include "core/engine/comm/rendezvous.h"

#include <thread>

#include "core/engine/errors.h"

namespace tunebench::engine {

c10::intrusive_ptr<c10d::Store> rendezvous(const RendezvousInfo& info) {
  const auto deadline = std::chrono::steady_clock::now() + info.timeout;
  auto fail = [&](const std::string& what) {
    return EngineError("rendezvous", protocol::kExitCommunication,
                       "rendezvous at " + info.master_addr + ":" + std::to_string(info.master_port) + " failed: " + what,
                       {{"world_size", info.world_size}, {"rank", info.rank}});
  };
  c10d::TCPStoreOptions opts;
  opts.port = static_cast<std::uint16_t>(info.master_port);
  opts.isServer = info.rank == 0;
  opts.numWorkers = static_cast<std::size_t>(info.world_size);
  opts.waitWorkers = false;  // we count arrivals ourselves, to say how many came
  opts.timeout = info.timeout;
  c10::intrusive_ptr<c10d::Store> store;
  try {
    store = c10::make_intrusive<c10d::TCPStore>(info.master_addr, opts);
  } catch (const std::exception& e) {
    throw fail(info.rank == 0 ? std::string("cannot host the store: ") + e.what()
                              : std::string("cannot reach rank 0's store: ") + e.what());
  }
  // Counted arrival: every rank adds 1, then waits for the total.
  int64_t arrived = 0;
  try {
    arrived = store->add("tunebench/arrived", 1);
    while (arrived < info.world_size) {
      if (std::chrono::steady_clock::now() > deadline) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      arrived = store->add("tunebench/arrived", 0);
    }
  } catch (const std::exception& e) {
    throw fail(std::string("store connection lost: ") + e.what());
  }
  if (arrived < info.world_size)
    throw fail("only " + std::to_string(arrived) + " of " + std::to_string(info.world_size) + " ranks arrived within " +
               std::to_string(info.timeout.count() / 1000) + " s");
  return store;
}

}  // namespace tunebench::engine
