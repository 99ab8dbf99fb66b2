// Descriptions of every knob: the form labels, tooltips and the forum claim each one tests.
// The GUI builds its trial form from this table, the worker its --help, docs the knob list.
#include "core/config/trial_config.h"

namespace tunebench::config {

namespace {
constexpr const char* kModel = "Model & data";
constexpr const char* kParallel = "Parallelism";
constexpr const char* kPrecision = "Precision & kernels";
constexpr const char* kComm = "Communication";
constexpr const char* kRun = "Run length";
constexpr const char* kWhere = "Where";
constexpr const char* kScript = "Your script";
}  // namespace

const std::vector<KnobInfo>& knobs() {
  using T = KnobType;
  static const std::vector<KnobInfo> table = {
      {"name", kRun, "Trial name", T::Text, {}, "", "Free text shown in the trials table.", ""},
      {"model", kModel, "Model", T::Choice, model_preset_names(), "",
       "LLaMA-style preset (RMSNorm, rotary embeddings, SwiGLU, causal attention). 7b: LLaMA-2-7B (dim "
       "4096, 32 layers, 32 heads, FFN 11008, vocab 32000). llama3.1-8b, mistral-7b, qwen2.5-7b, phi3-mini "
       "and llama3.2-1b: those models' shapes (grouped-query attention, 128k-152k vocabularies, tied "
       "embeddings) with random weights. 'custom' unlocks the dimensions; Model from config.json... "
       "reads them from a Hugging Face config.",
       "\"7B is too big for two 24 GB cards\": full AdamW training needs ~16 bytes per parameter."},
      {"dim", kModel, "Hidden size", T::Int, {}, "", "Model dimension (custom model only).", ""},
      {"layers", kModel, "Layers", T::Int, {}, "", "Transformer blocks (custom model only).", ""},
      {"heads", kModel, "Heads", T::Int, {}, "",
       "Query heads; dim / heads is the head size: even and at most 256 (64-128 in most models).", ""},
      {"kv_heads", kModel, "Key/value heads", T::Int, {}, "",
       "Grouped-query attention: each key/value head serves heads / kv_heads query heads (Llama 3 and "
       "Mistral: 8, Qwen2.5-7B: 4), so the k/v projections and their activations shrink by that factor. "
       "Must divide heads; 0: as many as heads (multi-head attention).",
       ""},
      {"ffn", kModel, "FFN size", T::Int, {}, "", "SwiGLU inner size (custom model only).", ""},
      {"vocab", kModel, "Vocabulary", T::Int, {}, "tokens", "Vocabulary size (custom model only).", ""},
      {"tie_embeddings", kModel, "Tied embeddings", T::Bool, {}, "",
       "The output head reuses the token embedding matrix (Llama 3.2 1B/3B): vocab x dim fewer "
       "parameters, the same FLOPs. Not with FSDP, which shards the embedding and the head as separate units.",
       ""},
      {"rope_theta", kModel, "RoPE base", T::Float, {}, "",
       "Base of the rotary embedding frequencies (10000 in LLaMA 2, 500000 in Llama 3). Changes the "
       "numbers, not the speed.",
       ""},
      {"micro_batch", kModel, "Micro-batch", T::Int, {}, "sequences",
       "Sequences per rank in one forward/backward.",
       "\"Batch size too small: computation cannot hide communication\"."},
      {"seq_len", kModel, "Sequence length", T::Int, {}, "tokens", "Tokens per sequence.", ""},
      {"grad_accum", kModel, "Gradient accumulation", T::Int, {}, "micro-steps",
       "Micro-steps per optimizer step. With DDP, all but the last run under no_sync, so gradients "
       "are all-reduced once per step.",
       "\"Raise gradient accumulation to communicate less often\"."},
      {"data", kModel, "Data", T::Choice, {"synthetic", "file"}, "",
       "Synthetic random tokens, or random windows of a token file.", ""},
      {"data_path", kModel, "Token file", T::Text, {}, "",
       "Flat little-endian uint16/uint32 token array (nanoGPT .bin), memory-mapped.", ""},
      {"token_dtype", kModel, "Token type", T::Choice, {"uint16", "uint32"}, "", "Element type of the token file.", ""},
      {"num_workers", kModel, "Loader threads", T::Int, {}, "threads",
       "Data loader worker threads (libtorch's DataLoader uses threads, not processes). 0 loads on "
       "the training thread, so the per-sample CPU cost shows up as data wait.",
       "\"num_workers too low: data loading is the bottleneck\"."},
      {"pin_memory", kModel, "Pinned memory", T::Bool, {}, "",
       "Page-locked host batches and non-blocking host-to-device copies (GPU only).", ""},
      {"sample_cpu_us", kModel, "CPU cost per sample", T::Float, {}, "µs",
       "Real CPU work per sample standing in for tokenisation and augmentation.",
       "\"The data pipeline, not the GPUs, is slow\"."},
      {"strategy", kParallel, "Strategy", T::Choice, {"single", "ddp", "fsdp"}, "",
       "single: one rank. ddp: replicated model, bucketed gradient all-reduce overlapping backward. "
       "fsdp: parameters, gradients and optimizer state sharded per block.",
       "\"Switch from DDP to FSDP\" / \"use ZeRO\"."},
      {"world_size", kParallel, "Ranks", T::Int, {}, "processes", "Worker processes, one GPU each on CUDA.", ""},
      {"device", kParallel, "Device", T::Choice, {"auto", "cpu", "cuda"}, "",
       "auto picks CUDA when the worker was built with it and a GPU is present.", ""},
      {"amp", kPrecision, "Precision", T::Choice, {"fp32", "tf32", "bf16", "fp16", "pure-bf16", "fp8"}, "",
       "fp32; tf32 matmuls; bf16 or fp16 autocast over fp32 master weights (fp16 with dynamic loss "
       "scaling); pure-bf16 keeps parameters and optimizer state in bf16; fp8 runs the transformer "
       "blocks' matmuls in float8 (e4m3 forward, e5m2 gradients, per-tensor scales from the previous "
       "step's amax) and the rest as bf16 (Hopper GPUs only; MFU stays against the bf16 peak).",
       "\"Turn on AMP: half precision frees memory for a larger batch\"."},
      {"cudnn_benchmark", kPrecision, "cudnn.benchmark", T::Bool, {}, "",
       "Let cuDNN time its algorithms. A LLaMA step has no convolutions, so expect no change: that is "
       "the point of measuring it.",
       "\"Set torch.backends.cudnn.benchmark=True\"."},
      {"checkpointing", kPrecision, "Activation checkpointing", T::Bool, {}, "",
       "Recompute each block's forward in backward instead of keeping its activations: less memory, "
       "about a third more compute.",
       "\"Use gradient checkpointing to save memory\"."},
      {"compile", kPrecision, "Compile", T::Choice, {"off", "fused", "graph", "fused+graph", "torch"}, "",
       "libtorch has no torch.compile; this is what it does instead. fused: RMSNorm with the residual "
       "add, rotary embedding, SwiGLU and the output layer with cross-entropy run as fused CUDA kernels "
       "(one pass over the activations instead of chains of elementwise kernels, no fp32 logits), and "
       "weight gradients come out of the GEMM in fp32; works with single, DDP and FSDP. graph: the "
       "whole step is captured into a CUDA graph and replayed (no launch overhead, no fusion; single "
       "GPU only). fused+graph: both. On the CPU 'fused' runs the same ops unfused (no speed-up). torch: "
       "torch.compile of your own script's model (script trials only).",
       "\"torch.compile speeds it up\" / \"torch.compile breaks DDP\"."},
      {"attention", kPrecision, "Attention kernel", T::Choice, {"auto", "flash", "cudnn", "efficient", "math"}, "",
       "Which scaled-dot-product attention kernel runs. auto: in bf16/fp16 the kernel (cuDNN, "
       "FlashAttention-2 or memory-efficient) measured fastest at the model's head size and grouping "
       "on an H200, each handed the head size padded to a multiple of 8; the memory-efficient kernel "
       "for fp32, the composite math on the CPU. The others force one; a kernel that cannot run the "
       "shape is refused before launch. The trial records which one ran.",
       "\"Use FlashAttention\"."},
      {"optimizer", kPrecision, "Optimizer", T::Choice, {"adamw", "sgd"}, "", "AdamW (fused where available) or SGD.", ""},
      {"fused_optimizer", kPrecision, "Fused optimizer", T::Bool, {}, "",
       "Use the fused AdamW kernel where the libtorch has one (2.x with CUDA).", ""},
      {"lr", kPrecision, "Learning rate", T::Float, {}, "", "Optimizer learning rate.", ""},
      {"weight_decay", kPrecision, "Weight decay", T::Float, {}, "", "Decoupled weight decay (AdamW).", ""},
      {"grad_clip", kPrecision, "Gradient clipping", T::Float, {}, "", "Max global gradient norm; 0 = off.", ""},
      {"optimizer_overlap", kPrecision, "Optimizer in backward", T::Bool, {}, "",
       "Update each block as soon as the backward has its gradients, on a second CUDA stream, instead "
       "of after the whole backward, and free its gradients then: the same update, bit for bit, with "
       "less memory at the peak (7B on an H200: 3 GiB). It saves no time there: the update's kernels "
       "interleave with the backward's. One rank only, without gradient clipping, fp16 loss scaling "
       "or CUDA graphs (each needs every gradient, or the reduced ones, first). On the CPU the "
       "updates run in order inside the backward.",
       "\"Fuse the optimizer into the backward\" / \"optimizer_in_backward\"."},
      {"grad_dtype", kPrecision, "Weight gradient dtype", T::Choice, {"fp32", "bf16"}, "",
       "The dtype the blocks' matmul weights keep their gradients in. fp32: written in fp32 straight "
       "from the GEMM. bf16: the GEMM's result rounded to bf16, as PyTorch's autocast computes every "
       "weight gradient before casting it to fp32; the AdamW kernel reads it so. 2 bytes a "
       "parameter less to write, hold and read (the 7B's update moves 189 GB instead of 202), the same "
       "update from the rounded gradient. The norms, the embedding and the head keep fp32. compile "
       "fused, amp bf16, one rank, grad_accum 1, without optimizer_overlap; it needs the Tunebench "
       "AdamW kernel (a GPU) and says so where that does not run.",
       "\"Keep gradients in fp32\" / \"bf16 gradients lose accuracy\"."},
      {"bucket_mb", kComm, "DDP bucket size", T::Float, {}, "MiB",
       "Gradient bucket cap: each full bucket is all-reduced while backward continues.",
       "\"Tune bucket_cap_mb\"."},
      {"first_bucket_mb", kComm, "DDP first bucket", T::Float, {}, "MiB",
       "Cap of the first bucket (the last layers' gradients), so communication starts early.", ""},
      {"ddp_overlap", kComm, "Overlap all-reduce", T::Bool, {}, "",
       "On: all-reduce each bucket as soon as it fills, overlapping backward. Off: all-reduce after "
       "backward, to show what overlap buys.",
       "\"All-reduce cost eats the speed-up\"."},
      {"compression", kComm, "Gradient compression", T::Choice, {"none", "fp16", "bf16"}, "",
       "DDP communication hook: all-reduce gradients in 16 bits, halving the bytes.",
       "\"Use fp16_compress_hook\"."},
      {"fsdp_mode", kComm, "FSDP sharding", T::Choice, {"full_shard", "shard_grad_op"}, "",
       "full_shard (ZeRO-3): parameters freed after forward, gathered again in backward. "
       "shard_grad_op (ZeRO-2): kept from forward until backward.",
       "\"Use ZeRO stage 2/3 to cut memory\"."},
      {"fsdp_prefetch", kComm, "FSDP prefetch", T::Bool, {}, "",
       "Issue the next unit's all-gather before the current unit computes.", ""},
      {"fsdp_param_dtype", kComm, "FSDP parameter dtype", T::Choice, {"fp32", "bf16", "fp16"}, "",
       "Dtype parameters are gathered and computed in.", ""},
      {"fsdp_reduce_dtype", kComm, "FSDP reduce dtype", T::Choice, {"fp32", "bf16", "fp16"}, "",
       "Dtype gradients are reduce-scattered in.", ""},
      {"nccl_env", kComm, "NCCL environment", T::Map, {}, "",
       "NCCL variables passed to every rank, e.g. NCCL_ALGO=Ring, NCCL_P2P_DISABLE=1 (forces the path "
       "through host memory, like two RTX 4090s without peer-to-peer).",
       "\"NCCL ring vs tree\" / \"4090s have no NVLink\"."},
      {"steps", kRun, "Steps", T::Int, {}, "", "Optimizer steps, warm-up included.", ""},
      {"warmup", kRun, "Warm-up steps", T::Int, {}, "", "First steps, excluded from every summary.", ""},
      {"seed", kRun, "Seed", T::Int, {}, "", "Seed of weights and synthetic data.", ""},
      {"timing", kRun, "Phase timing", T::Bool, {}, "",
       "Record per-phase intervals. Off measures what the instrumentation itself costs.", ""},
      {"kernel_sample_every", kRun, "Kernel sampling period", T::Int, {}, "steps",
       "GPU: record the device's kernel intervals (Kineto) on kernel_sample_steps of every this many "
       "measured steps; 0 = off. Those steps measure GPU busy and why the GPU idles (host wait, launch "
       "gaps, synchronisation); the others run without the profiler.",
       "\"GPU utilisation is low\": nvidia-smi's figure counts a kernel running, not how much of the step."},
      {"kernel_sample_steps", kRun, "Kernel-sampled steps", T::Int, {}, "steps",
       "Steps recorded at the start of each kernel sampling period (ignored when the period is 0).", ""},
      {"gpu_sample_hz", kRun, "Telemetry rate", T::Float, {}, "Hz", "GPU (NVML) or CPU sampling rate.", ""},
      {"rendezvous_timeout_s", kRun, "Rendezvous timeout", T::Float, {}, "s",
       "How long ranks wait for each other at start before giving up with an error.", ""},
      {"collective_timeout_s", kRun, "Collective timeout", T::Float, {}, "s",
       "A collective running longer than this ends the trial with an error (a hung rank).", ""},
      {"launcher", kWhere, "Where", T::Choice, {"local", "ssh", "slurm"}, "",
       "local: ranks on this machine. ssh: one ssh connection per host starts that host's ranks; events "
       "come back through the connection (docs/LAUNCH.md). slurm: srun inside your allocation or sbatch "
       "of a generated script; events come back over TCP with a per-trial token.",
       ""},
      {"ssh_hosts", kWhere, "SSH hosts", T::Text, {}, "",
       "Hosts in order, separated by ';': [user@]host[:port] ranks=N [worker=PATH] [NAME=value ...]. "
       "The first host is MASTER_ADDR; the ranks must add up to the world size. Your own ssh keys, agent "
       "and ~/.ssh/config are used (BatchMode: no password prompts).",
       ""},
      {"ssh_command", kWhere, "SSH command", T::Text, {}, "",
       "The ssh client and extra options, e.g. 'ssh -F ~/.ssh/lab_config -J bastion'.", ""},
      {"master_addr", kWhere, "Rendezvous address", T::Text, {}, "",
       "SSH: the address the other hosts reach the first host at; empty: the first host's name.", ""},
      {"remote_worker", kWhere, "Remote worker", T::Text, {}, "",
       "tunebench-worker on the remote hosts or SLURM nodes (a path, or a name on their PATH).", ""},
      {"remote_env", kWhere, "Remote environment", T::Map, {}, "",
       "Extra variables for every remote rank, e.g. LD_LIBRARY_PATH=/opt/torch/lib.", ""},
      {"slurm_mode", kWhere, "SLURM mode", T::Choice, {"srun", "sbatch"}, "",
       "srun: run inside the allocation you hold (salloc); sbatch: submit a generated batch script and "
       "wait for it.",
       ""},
      {"slurm_nodes", kWhere, "SLURM nodes", T::Int, {}, "", "Nodes; the world size is split evenly over them.", ""},
      {"slurm_gpus_per_node", kWhere, "SLURM GPUs per node", T::Int, {}, "",
       "--gpus-per-node; 0 requests none (CPU ranks).", ""},
      {"slurm_partition", kWhere, "SLURM partition", T::Text, {}, "", "--partition; empty: the default.", ""},
      {"slurm_account", kWhere, "SLURM account", T::Text, {}, "", "--account; empty: your default.", ""},
      {"slurm_time", kWhere, "SLURM time limit", T::Text, {}, "", "--time, e.g. 30 or 1:00:00; empty: the partition's.",
       ""},
      {"slurm_dir", kWhere, "SLURM shared folder", T::Text, {}, "",
       "A folder every node can read, for the trial's config and batch script; empty: ~/.cache/tunebench/slurm.",
       ""},
      {"event_host", kWhere, "Event address", T::Text, {}, "",
       "SLURM: the address of this machine that the nodes can reach (events come back over TCP with a "
       "token); empty: this machine's host name.",
       ""},
      {"script", kScript, "Script", T::Text, {}, "",
       "Your own PyTorch training script, run unmodified in every rank under tunebench_probe instead of the "
       "benchmark (docs/SCRIPTS.md): its steps, phases, DDP buckets and telemetry arrive live like the "
       "benchmark's. Empty: the LLaMA benchmark.",
       ""},
      {"script_args", kScript, "Arguments", T::Text, {}, "",
       "The script's arguments, a template: '--batch-size {micro_batch} --lr 3e-4' fills in the knob's value, "
       "so micro_batch (or any knob) becomes a knob of your script. Quoted as a shell quotes; nothing is "
       "expanded.",
       ""},
      {"python", kScript, "Python", T::Text, {}, "",
       "The interpreter that runs the script (its PyTorch is the one measured); empty: the first python3 "
       "found that imports torch.",
       ""},
      {"persistent_workers", kScript, "Persistent workers", T::Bool, {}, "",
       "DataLoader(persistent_workers=True): the loader processes live across epochs (needs num_workers).", ""},
      {"prefetch_factor", kScript, "Prefetch factor", T::Int, {}, "batches",
       "DataLoader(prefetch_factor=): batches each loader process keeps ready; 0: PyTorch's default (2).", ""},
      {"gradient_as_bucket_view", kScript, "Gradients as bucket views", T::Bool, {}, "",
       "DDP(gradient_as_bucket_view=True): gradients live in the all-reduce buckets, saving a copy and memory.",
       ""},
      {"static_graph", kScript, "Static graph", T::Bool, {}, "",
       "DDP(static_graph=True): the same parameters are used every step, so DDP can skip its search for unused "
       "ones.",
       ""},
      {"step_timeout_s", kScript, "Step timeout", T::Float, {}, "s",
       "A script that reaches no training step (an optimizer's step(), or the marker) within this long fails "
       "with a message saying so.",
       ""},
      {"samples_per_step", kScript, "Samples per step", T::Int, {}, "samples",
       "Samples (images, examples) one rank trains on per optimizer step (its batch size x accumulation), for "
       "a model whose batches are not token sequences, e.g. a CNN's imported trace: the trial then shows "
       "samples/s from its measured step time. 0: not counted in samples.",
       ""},
      {"script_knobs", kScript, "Applied knobs", T::Text, {}, "",
       "The knobs applied to the script without changing it (comma-separated): num_workers, pin_memory, "
       "persistent_workers, prefetch_factor, cudnn_benchmark, amp, compile, bucket_mb, "
       "gradient_as_bucket_view, static_graph. The others stay as the script has them.",
       ""},
  };
  return table;
}

bool knob_applies(std::string_view key, Launcher launcher) {
  if (key == "ssh_hosts" || key == "ssh_command" || key == "master_addr") return launcher == Launcher::Ssh;
  if (key.substr(0, 6) == "slurm_" || key == "event_host") return launcher == Launcher::Slurm;
  if (key == "remote_worker" || key == "remote_env") return launcher != Launcher::Local;
  return true;
}

const KnobInfo* find_knob(std::string_view key) {
  for (const auto& k : knobs())
    if (k.key == key) return &k;
  return nullptr;
}

}  // namespace tunebench::config
