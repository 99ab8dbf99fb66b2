// TrialConfig: every knob of one benchmark trial, with defaults, presets, JSON and validation.
//
// This is the one place where knobs are defined and checked (torchtitan's ParallelDims idea):
// the GUI form, the CLI, the worker's flags and the session store all go through it. The JSON
// keys are the names users see; the worker's flag for a key is "--" + key with '_' -> '-'.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace tunebench::config {

enum class Strategy { Single, Ddp, Fsdp };
enum class Device { Auto, Cpu, Cuda };
// Precision modes. Fp32: full fp32; Tf32: fp32 with TF32 matmuls; Bf16/Fp16: fp32 master weights
// with autocast (fp16 adds dynamic loss scaling); PureBf16: parameters, grads and optimizer in bf16.
// Fp8: the transformer blocks' matmuls in float8 (e4m3 forward, e5m2 gradients, per-tensor delayed
// scaling), everything else as Bf16 (Hopper GPUs).
enum class Amp { Fp32, Tf32, Bf16, Fp16, PureBf16, Fp8 };
// What `compile` does (libtorch has no torch.compile): Fused runs the model's elementwise chains
// (RMSNorm + residual add, rotary embedding, SwiGLU, linear + cross-entropy) as fused CUDA kernels
// on every strategy; Graph captures the whole step into a CUDA graph (single rank); FusedGraph
// does both. Stored configs of older versions held true/false: true meant Graph.
// Torch: torch.compile of the outermost module of the user's own script (script trials only).
enum class Compile { Off, Fused, Graph, FusedGraph, Torch };
inline bool uses_fused_kernels(Compile c) { return c == Compile::Fused || c == Compile::FusedGraph; }
inline bool uses_cuda_graph(Compile c) { return c == Compile::Graph || c == Compile::FusedGraph; }
// The scaled-dot-product attention kernel. Auto picks by head size, dtype and device
// (core/predict/attention.h: attention_backend); the others force one and are refused before
// launch where it cannot run. Cudnn: cuDNN's fused attention; Flash: FlashAttention-2;
// Efficient: the memory-efficient (CUTLASS) kernel, the only fused one for fp32; Math: the
// composite ops (what the CPU runs).
enum class Attention { Auto, Flash, Cudnn, Efficient, Math };
enum class DataSource { Synthetic, File };
enum class TokenDtype { Uint16, Uint32 };
enum class Optimizer { AdamW, Sgd };
enum class Compression { None, Fp16, Bf16 };
// FullShard frees gathered parameters after forward and gathers again in backward (ZeRO-3);
// ShardGradOp keeps them until backward (ZeRO-2).
enum class FsdpMode { FullShard, ShardGradOp };
enum class DType { Fp32, Bf16, Fp16 };
// Where the ranks run (core/launch builds the processes; docs/LAUNCH.md).
enum class Launcher { Local, Ssh, Slurm };
// srun: inside an allocation the user already holds (salloc); sbatch: a generated batch script.
enum class SlurmMode { Srun, Sbatch };

// One SSH host of a multi-node trial. Text form (the form, --set): "[user@]host[:port] [ranks=N]
// [worker=PATH] [NAME=value ...]", hosts separated by ';' (see parse_ssh_hosts).
struct SshHost {
  std::string user;    // empty: ssh's default (~/.ssh/config, the local user)
  std::string host;    // name or address, as ssh resolves it (an alias of ~/.ssh/config works)
  int port = 0;        // 0: ssh's default
  int ranks = 1;       // ranks (GPUs) on this host
  std::string worker;  // worker program there; empty: the trial's remote_worker
  std::map<std::string, std::string> env;  // extra environment of this host's ranks
  bool operator==(const SshHost& o) const {
    return user == o.user && host == o.host && port == o.port && ranks == o.ranks && worker == o.worker && env == o.env;
  }
};

// The shape of the LLaMA-style decoder. Any Hugging Face LLaMA-family config.json maps onto it
// (hf_config.h); what it cannot express (biases, sliding windows, experts) is named there.
struct ModelDims {
  int64_t dim = 256;     // hidden size
  int64_t layers = 4;    // transformer blocks
  int64_t heads = 4;     // query heads; dim / heads is the head size (even, at most 256)
  int64_t ffn = 688;     // SwiGLU inner size
  int64_t vocab = 32000;
  int64_t kv_heads = 0;         // key/value heads (grouped-query attention); 0: as many as heads
  bool tie_embeddings = false;  // the output head reuses the token embedding matrix
  double rope_theta = 10000.0;  // base of the rotary frequencies (numbers only, not speed)

