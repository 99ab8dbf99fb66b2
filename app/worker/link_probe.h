// The worker's link-probe mode (`tunebench-worker --probe-link`): after the ranks met and said
// hello, all-reduce a sweep of sizes on their real transport and report each as a `probe` event,
// then `done`. The session stores the points with the trial's environment, and predictions on that
// machine use them for its link (core/predict/link_model.h). The sweep itself is
// core/engine/comm/link_probe.h.
#pragma once

#include <functional>

#include "worker_options.h"

namespace tunebench::protocol {
class EventWriter;
}
namespace tunebench::engine {
class Communicator;
class DeviceContext;
}  // namespace tunebench::engine

namespace tunebench::worker {

// Runs the probe and writes its events and `done`; returns the exit code. `progress` is called
// after every point (the watchdog). Throws EngineError on communication failures.
int run_link_probe(const WorkerOptions& options, engine::Communicator& comm, const engine::DeviceContext& device,
                   protocol::EventWriter& writer, const std::function<void()>& progress);

}  // namespace tunebench::worker
