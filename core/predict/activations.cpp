#include "core/predict/activations.h"

#include <algorithm>
#include <cmath>

#include "core/predict/attention.h"
#include "core/predict/memory_model.h"
#include "core/rules/optimizer_rules.h"

namespace tunebench::predict {

namespace {

double sum(const std::vector<SavedTensor>& list) {
  double s = 0;
  for (const auto& t : list) s += t.bytes_per_token;
  return s;
}

std::string dtype_name(int bytes) { return bytes == 4 ? "fp32" : "16-bit"; }

// RMSNorm as llama.cpp writes it: w * (xf * rsqrt(mean(xf^2) + eps)).to(x.dtype), xf = x.to(fp32),
// followed by the linear layer that consumes it. With an fp32 input xf *is* x.
void add_norm(std::vector<SavedTensor>& out, const std::string& op, double D, const Precision& p) {
  const double r = p.residual_bytes, c = p.compute_bytes;
  if (r == 4) {
    out.push_back({op, "input (fp32 residual, kept by pow and mul)", 4 * D});
    out.push_back({op, "normalised (fp32, kept by the weight multiply)", 4 * D});
    if (p.autocast)
      out.push_back({op, "output cast to " + dtype_name(static_cast<int>(c)) + " (kept by the linear)", c * D});
    else
      out.push_back({op, "output (fp32, kept by the linear)", 4 * D});
  } else {
    out.push_back({op, "input widened to fp32 (kept by pow and mul)", 4 * D});
    out.push_back({op, "normalised, back in the residual dtype (kept by the weight multiply)", r * D});
    out.push_back({op, "output (kept by the linear)", r * D});
  }
}

}  // namespace

ExecutionMode execution_mode(const config::TrialConfig& c, bool cuda) {
  ExecutionMode m;
  m.kernels = config::uses_fused_kernels(c.compile) ? KernelMode::Fused : KernelMode::Eager;
  m.cuda_graph = config::uses_cuda_graph(c.compile) && cuda;
  m.math_attention = !cuda;
  m.cuda = cuda;
  const AttentionChoice a = attention_choice(c, cuda);
  if (a.head_dim > 0) m.head_pad = static_cast<double>(a.padded_head_dim) / static_cast<double>(a.head_dim);
  m.weight_copies = rules::optimizer_weight_copies_apply(c, cuda);
  m.half_weight_grads = rules::half_weight_grads(c, cuda);
  return m;
}

double BlockActivations::saved_bytes_per_token() const { return sum(saved); }
double HeadActivations::saved_bytes_per_token() const { return sum(saved); }

BlockActivations block_activations(const config::ModelDims& d, int64_t seq_len, const Precision& p,
                                   const ExecutionMode& mode) {
  const double D = static_cast<double>(d.dim), F = static_cast<double>(d.ffn), H = static_cast<double>(d.heads);
  const double KV = static_cast<double>(d.kv_dim()), pad = mode.head_pad;
  const double T = static_cast<double>(seq_len);
  const double r = p.residual_bytes, c = p.compute_bytes;
  BlockActivations b;
  auto& s = b.saved;
  if (mode.kernels == KernelMode::Fused) {
    // fused_ops.cpp: rms_norm keeps (x, w, rstd); LinearFunction keeps its compute-dtype input;
    // rope_qkv returns q, k, v as copies and keeps only the tables; add_rms_norm keeps h; swiglu
    // keeps gu; an fp8 linear keeps its input as a float8 transpose instead.
    const double in = p.fp8 ? 1.0 : c;  // what a block linear keeps of its input, per element
    s.push_back({"attn_norm", "input (the residual stream)", r * D});
    s.push_back({"attn_norm", "rstd (fp32 per token)", 4});
    s.push_back({"wqkv", p.fp8 ? "input as float8 (transposed)" : "input: the norm's output", in * D});
    s.push_back({"rope_qkv",
                 pad > 1 ? "q, k, v (the kernel's copies, heads padded for flash)" : "q, k, v (the kernel's copies)",
                 c * (D + 2 * KV) * pad});
    s.push_back({"sdpa", "output", c * D * pad});
    s.push_back({"sdpa", "log-sum-exp (fp32 per head)", 4 * H});
    if (pad > 1 && !p.fp8) s.push_back({"wo", "input: the output without its padding", c * D});
    if (p.fp8) s.push_back({"wo", "input as float8 (transposed)", D});
    s.push_back({"add_rms_norm", "h = x + attention (the residual stream)", r * D});
    s.push_back({"add_rms_norm", "rstd (fp32 per token)", 4});
    s.push_back({"w13", p.fp8 ? "input as float8 (transposed)" : "input: the norm's output", in * D});
    s.push_back({"swiglu", "gate and up projections", 2 * F * c});
    s.push_back({"w2", p.fp8 ? "input as float8 (transposed)" : "input silu(gate) * up", in * F});
  } else {
    add_norm(s, "attn_norm", D, p);
    s.push_back({"wqkv", "q, k, v (one buffer; v and the rotary inputs are views of it)", (D + 2 * KV) * c});
    s.push_back({"rope", "q and k after rotation", (D + KV) * c});
    if (mode.math_attention) {
      if (KV < D) s.push_back({"sdpa (math)", "k and v repeated to the query heads", 2 * D * c});
      s.push_back({"sdpa (math)", "scaled q", D * c});
      s.push_back({"sdpa (math)", "attention probabilities (T per head)", H * T * c});
      s.push_back({"sdpa (math)", "output", D * c});
      s.push_back({"wo", "input (output transposed into a copy)", D * c});
    } else {
      if (pad > 1) s.push_back({"sdpa (flash)", "q, k, v padded to a multiple of 8", (D + 2 * KV) * c * pad});
      s.push_back({"sdpa", "output", D * c * pad});
      s.push_back({"sdpa", "log-sum-exp (fp32 per head)", 4 * H});
      if (pad > 1) s.push_back({"wo", "input (the output without its padding, a copy)", D * c});
    }
    add_norm(s, "ffn_norm", D, p);
    s.push_back({"w13", "gate and up projections (SwiGLU input)", 2 * F * c});
    s.push_back({"swiglu", "silu(gate) (kept by the product)", F * c});
    s.push_back({"w2", "input silu(gate) * up", F * c});
  }
  // Residual adds keep nothing; the block output is the next block's norm input (counted there).
  b.checkpoint_bytes_per_token = r * D;
  // Transients. Forward: the fp32 rotary temporaries of q and k (half-width products, sums, the
  // stack); fused kernels rotate in registers.
  const double rope_fp32 = 4 * (D + KV);
  b.forward_transient_per_token = mode.kernels == KernelMode::Eager ? rope_fp32 : 0.0;
  // A checkpointed block's forward runs without grad, so nothing is kept and the live set peaks
  // at the attention call (x, qkv, q, k, output, rotary temporaries) or in the feed-forward
  // (x, h, gate/up, silu, product).
  b.nograd_forward_peak_per_token =
      std::max(r * D + (2 * (D + 2 * KV) + 2 * D) * c * pad + b.forward_transient_per_token, 2 * r * D + 4 * F * c);
  // Backward: the residual gradient plus the largest group of op gradients alive together
  // (feed-forward: d(product), d(gate, up), d(input); attention: d(out), dq, dk, dv, d(qkv)).
  b.backward_transient_per_token = r * D + std::max(3 * F * c + D * c, (3 * D + 4 * KV) * c * pad);
  return b;
}

HeadActivations head_activations(const config::ModelDims& d, const Precision& p, const ExecutionMode& mode,
                                 double tokens) {
  const double D = static_cast<double>(d.dim), V = static_cast<double>(d.vocab);
  const double c = p.compute_bytes, r = p.residual_bytes;
  HeadActivations h;
  if (mode.kernels == KernelMode::Eager) {
    add_norm(h.saved, "norm", D, p);
    // logits (compute dtype) -> .to(fp32) -> log_softmax (keeps its fp32 output) -> nll.
    h.saved.push_back({"cross_entropy", "log-probabilities (fp32)", 4 * V});
    // While the loss runs: the logits (held by the caller until forward returns) and their fp32
    // copy (the same tensor when the compute dtype is fp32).
    h.forward_transient_per_token = c * V + (c == 4 ? 0.0 : 4 * V);
    // Backward: d(log-probabilities) and d(fp32 logits), both fp32, beside the kept output.
    h.backward_transient_per_token = 8 * V;
  } else {
    // rms_norm keeps its input; linear_cross_entropy computes the loss and both gradients in
    // forward, a chunk of at most 2^28 logits at a time, and keeps dh and dW (the weight's dtype).
    h.saved.push_back({"norm", "input (the residual stream)", r * D});
    h.saved.push_back({"norm", "rstd (fp32 per token)", 4});
    h.saved.push_back({"linear_cross_entropy", "input gradient dh (compute dtype)", c * D});
    const double weight_bytes = p.param_bytes == 4 ? 4.0 : c;
    h.saved_fixed_bytes = V * D * weight_bytes;
    // While the loss runs: one chunk's logits and, from the second chunk on, that chunk's dW beside
    // the sum (one chunk: its dW is the sum, already counted as saved).
    const double chunk_rows =
        static_cast<double>(rules::loss_chunk_rows(static_cast<int64_t>(tokens), static_cast<int64_t>(d.vocab)));
    const bool chunked = chunk_rows < tokens;
    h.forward_transient_fixed_bytes = chunk_rows * V * c + (chunked ? V * D * weight_bytes : 0.0);
    h.backward_transient_per_token = r * D;  // dh scaled into the residual dtype
    // (dW scaled by the loss gradient becomes the weight's gradient: counted as the head's gradient)
  }
  return h;
}

}  // namespace tunebench::predict