  int64_t head_dim() const { return heads > 0 ? dim / heads : 0; }
  int64_t kv_head_count() const { return kv_heads > 0 ? kv_heads : heads; }
  int64_t kv_dim() const { return kv_head_count() * head_dim(); }  // width of k and of v
  int64_t qkv_dim() const { return dim + 2 * kv_dim(); }           // rows of the fused q/k/v projection
  // Equal shapes: kv_heads 0 and kv_heads == heads are the same network.
  bool operator==(const ModelDims& o) const {
    return dim == o.dim && layers == o.layers && heads == o.heads && ffn == o.ffn && vocab == o.vocab &&
           kv_head_count() == o.kv_head_count() && tie_embeddings == o.tie_embeddings && rope_theta == o.rope_theta;
  }
  bool operator!=(const ModelDims& o) const { return !(*this == o); }
};

struct TrialConfig {
  std::string name;  // free text shown in the trials table

  // ---- model & data ----
  std::string model = "tiny";  // model preset name (model_preset_names()) or custom
  ModelDims dims;              // taken from the preset unless model == "custom"
  int64_t micro_batch = 4;     // sequences per rank per micro-step
  int64_t seq_len = 128;       // tokens per sequence
  int64_t grad_accum = 1;      // micro-steps per optimizer step
  DataSource data = DataSource::Synthetic;
  std::string data_path;       // token file (nanoGPT .bin: flat little-endian uint16/uint32)
  TokenDtype token_dtype = TokenDtype::Uint16;
  int num_workers = 0;         // data loader threads; 0 = load on the training thread
  bool pin_memory = false;     // page-locked host batches and non-blocking copies (CUDA only)
  double sample_cpu_us = 0.0;  // microseconds of real CPU work per sample (tokenisation stand-in)

  // ---- parallelism ----
  Strategy strategy = Strategy::Single;
  int world_size = 1;          // ranks (processes); one GPU per rank on CUDA
  Device device = Device::Auto;

  // ---- precision & kernels ----
  Amp amp = Amp::Fp32;
  bool cudnn_benchmark = false;
  bool checkpointing = false;  // activation checkpointing per transformer block
  Compile compile = Compile::Off;  // fused kernels and/or CUDA-graph capture (see Compile)
  Attention attention = Attention::Auto;  // which scaled-dot-product attention kernel runs
  Optimizer optimizer = Optimizer::AdamW;
  bool fused_optimizer = true; // fused AdamW kernel where the libtorch has one
  double lr = 1e-4;
  double weight_decay = 0.0;
  double grad_clip = 0.0;      // max global grad norm; 0 = off
  bool optimizer_overlap = false;  // each unit's update queued as its gradients complete (one rank)
  DType grad_dtype = DType::Fp32;  // the blocks' matmul weights' gradients (predict::half_weight_grads)

  // ---- communication ----
  double bucket_mb = 25.0;       // DDP bucket cap (MiB), as torch DDP's bucket_cap_mb
  double first_bucket_mb = 1.0;  // DDP first bucket cap (MiB), so all-reduce starts early
  bool ddp_overlap = true;       // all-reduce buckets during backward; off = after backward
  Compression compression = Compression::None;  // DDP gradient compression hook
  FsdpMode fsdp_mode = FsdpMode::FullShard;
  bool fsdp_prefetch = true;     // issue the next unit's all-gather before the current unit runs
  DType fsdp_param_dtype = DType::Bf16;   // dtype of gathered parameters (compute dtype)
  DType fsdp_reduce_dtype = DType::Fp32;  // dtype gradients are reduce-scattered in
  std::map<std::string, std::string> nccl_env;  // NCCL_* / TORCH_NCCL_* variables for the ranks

  // ---- run length ----
  int64_t steps = 20;         // optimizer steps, warm-up included
  int64_t warmup = 3;         // first steps excluded from every summary
  uint64_t seed = 0;
  bool timing = true;         // per-phase timing; off measures the instrumentation's own cost
  // Kernel sampling (GPU only): the device's kernel intervals are recorded (Kineto) on the first
  // kernel_sample_steps measured steps of every kernel_sample_every; 0 turns it off. Those steps
  // give GPU busy, the GPU-idle gaps and their causes; the others run without the profiler.
  int64_t kernel_sample_every = 20;
  int64_t kernel_sample_steps = 2;
  double gpu_sample_hz = 10.0;
  double rendezvous_timeout_s = 120.0;  // how long ranks wait for each other at start
  double collective_timeout_s = 300.0;  // a collective that takes longer ends the trial

