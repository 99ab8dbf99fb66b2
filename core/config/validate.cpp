// Validation of a TrialConfig: every rule in one place, every problem reported (not just the first).
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstring>

#include "core/config/script.h"
#include "core/config/trial_config.h"
#include "core/protocol/events.h"  // kMaxWorldSize: what an event can carry

namespace tunebench::config {
namespace {
constexpr double kMaxTimeoutS = 7 * 24 * 3600.0;
// FlashAttention-2 and cuDNN's fused attention take head sizes up to 256.
constexpr int64_t kMaxHeadDim = 256;

void validate_benchmark(const TrialConfig& c, std::vector<Problem>& out) {
  auto need = [&](bool ok, const char* key, std::string message) {
    if (!ok) out.push_back({key, std::move(message)});
  };
  auto positive = [&](int64_t v, const char* key, const char* what) {
    need(v > 0, key, std::string(what) + " must be at least 1 (got " + std::to_string(v) + ")");
  };

  // model
  if (c.model != "custom") {
    const auto preset = model_preset(c.model);
    std::string names;
    for (const auto& n : model_preset_names()) names += (names.empty() ? "" : ", ") + n;
    need(preset.has_value(), "model", "unknown model preset '" + c.model + "' (" + names + ")");
    if (preset && *preset != c.dims)
      out.push_back({"model", "dimensions differ from the '" + c.model + "' preset; choose model 'custom' to change them"});
  }
  const ModelDims& d = c.dims;
  positive(d.dim, "dim", "model dimension");
  positive(d.layers, "layers", "layer count");
  positive(d.heads, "heads", "head count");
  positive(d.ffn, "ffn", "FFN size");
  need(d.vocab >= 2, "vocab", "vocabulary must have at least 2 tokens");
  if (d.dim > 0 && d.heads > 0) {
    need(d.dim % d.heads == 0, "heads",
         "dim " + std::to_string(d.dim) + " is not divisible by " + std::to_string(d.heads) + " heads");
    if (d.dim % d.heads == 0) {
      need(d.head_dim() % 2 == 0, "heads",
           "head size " + std::to_string(d.head_dim()) + " (dim / heads) must be even for rotary embeddings");
      need(d.head_dim() <= kMaxHeadDim, "heads",
           "head size " + std::to_string(d.head_dim()) + " (dim / heads) is above " + std::to_string(kMaxHeadDim) +
               ", the largest the fused attention kernels take; use more heads");
    }
  }
  need(d.kv_heads >= 0, "kv_heads", "kv_heads must not be negative (0: as many as heads)");
  if (d.heads > 0 && d.kv_heads > 0)
    need(d.kv_heads <= d.heads && d.heads % d.kv_heads == 0, "kv_heads",
         "kv_heads " + std::to_string(d.kv_heads) + " does not divide heads " + std::to_string(d.heads) +
             ": each key/value head serves heads / kv_heads query heads");
  need(std::isfinite(d.rope_theta) && d.rope_theta > 1.0, "rope_theta",
       "rope_theta must be a finite number above 1 (10000 in LLaMA 2, 500000 in Llama 3)");
  need(!(d.tie_embeddings && c.strategy == Strategy::Fsdp), "tie_embeddings",
       "tied embeddings do not work with FSDP here: the embedding and the output head are sharded as separate "
       "units; untie them or use ddp");

  // data
  positive(c.micro_batch, "micro_batch", "micro-batch");
  need(c.seq_len >= 2, "seq_len", "sequence length must be at least 2 (got " + std::to_string(c.seq_len) + ")");
  positive(c.grad_accum, "grad_accum", "gradient accumulation");
  need(c.samples_per_step >= 0, "samples_per_step", "samples per step must not be negative (0: not counted)");
  need(c.num_workers >= 0 && c.num_workers <= 64, "num_workers", "num_workers must be between 0 and 64");
  need(c.sample_cpu_us >= 0 && c.sample_cpu_us <= 1e6, "sample_cpu_us",
       "per-sample CPU cost must be between 0 and 1,000,000 µs");
  need(c.data != DataSource::File || !c.data_path.empty(), "data_path", "data 'file' needs a token file path");

  // parallelism
  if (c.strategy == Strategy::Single)
    need(c.world_size == 1, "world_size",
         "strategy 'single' runs one rank; set world size 1 or choose ddp/fsdp");
  else
    need(c.world_size >= 2, "world_size",
         std::string(to_string(c.strategy)) + " needs at least 2 ranks (got " + std::to_string(c.world_size) + ")");
  if (c.strategy == Strategy::Fsdp)
    need(c.dims.layers >= 1, "layers", "FSDP wraps one unit per block and needs at least one block");

  // precision & kernels
  need(!(c.amp == Amp::Fp16 && c.device == Device::Cpu), "amp",
       "fp16 autocast with loss scaling needs a GPU; use bf16 on the CPU");
  const bool graph = uses_cuda_graph(c.compile);
  need(!(graph && c.device == Device::Cpu), "compile", "CUDA-graph capture ('compile' graph) needs a GPU");
  need(!graph || c.strategy == Strategy::Single, "compile",
       "CUDA-graph capture runs a single rank; use compile 'fused' with " + std::string(to_string(c.strategy)));
  need(!graph || c.warmup >= 2, "warmup", "CUDA-graph capture follows eager warm-up: use at least 2 warm-up steps");
  need(!(c.amp == Amp::Fp8 && c.device == Device::Cpu), "amp", "fp8 matmuls need a Hopper GPU (H100/H200)");
  need(c.amp != Amp::Fp8 || uses_fused_kernels(c.compile), "amp",
       "fp8 needs compile 'fused' or 'fused+graph': its scaling and casts are fused kernels");
  if (c.amp == Amp::Fp8) {
    // at::_scaled_mm needs every matmul dimension to be a multiple of 16.
    const bool dims16 = c.dims.dim % 16 == 0 && c.dims.ffn % 16 == 0 && c.dims.qkv_dim() % 16 == 0 &&
                        (c.micro_batch * c.seq_len) % 16 == 0;
    need(dims16, "amp",
         "fp8 needs dim, ffn, the q/k/v projection (dim + 2 x kv_heads x head size) and micro_batch x seq_len "
         "to be multiples of 16");
  }
  // Attention kernels: the fused ones run on a GPU, flash and cuDNN only in 16 bits.
  if (c.attention != Attention::Auto && c.attention != Attention::Math)
    need(c.device != Device::Cpu, "attention",
         "the " + std::string(to_string(c.attention)) + " attention kernel needs a GPU; the CPU runs 'math'");
  const bool sixteen_bit = c.amp == Amp::Bf16 || c.amp == Amp::Fp16 || c.amp == Amp::PureBf16 || c.amp == Amp::Fp8;
  if (c.attention == Attention::Flash || c.attention == Attention::Cudnn)
    need(sixteen_bit, "attention",
         std::string(to_string(c.attention)) + " attention runs bf16/fp16 only; with amp " +
             std::string(to_string(c.amp)) + " use 'efficient' or 'math'");
  // In 16 bits every kernel is handed the head size padded to a multiple of 8 (predict/attention);
  // fp32 hands it as it is, and the memory-efficient kernel reads it in fours.
  if (c.attention == Attention::Efficient && !sixteen_bit && d.heads > 0 && d.dim % d.heads == 0)
    need(d.head_dim() % 4 == 0, "attention",
         "the memory-efficient kernel in fp32 needs a head size that is a multiple of 4 (got " +
             std::to_string(d.head_dim()) + ")");
  need(!(c.pin_memory && c.device == Device::Cpu), "pin_memory", "pinned memory only helps copies to a GPU");
  need(std::isfinite(c.lr) && c.lr > 0, "lr", "learning rate must be positive");
  need(std::isfinite(c.weight_decay) && c.weight_decay >= 0, "weight_decay", "weight decay must not be negative");
  need(std::isfinite(c.grad_clip) && c.grad_clip >= 0, "grad_clip",
       "gradient clipping norm must not be negative (0 = off)");
  if (c.optimizer_overlap) {
    // Each needs every gradient (or the reduced ones) before the first update can start.
    need(c.strategy == Strategy::Single, "optimizer_overlap",
         "optimizer_overlap runs one rank: " + std::string(to_string(c.strategy)) +
             " must reduce the gradients before any update");
    need(c.grad_clip == 0, "optimizer_overlap",
         "optimizer_overlap cannot clip: the global norm needs every gradient first (set grad_clip 0)");
    need(c.amp != Amp::Fp16, "optimizer_overlap",
         "optimizer_overlap cannot skip an fp16 step: loss scaling checks every gradient first (use bf16)");
    need(!graph, "optimizer_overlap", "optimizer_overlap does not run inside a CUDA graph (use compile 'fused')");
  }

  if (c.grad_dtype != DType::Fp32) {
    const std::string why = "grad_dtype bf16 (the blocks' matmul weights' gradients in bf16) ";
    need(c.grad_dtype == DType::Bf16, "grad_dtype", "grad_dtype is fp32 or bf16");
    need(c.compile == Compile::Fused && c.amp == Amp::Bf16, "grad_dtype",
         why + "runs with compile 'fused' and amp bf16 (fp8's linears keep their own)");
    need(c.strategy == Strategy::Single, "grad_dtype", why + "runs one rank: ddp and fsdp reduce fp32 gradients");
    need(c.grad_accum == 1, "grad_dtype", why + "needs grad_accum 1: micro-steps add into fp32 gradients");
    need(!c.optimizer_overlap, "grad_dtype", why + "does not run with optimizer_overlap");
    need(c.optimizer == Optimizer::AdamW && c.fused_optimizer, "grad_dtype",
         why + "is read by the fused AdamW kernel: optimizer adamw, fused_optimizer on");
  }

  // communication
  need(c.bucket_mb > 0 && c.bucket_mb <= 16384, "bucket_mb", "bucket size must be between 0 and 16384 MiB");
  need(c.first_bucket_mb > 0 && c.first_bucket_mb <= 16384, "first_bucket_mb",
       "first bucket size must be between 0 and 16384 MiB");
  need(c.compression == Compression::None || c.strategy == Strategy::Ddp, "compression",
       "gradient compression is a DDP communication hook; use fsdp_reduce_dtype for FSDP");

  need(c.compile != Compile::Torch, "compile",
       "compile 'torch' is torch.compile of your own script; the benchmark's are fused, graph and fused+graph");
}

void validate_trial(const TrialConfig& c, std::vector<Problem>& out) {
  auto need = [&](bool ok, const char* key, std::string message) {
    if (!ok) out.push_back({key, std::move(message)});
  };
  auto positive = [&](int64_t v, const char* key, const char* what) {
    need(v > 0, key, std::string(what) + " must be at least 1 (got " + std::to_string(v) + ")");
  };
  need(c.world_size <= protocol::kMaxWorldSize, "world_size",
       "world size above " + std::to_string(protocol::kMaxWorldSize) + " is not supported");
  for (const auto& [name, value] : c.nccl_env) {
    const bool prefix = name.rfind("NCCL_", 0) == 0 || name.rfind("TORCH_NCCL_", 0) == 0;
    const bool word =
        std::all_of(name.begin(), name.end(), [](unsigned char c) { return std::isalnum(c) || c == '_'; });
    need(prefix && word, "nccl_env",
         "'" + name + "' is not an NCCL variable (NCCL_* or TORCH_NCCL_*, letters, digits and _)");
    need(value.find_first_of(std::string("\n\0", 2)) == std::string::npos, "nccl_env",
         "value of " + name + " contains a newline or NUL byte");
  }

  // run length
  positive(c.steps, "steps", "steps");
  need(c.warmup >= 0, "warmup", "warm-up steps must not be negative");
  need(c.warmup < c.steps, "warmup",
       "warm-up (" + std::to_string(c.warmup) + ") must leave at least one measured step of " +
           std::to_string(c.steps));
  need(c.kernel_sample_every >= 0 && c.kernel_sample_every <= 1000000, "kernel_sample_every",
       "kernel sampling period must be between 0 (off) and 1000000 steps");
  // A period of 0 turns sampling off whatever the number of sampled steps says (the default 2 stays).
  need(c.kernel_sample_steps >= 0 && (c.kernel_sample_every == 0 || c.kernel_sample_steps <= c.kernel_sample_every),
       "kernel_sample_steps",
       "kernel-sampled steps must be between 0 and the sampling period (" + std::to_string(c.kernel_sample_every) +
           ")");
  need(c.gpu_sample_hz > 0 && c.gpu_sample_hz <= 1000, "gpu_sample_hz", "sampling rate must be in (0, 1000] Hz");
  // Bounded, so that no clock arithmetic on them can overflow (1e30 s used to end a run at once).
  need(c.rendezvous_timeout_s > 0 && c.rendezvous_timeout_s <= kMaxTimeoutS, "rendezvous_timeout_s",
       "rendezvous timeout must be between 0 and 604800 s (one week)");
  need(c.collective_timeout_s > 0 && c.collective_timeout_s <= kMaxTimeoutS, "collective_timeout_s",
       "collective timeout must be between 0 and 604800 s (one week)");

  // where
  // Text that ends up in a shell command line on another machine: printable, no newline or NUL.
  auto printable = [&](const std::string& v, const char* key, const std::string& what) {
    bool ok = true;
    for (unsigned char ch : v) ok = ok && ch >= 0x20 && ch != 0x7f;
    need(ok, key, what + " contains a control character");
  };
  auto env_ok = [&](const std::map<std::string, std::string>& env, const char* key) {
    for (const auto& [name, value] : env) {
      bool ident = !name.empty() && !(name[0] >= '0' && name[0] <= '9');
      for (char ch : name) ident = ident && (std::isalnum(static_cast<unsigned char>(ch)) || ch == '_');
      need(ident, key, "'" + name + "' is not a variable name (letters, digits, '_')");
      printable(value, key, "value of " + name);
    }
  };
  env_ok(c.remote_env, "remote_env");
  printable(c.remote_worker, "remote_worker", "the remote worker path");
  if (c.launcher != Launcher::Local)
    need(!c.remote_worker.empty(), "remote_worker", "name the worker program on the remote machines");
  if (c.launcher == Launcher::Ssh) {
    need(!c.ssh_hosts.empty(), "ssh_hosts", "the ssh launcher needs at least one host");
    for (const auto& h : c.ssh_hosts) {
      need(!h.host.empty() && h.host[0] != '-' && h.host.find_first_of(" \t'\"\\;@") == std::string::npos,
           "ssh_hosts", "'" + h.host + "' is not a host name");
      need(h.user.empty() || (h.user[0] != '-' && h.user.find_first_of(" \t'\"\\;@") == std::string::npos),
           "ssh_hosts", "'" + h.user + "' is not a user name");
      need(h.ranks >= 1, "ssh_hosts", "every host runs at least one rank");
      need(h.port >= 0 && h.port <= 65535, "ssh_hosts", "port of " + h.host + " must be between 1 and 65535");
      printable(h.worker, "ssh_hosts", "the worker path of " + h.host);
      env_ok(h.env, "ssh_hosts");
    }
    if (!c.ssh_hosts.empty())
      need(launcher_ranks(c) == c.world_size, "ssh_hosts",
           "the hosts' ranks add up to " + std::to_string(launcher_ranks(c)) + ", the world size is " +
               std::to_string(c.world_size));
    need(!c.ssh_command.empty() && c.ssh_command.find_first_not_of(' ') != std::string::npos, "ssh_command",
         "name the ssh client (ssh)");
    printable(c.ssh_command, "ssh_command", "the ssh command");
    printable(c.master_addr, "master_addr", "the rendezvous address");
  }
  if (c.launcher == Launcher::Slurm) {
    need(c.slurm_nodes >= 1, "slurm_nodes", "SLURM needs at least one node");
    if (c.slurm_nodes >= 1)
      need(c.world_size % c.slurm_nodes == 0, "slurm_nodes",
           "world size " + std::to_string(c.world_size) + " does not split evenly over " +
               std::to_string(c.slurm_nodes) + " nodes");
    need(c.slurm_gpus_per_node >= 0, "slurm_gpus_per_node", "GPUs per node must not be negative");
    for (auto [v, key] : {std::pair{&c.slurm_partition, "slurm_partition"}, {&c.slurm_account, "slurm_account"},
                          {&c.slurm_time, "slurm_time"}}) {
      bool ok = true;
      for (char ch : *v) ok = ok && (std::isalnum(static_cast<unsigned char>(ch)) || (ch != 0 && std::strchr("-_.:,+", ch)));
      need(ok, key, "'" + *v + "' may hold only letters, digits and - _ . : , +");
    }
    printable(c.slurm_dir, "slurm_dir", "the shared folder");
    printable(c.event_host, "event_host", "the event address");
  }
}

}  // namespace

std::vector<Problem> validate(const TrialConfig& c) {
  std::vector<Problem> out;
  // A script has its own model, data and wrapping: the benchmark's rules for them do not apply.
  if (is_script(c)) {
    validate_script(c, out);
  } else {
    validate_benchmark(c, out);
  }
  validate_trial(c, out);
  return out;
}

std::string describe(const std::vector<Problem>& problems) {
  std::string s;
  for (const auto& p : problems) s += (p.key.empty() ? std::string() : p.key + ": ") + p.message + "\n";
  return s;
}

}  // namespace tunebench::config
