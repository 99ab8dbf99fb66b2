// Picks the Strategy for a config (single, ddp, fsdp).
#pragma once

#include <memory>

#include "core/config/trial_config.h"
#include "core/engine/strategy/strategy.h"

namespace tunebench::engine {

class Communicator;

// Throws EngineError(unsupported) when ddp/fsdp is asked for without a communicator.
std::unique_ptr<Strategy> make_strategy(const config::TrialConfig& config, LlamaModel& model, Communicator* comm,
                                        Timeline& timeline, int world_size);

}  // namespace tunebench::engine