  // ---- where (the launcher; not seen by the worker) ----
  Launcher launcher = Launcher::Local;
  std::vector<SshHost> ssh_hosts;  // ssh: nodes in order; node 0 is MASTER_ADDR; ranks sum to world_size
  std::string ssh_command = "ssh"; // ssh: the client and extra options ("ssh -F ~/.ssh/lab_config")
  std::string master_addr;         // ssh: rendezvous address the ranks reach node 0 at; empty: its host
  std::string remote_worker = "tunebench-worker";  // ssh/slurm: worker program on the nodes
  std::map<std::string, std::string> remote_env;   // ssh/slurm: extra environment of every rank
  SlurmMode slurm_mode = SlurmMode::Srun;
  int slurm_nodes = 1;             // slurm: nodes; world_size / nodes ranks per node
  int slurm_gpus_per_node = 0;     // slurm: --gpus-per-node; 0 asks for none (CPU)
  std::string slurm_partition;     // slurm: --partition; empty: the cluster's default
  std::string slurm_account;       // slurm: --account; empty: the user's default
  std::string slurm_time;          // slurm: --time limit ("30", "1:00:00"); empty: the partition's
  std::string slurm_dir;           // slurm: shared folder for the config and script; empty: ~/.cache/tunebench/slurm
  std::string event_host;          // slurm: address the nodes reach this machine at; empty: its host name

  // ---- your own script (core/config/script.h, docs/SCRIPTS.md) ----
  // A PyTorch training script that every rank runs under tunebench_probe instead of the benchmark;
  // empty: the benchmark (tunebench-worker). The script has its own model, data and wrapping: of
  // the knobs it can take (script_knob_keys) only those in script_knobs are applied to it.
  std::string script;
  std::string script_args;               // its arguments, a template: "--batch-size {micro_batch} --lr 3e-4"
  std::string python;                    // the interpreter; empty: the one found with torch (find_python)
  std::vector<std::string> script_knobs; // knobs applied to the script; the others stay its own
  bool persistent_workers = false;       // DataLoader(persistent_workers=) (scripts)
  int prefetch_factor = 0;               // DataLoader(prefetch_factor=); 0: PyTorch's default (scripts)
  bool gradient_as_bucket_view = false;  // DDP(gradient_as_bucket_view=) (scripts)
  bool static_graph = false;             // DDP(static_graph=) (scripts)
  double step_timeout_s = 300.0;         // scripts: no training step within this long fails the trial
  // What the probe saw a script's batches count in: "tokens" (an integer (batch, sequence) input:
  // micro_batch and seq_len are then known) or "samples"; empty when not seen. Recorded, not a knob.
  std::string script_batch_unit;
  // Samples (images, examples) one rank trains on per optimizer step, for a model whose batches
  // are not token sequences (a CNN in an imported trace or a script): the trial's samples/s come
  // from it and the measured step time (analysis/throughput.h). 0: not counted in samples.
  int64_t samples_per_step = 0;

  bool operator==(const TrialConfig& o) const;
  bool operator!=(const TrialConfig& o) const { return !(*this == o); }

  int64_t tokens_per_rank_step() const { return micro_batch * seq_len * grad_accum; }
  // Whether step `index` records kernel intervals (kernel_sample_every/_steps; measured steps only).
  bool kernel_sampled(int64_t index) const {
    return timing && kernel_sample_every > 0 && kernel_sample_steps > 0 && index >= warmup &&
           (index - warmup) % kernel_sample_every < kernel_sample_steps;
  }
  // Whether step `index` runs as the CUDA graph of compile 'graph' (captured in the last warm-up
  // step, replayed from then on) rather than eagerly.
  bool graph_step(int64_t index) const { return uses_cuda_graph(compile) && index >= warmup - 1; }
  // Whether a CUDA worker reads its caching allocator in step `index` (memory categories and
  // timeline): the kernel-sampled steps it runs eagerly (a captured or replayed graph allocates
  // from its own pool, nothing step by step).
  bool memory_sampled(int64_t index) const { return kernel_sampled(index) && !graph_step(index); }
  int64_t head_dim() const { return dims.head_dim(); }
  // Tied embeddings under compile fused on one rank: the lookup's gradient is the batch's rows only
  // (sparse, fused::embedding_rows), added to the head's dense gradient, not a vocabulary x dim
  // tensor. The worker follows this rule and the memory model counts it.
  bool tied_lookup_rows() const {
    return dims.tie_embeddings && compile == Compile::Fused && strategy == Strategy::Single;
  }
  // The rows of the embedding table the lookup's gradient covers: all of them, or (tied_lookup_rows)
  // the micro-batch's tokens, at most the vocabulary.
  int64_t lookup_gradient_rows() const {
    return tied_lookup_rows() ? std::min(micro_batch * seq_len, dims.vocab) : dims.vocab;
  }
};

// ---- presets ---------------------------------------------------------------------------------

