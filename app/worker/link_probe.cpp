#include "link_probe.h"

#include <cstdio>
#include <iostream>

#include "core/engine/comm/communicator.h"
#include "core/engine/comm/link_probe.h"
#include "core/engine/device.h"
#include "core/protocol/event_writer.h"
#include "core/protocol/exit_codes.h"

namespace tunebench::worker {

int run_link_probe(const WorkerOptions& options, engine::Communicator& comm, const engine::DeviceContext& device,
                   protocol::EventWriter& writer, const std::function<void()>& progress) {
  engine::LinkProbeOptions o;
  o.min_bytes = static_cast<int64_t>(options.probe_min_mb * 1024 * 1024);
  o.max_bytes = static_cast<int64_t>(options.probe_max_mb * 1024 * 1024);
  o.dtype = options.probe_dtype == "bf16" ? at::kBFloat16 : at::kFloat;
  const int rank = comm.rank();
  engine::probe_all_reduce(comm, device, o, [&](protocol::LinkProbe p) {
    if (rank == 0) {
      char line[160];
      std::snprintf(line, sizeof(line), "all-reduce %10lld B: %9.1f us, busbw %7.2f GB/s",
                    static_cast<long long>(p.bytes), p.time_us, p.busbw_gbps);
      std::cerr << "[tunebench-worker rank 0] " << line << "\n";
    }
    writer.write_payload(std::move(p));
    progress();
  });
  protocol::Done done;
  done.exit_code = protocol::kExitOk;
  writer.write_payload(done);
  return protocol::kExitOk;
}

}  // namespace tunebench::worker
