// The rank's input pipeline: torch::data::DataLoader over a batch dataset of token windows.
// num_workers > 0 runs get_batch on libtorch's loader threads (threads, not processes), which is
// where the per-sample CPU cost and the pinning happen, so the training thread only waits when
// the loader falls behind. That wait is the "data wait" phase of the timeline.
#pragma once

#include <cstdint>
#include <memory>

#include <ATen/ATen.h>

#include "core/config/trial_config.h"

namespace tunebench::engine {

class DataPipeline {
 public:
  // Yields `batches` micro-batches of [micro_batch, seq_len + 1] int64 tokens for `rank` of
  // `world` (ranks see disjoint samples). `pin` page-locks each batch in the loader thread.
  DataPipeline(const config::TrialConfig& config, int rank, int world, int64_t batches, bool pin);
  ~DataPipeline();
  DataPipeline(const DataPipeline&) = delete;
  DataPipeline& operator=(const DataPipeline&) = delete;

  // Blocks until the next micro-batch is ready. Throws EngineError when the data cannot be
  // produced (whether on a loader thread or not: the original exception, never libtorch's
  // "Caught exception in DataLoader worker thread" wrapper), std::out_of_range when all batches
  // were consumed.
  at::Tensor next();

 private:
  struct Impl;
  std::unique_ptr<Impl> m_impl;
};

}  // namespace tunebench::engine