// Model presets; nullopt for unknown names (and for "custom").
std::optional<ModelDims> model_preset(std::string_view name);
// tiny, 125m, 1b, 7b (LLaMA-2-7B), llama3.1-8b, mistral-7b, qwen2.5-7b, phi3-mini, llama3.2-1b, custom
std::vector<std::string> model_preset_names();
// The published parameter count of a preset named after a public model (its model card), 0 for
// the others; the tests hold the presets' counts within 1 % of it.
int64_t published_parameters(std::string_view name);
// The knobs that make up ModelDims, in form order (editable for the custom model only).
const std::vector<std::string>& model_dim_keys();

// Whole-trial presets (the defaults are the "cpu-tiny" preset).
struct TrialPreset {
  std::string name;
  std::string description;
  TrialConfig config;
};
const std::vector<TrialPreset>& trial_presets();
std::optional<TrialConfig> trial_preset(std::string_view name);

// ---- validation ------------------------------------------------------------------------------

struct Problem {
  std::string key;      // JSON key of the knob ("" for the whole config)
  std::string message;  // one sentence a user can act on
};

std::vector<Problem> validate(const TrialConfig& config);
// Joins problems as "key: message" lines.
std::string describe(const std::vector<Problem>& problems);

// ---- JSON ------------------------------------------------------------------------------------

nlohmann::json to_json(const TrialConfig& config);

struct ParseResult {
  TrialConfig config;
  std::vector<Problem> problems;  // unknown keys, wrong types, bad enum names (not validation)
  bool ok() const { return problems.empty(); }
};
// Starts from the defaults (or from `base`) and applies every key present in `j`.
ParseResult from_json(const nlohmann::json& j, const TrialConfig& base = TrialConfig{});

// Sets one knob from text, as typed on a command line or in a form ("25", "true", "bf16").
// Returns a problem when the key is unknown or the text does not fit the knob's type.
std::optional<Problem> set_knob(TrialConfig& config, std::string_view key, std::string_view text);
// The knob's value as text (the inverse of set_knob).
std::string knob_text(const TrialConfig& config, std::string_view key);

// ---- knob descriptions -------------------------------------------------------------------------

enum class KnobType { Int, Float, Bool, Choice, Text, Map };

struct KnobInfo {
  std::string key;
  std::string group;        // "Model & data", "Parallelism", "Precision & kernels", "Communication", "Run length"
  std::string label;        // short form label
  KnobType type;
  std::vector<std::string> choices;  // for Choice
  std::string unit;         // "MiB", "µs", ... or empty
  std::string help;         // what it does
  std::string forum_claim;  // which claim of the forum thread it tests (may be empty)
};
const std::vector<KnobInfo>& knobs();
const KnobInfo* find_knob(std::string_view key);
// Whether a knob means anything to this launcher: ssh_hosts, ssh_command and master_addr to ssh
// only; slurm_* and event_host to slurm only; remote_worker and remote_env to both remote
// launchers; every other knob to all of them. The form hides the Where fields that do not apply.
bool knob_applies(std::string_view key, Launcher launcher);

// Enum names as they appear in JSON.
std::string_view to_string(Strategy v);
std::string_view to_string(Device v);
std::string_view to_string(Amp v);
std::string_view to_string(Compile v);
std::string_view to_string(Attention v);
std::string_view to_string(DataSource v);
std::string_view to_string(TokenDtype v);
std::string_view to_string(Optimizer v);
std::string_view to_string(Compression v);
std::string_view to_string(FsdpMode v);
std::string_view to_string(DType v);
std::string_view to_string(Launcher v);
std::string_view to_string(SlurmMode v);

// What one rank runs on, for sentences and headers: "GPU" (plural "GPUs"), or "CPU rank" on the
// CPU: a CPU run is never called a GPU run. The one definition of the noun; analysis::device_noun
// picks the device of a measured trial and calls it.
std::string device_noun(bool on_gpu, bool plural = false);

// "[user@]host[:port] [ranks=N] [worker=PATH] [NAME=value ...]; ..." <-> hosts. Parsing returns a
// problem (key ssh_hosts) for a malformed host; format_ssh_hosts(parse(x)) is canonical.
std::optional<Problem> parse_ssh_hosts(std::string_view text, std::vector<SshHost>& out);
std::string format_ssh_hosts(const std::vector<SshHost>& hosts);
// Ranks the launcher starts on its nodes (sum of ssh ranks; world_size otherwise).
int launcher_ranks(const TrialConfig& config);

// Keys whose values differ between two configs, in knobs() order (for comparisons).
std::vector<std::string> differing_knobs(const TrialConfig& a, const TrialConfig& b);

}  // namespace tunebench::config
