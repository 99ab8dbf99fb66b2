// The hardware catalogue: GPUs (memory, dense peaks, HBM bandwidth) and interconnects (bus
// bandwidth, latency) that predictions run against, with the source of every figure.
//
// The data is core/hardware/hardware_catalogue.json, compiled into the binary at build time
// (embed_catalogue.cmake); load_catalogue() reads an edited copy instead. It is the single table
// of GPU peaks: predictions (core/predict) and MFU (mfu_peak_tflops: the worker's summary and
// core/analysis) all read it. An unknown device is nullptr, never a guess.
// Deliberately absent: clocks, power limits, sparsity (all peaks are dense).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tunebench::hardware {

struct GpuSpec {
  std::string id;                     // "h200", "rtx4090": what --gpu takes
  std::string name;                   // "NVIDIA H200 SXM 141GB"
  std::vector<std::string> match;     // lower-case words that must all occur in the NVML name
  int64_t memory_bytes = 0;           // NVML total where known, else nominal
  std::optional<double> bf16_tflops;  // dense, FP32 accumulate
  std::optional<double> fp16_tflops;
  std::optional<double> fp8_tflops;
  std::optional<double> tf32_tflops;
  std::optional<double> fp32_tflops;  // non-tensor FP32
  double hbm_gbps = 0;                // GB/s (1e9)
  int sms = 0;                        // streaming multiprocessors
  std::string default_link;           // link id when several of these GPUs share a host
  int pcie_gen = 4;                   // host interface: NCCL's path when peer-to-peer is disabled
  std::string source;
};

struct LinkSpec {
  std::string id;  // "nvlink4", "pcie4-nop2p": what --link takes
  std::string name;
  double busbw_gbps = 0;  // nccl-tests all-reduce bus bandwidth, large messages
  double alpha_us = 0;    // per-collective latency (alpha-beta model)
  int nccl_channels = 0;  // SMs a running collective occupies
  std::string source;
};

struct Constant {
  double value = 0;
  std::string source;
};

struct Catalogue {
  std::vector<GpuSpec> gpus;  // in matching order: more specific names first
  std::vector<LinkSpec> links;
  std::map<std::string, Constant> constants;
  std::string origin;  // "built in" or the file it was read from

  // A constant by name; throws std::out_of_range naming it when the catalogue lacks it.
  double constant(const std::string& name) const;
};

// The catalogue compiled into this binary (parsed once).
const Catalogue& catalogue();
// Parses catalogue JSON text; throws std::runtime_error with the offending entry on bad data.
Catalogue parse_catalogue(std::string_view json_text, std::string origin);
// Reads and parses a catalogue file (throws std::runtime_error).
Catalogue load_catalogue(const std::string& path);

// The GPU for a device name as NVML reports it ("NVIDIA GeForce RTX 4090"), or for a catalogue id
// ("rtx4090"). Case-insensitive; every word of an entry's `match` must occur as a whole word.
// nullptr when unknown (the CPU included).
const GpuSpec* find_gpu(std::string_view device_name_or_id, const Catalogue& cat = catalogue());
const LinkSpec* find_link(std::string_view id, const Catalogue& cat = catalogue());

// The link NCCL uses between these GPUs on one host under a config's NCCL variables:
// NCCL_P2P_DISABLE=1 sends through host memory over PCIe (and NCCL_SHM_DISABLE=1 as well, through
// sockets); otherwise the GPU's default link. nullptr when the catalogue lacks it.
const LinkSpec* implied_link(const GpuSpec& gpu, const std::map<std::string, std::string>& nccl_env,
                             const Catalogue& cat = catalogue());

// Dense tensor peak in TFLOP/s (1e12) for a compute dtype: "bf16", "fp16", "fp8", "tf32", "fp32".
std::optional<double> peak_tflops(const GpuSpec& gpu, std::string_view dtype);

// The peak MFU is measured against: the dense bf16 tensor peak (FP32 accumulate) of a device named
// as NVML reports it, whatever precision the trial ran in (as torchtitan does). nullopt for an
// unknown device, the CPU, or a GPU without bf16 tensor cores: no peak, no MFU, never a guess.
// The worker's done summary and core/analysis both ask this one function.
std::optional<double> mfu_peak_tflops(std::string_view device_name, const Catalogue& cat = catalogue());

}  // namespace tunebench::hardware
