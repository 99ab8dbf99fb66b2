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
      comm->set_timeline(&timeline);
      if (config.strategy == config::Strategy::Ddp) return std::make_unique<DdpStrategy>(config, model, *comm);
      return std::make_unique<FsdpStrategy>(config, model, *comm);
  }
  throw unsupported("unknown strategy");
}

}  // namespace tunebench::engine
