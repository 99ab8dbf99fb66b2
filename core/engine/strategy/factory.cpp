#include "core/engine/strategy/factory.h"

#include "core/engine/errors.h"
#include "core/engine/strategy/ddp.h"
#include "core/engine/strategy/fsdp.h"

namespace tunebench::engine {

std::unique_ptr<Strategy> make_strategy(const config::TrialConfig& config, LlamaModel& model, Communicator* comm,
                                        Timeline& timeline, int world_size) {
  (void)timeline;
  (void)world_size;
  switch (config.strategy) {
    case config::Strategy::Single: return std::make_unique<SingleStrategy>(model);
    case config::Strategy::Ddp:
    case config::Strategy::Fsdp:
      if (!comm)
        throw unsupported(std::string(config::to_string(config.strategy)) +
                          " needs a process group; start the ranks with tunebench, torchrun or srun");
      // Set-up traffic (DDP's start-up broadcast) belongs to no step: time collectives only after.
      std::unique_ptr<Strategy> strategy;
      if (config.strategy == config::Strategy::Ddp) strategy = std::make_unique<DdpStrategy>(config, model, *comm);
      else strategy = std::make_unique<FsdpStrategy>(config, model, *comm);
      comm->set_timeline(&timeline);
      return strategy;
  }
  throw unsupported("unknown strategy");
}

}  // namespace tunebench::engine
