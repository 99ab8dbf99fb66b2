// StepBuilder: one rank's trace records -> protocol steps with phase intervals on three lanes.
//
// Every rule is written down in docs/IMPORT.md; in short:
//   - steps are the ProfilerStep#N spans (none: the whole window is one step, with a warning);
//   - a GPU activity belongs to the step during which its CUDA launch ran (correlation id);
//   - its phase comes from the CPU spans open around that launch on the launching thread:
//     recomputed forward op > autograd engine function (backward) > Optimizer.step / zero_grad >
//     before the step's first backward (forward) > other;
//   - NCCL kernels go to the comm lane with their collective, bytes and group size; host-to-device
//     copies outside backward and optimizer, and the DataLoader's __next__, to the host lane;
//   - GPU busy, the compute lane (the time compute kernels ran, by phase) and the GPU-idle gaps
//     with their causes are metrics::summarise_gpu_activity's, as for the worker's kernel-sampled
//     steps: every imported step is a sampled step.
// It does not read files (TorchTraceReader does) and writes nothing.
#pragma once

#include "core/import/rank_trace.h"
#include "core/import/trace_event.h"
#include "core/import/trace_records.h"

namespace tunebench::import {

class StepBuilder {
 public:
  StepBuilder(TraceRecords& records, const TraceHeader& header) : m_records(records), m_header(header) {}
  // Fills out.steps, out.hello (all but its config), out.warnings and out.known. Throws
  // TraceError (a sentence without the file name) when there is nothing to import.
  void build(RankTrace& out);

 private:
  void check_content() const;
  void fill_hello(RankTrace& out, int device_index) const;
  void fill_known(RankTrace& out, bool recompute_seen) const;

  TraceRecords& m_records;
  const TraceHeader& m_header;
};

}  // namespace tunebench::import
