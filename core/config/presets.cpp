// Named model and trial presets. The model presets are also in scripts/pytorch_reference.py, so the
// worker and the PyTorch reference run the same network; the test
// scripts.reference_presets_match_the_worker compares both lists (dims and parameter counts).
#include "core/config/trial_config.h"

namespace tunebench::config {

std::optional<ModelDims> model_preset(std::string_view name) {
  // {dim, layers, heads, ffn, vocab, kv_heads (0: = heads), tie_embeddings, rope_theta}
  if (name == "tiny") return ModelDims{256, 4, 4, 688, 32000, 0, false, 10000.0};
  if (name == "125m") return ModelDims{768, 12, 12, 2048, 32000, 0, false, 10000.0};
  if (name == "1b") return ModelDims{2048, 22, 16, 5632, 32000, 0, false, 10000.0};
  if (name == "7b") return ModelDims{4096, 32, 32, 11008, 32000, 0, false, 10000.0};  // LLaMA-2-7B
  // Public architectures, shapes only (random weights). Grouped-query attention where the model
  // has it; rope_theta as published (it changes the numbers, not the speed).
  if (name == "llama3.1-8b") return ModelDims{4096, 32, 32, 14336, 128256, 8, false, 500000.0};
  if (name == "mistral-7b") return ModelDims{4096, 32, 32, 14336, 32768, 8, false, 1000000.0};  // v0.3 vocabulary
  // Qwen2.5's q/k/v projections carry biases; the worker's linears have none.
  if (name == "qwen2.5-7b") return ModelDims{3584, 28, 28, 18944, 152064, 4, false, 1000000.0};
  if (name == "phi3-mini") return ModelDims{3072, 32, 32, 8192, 32064, 0, false, 10000.0};  // head_dim 96
  if (name == "llama3.2-1b") return ModelDims{2048, 16, 32, 8192, 128256, 8, true, 500000.0};  // head_dim 64
  return std::nullopt;
}

std::vector<std::string> model_preset_names() {
  return {"tiny",       "125m",       "1b",        "7b",          "llama3.1-8b",
          "mistral-7b", "qwen2.5-7b", "phi3-mini", "llama3.2-1b", "custom"};
}

int64_t published_parameters(std::string_view name) {
  // Model cards (Hugging Face "Model size" / safetensors totals). Qwen2.5-7B's figure includes its
  // 129,024 q/k/v bias parameters, which the preset leaves out.
  if (name == "7b") return 6'738'415'616;            // meta-llama/Llama-2-7b-hf
  if (name == "llama3.1-8b") return 8'030'261'248;   // meta-llama/Llama-3.1-8B
  if (name == "mistral-7b") return 7'248'023'552;    // mistralai/Mistral-7B-v0.3
  if (name == "qwen2.5-7b") return 7'615'616'512;    // Qwen/Qwen2.5-7B
  if (name == "phi3-mini") return 3'821'079'552;     // microsoft/Phi-3-mini-4k-instruct
  if (name == "llama3.2-1b") return 1'235'814'400;   // meta-llama/Llama-3.2-1B
  return 0;
}

const std::vector<std::string>& model_dim_keys() {
  static const std::vector<std::string> keys = {"dim",      "layers",         "heads",     "kv_heads",
                                                "ffn",      "vocab",          "tie_embeddings", "rope_theta"};
  return keys;
}

namespace {

TrialConfig cpu_tiny() {
  TrialConfig c;  // the defaults are the CPU smoke test
  c.name = "tiny on CPU";
  c.device = Device::Cpu;
  return c;
}

TrialConfig gpu_7b(Strategy strategy, int world) {
  TrialConfig c;
  c.model = "7b";
  c.dims = *model_preset("7b");
  c.device = Device::Cuda;
  c.strategy = strategy;
  c.world_size = world;
  c.micro_batch = 1;
  c.seq_len = 2048;
  c.amp = Amp::Bf16;
  c.steps = 11;
  c.warmup = 3;
  return c;
}

std::vector<TrialPreset> make_presets() {
  std::vector<TrialPreset> p;
  p.push_back({"cpu-tiny", "Tiny LLaMA on the CPU: the smoke test that runs anywhere.", cpu_tiny()});
  {
    TrialConfig c = cpu_tiny();
    c.name = "tiny DDP x2 on CPU (Gloo)";
    c.strategy = Strategy::Ddp;
    c.world_size = 2;
    p.push_back({"cpu-tiny-ddp", "Two CPU ranks over Gloo: DDP mechanics without a GPU.", c});
  }
  {
    TrialConfig c = cpu_tiny();
    c.name = "tiny, data-bound";
    // 2 samples x 500 ms of real CPU work on the training thread (num_workers 0) against the tiny
    // model's forward, backward and optimizer at micro-batch 2: the data wait is the largest
    // finding even on a loaded 2-core machine (27 % of a 3.7 s step at load average 11; README,
    // "CPU presets"). num_workers 4 hides it.
    c.micro_batch = 2;
    c.sample_cpu_us = 500000;
    c.num_workers = 0;
    p.push_back({"cpu-data-bound",
                 "2 samples x 500 ms of CPU work per step on the training thread (num_workers 0): the diagnosis "
                 "says data-bound and suggests loader threads.",
                 c});
  }
  {
    TrialConfig c = gpu_7b(Strategy::Single, 1);
    c.name = "7B single GPU, bf16";
    p.push_back({"7b-single", "7B on one GPU, sequence 2048, micro-batch 1, bf16 autocast.", c});
  }
  {
    TrialConfig c = gpu_7b(Strategy::Single, 1);
    c.name = "7B single GPU, compile fused";
    c.compile = Compile::Fused;
    p.push_back({"7b-single-fused", "7B on one GPU with the fused kernels of compile (bf16).", c});
  }
  {
    TrialConfig c = gpu_7b(Strategy::Single, 1);
    c.name = "125m single GPU, bf16";
    c.model = "125m";
    c.dims = *model_preset("125m");
    c.seq_len = 1024;
    c.micro_batch = 8;
    c.steps = 23;
    p.push_back({"125m-single", "125m on one GPU, sequence 1024, micro-batch 8: elementwise work weighs most.", c});
  }
  {
    TrialConfig c = gpu_7b(Strategy::Single, 1);
    c.name = "Llama-3.1-8B single GPU, bf16";
    c.model = "llama3.1-8b";
    c.dims = *model_preset("llama3.1-8b");
    p.push_back({"llama3.1-8b-single",
                 "Llama-3.1-8B's shape on one GPU (grouped-query attention, 128k vocabulary), sequence 2048, bf16.", c});
  }
  {
    TrialConfig c = gpu_7b(Strategy::Fsdp, 2);
    c.name = "Llama-3.1-8B FSDP x2 (ZeRO-3)";
    c.model = "llama3.1-8b";
    c.dims = *model_preset("llama3.1-8b");
    p.push_back({"llama3.1-8b-fsdp", "Llama-3.1-8B's shape, FSDP FULL_SHARD on two GPUs, bf16 parameters.", c});
  }
  {
    TrialConfig c = gpu_7b(Strategy::Ddp, 2);
    c.name = "1B DDP x2, bf16";
    c.model = "1b";
    c.dims = *model_preset("1b");
    c.micro_batch = 2;
    p.push_back({"1b-ddp", "1B DDP on two GPUs, sequence 2048, micro-batch 2: fits without checkpointing.", c});
  }
  {
    TrialConfig c = gpu_7b(Strategy::Ddp, 2);
    c.name = "7B DDP x2, checkpointing";
    c.checkpointing = true;
    p.push_back({"7b-ddp", "7B DDP on two GPUs; checkpointing so the replicated optimizer fits.", c});
  }
  {
    TrialConfig c = gpu_7b(Strategy::Fsdp, 2);
    c.name = "7B FSDP x2 (ZeRO-3)";
    p.push_back({"7b-fsdp", "7B FSDP FULL_SHARD on two GPUs, bf16 parameters, fp32 reduce.", c});
  }
  {
    TrialConfig c = gpu_7b(Strategy::Ddp, 2);
    c.name = "7B DDP x2, no peer-to-peer";
    c.checkpointing = true;
    c.nccl_env["NCCL_P2P_DISABLE"] = "1";
    p.push_back({"7b-ddp-no-p2p",
                 "DDP with NCCL_P2P_DISABLE=1: gradients through host memory, like two RTX 4090s.", c});
  }
  return p;
}

}  // namespace

const std::vector<TrialPreset>& trial_presets() {
  static const std::vector<TrialPreset> presets = make_presets();
  return presets;
}

std::optional<TrialConfig> trial_preset(std::string_view name) {
  for (const auto& p : trial_presets())
    if (p.name == name) return p.config;
  return std::nullopt;
}

}  // namespace tunebench::config
