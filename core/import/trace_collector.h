// TraceCollector: classifies each streamed TraceEvent and keeps the compact records of it.
//
// This is where the names torch.profiler gives things are recognised (docs/IMPORT.md lists every
// rule): ProfilerStep#N, enumerate(DataLoader)#..., Optimizer.step#..., autograd engine
// functions, ops recorded with an autograd sequence number, record_param_comms, CUDA runtime and
// driver launches, kernels, memcpy and memset. Events arrive in file order, which is not time
// order; nothing here depends on the order. It does not decide phases (StepBuilder does).
#pragma once

#include <string>
#include <unordered_map>

#include "core/import/trace_event.h"
#include "core/import/trace_records.h"

namespace tunebench::import {

class TraceCollector {
 public:
  void add(const TraceEvent& event);
  TraceRecords& records() { return m_records; }

  // Bytes per element of a PyTorch dtype name ("Float" 4, "BFloat16" 2, ...); 0 when unknown.
  static int element_bytes(const std::string& dtype);
  // The collective a "Collective name" arg or an NCCL kernel name stands for; Other for
  // send/recv, all-to-all, barrier and anything unrecognised.
  static protocol::Phase collective_phase(const std::string& name);
  // The category as current PyTorch names it ("Operator" of PyTorch 1.8-1.10 -> "cpu_op", ...).
  static const std::string& category(const std::string& cat);
  // The accelerator a category belongs to when it is not a CUDA GPU ("mtia_runtime" -> "MTIA"); "" else.
  static std::string accelerator_of(const std::string& cat);

 private:
  void add_cpu(const TraceEvent& e, int64_t start_ns, int64_t end_ns);
  void add_gpu(const TraceEvent& e, int64_t start_ns, int64_t end_ns);
  CommArgs comm_args(const TraceEvent& e);
  int32_t intern_label(const std::string& name);

  TraceRecords m_records;
  TraceEvent m_legacy;  // an event of a legacy category, renamed (reused, like the reader's)
  std::unordered_map<std::string, int32_t> m_label_ids;
};

}  // namespace tunebench::import
