#include "core/predict/step_work.h"

#include <algorithm>
#include <cmath>

#include "core/predict/model_shape.h"

namespace tunebench::predict {

namespace {

using config::Strategy;

struct Ctx {
  double t = 0;  // tokens per micro-step (micro_batch x seq_len)
  double T = 0;  // sequence length
  double D = 0, F = 0, V = 0, L = 0;
  double KV = 0;  // width of k and of v (= D without grouped-query attention)
  double r = 4, c = 4, pb = 4;
  Precision p;
  ExecutionMode mode;
  AttentionChoice attention;
};

OpCost make_op(const std::string& name, OpKind kind, bool fp8, double flops, double bytes, double kernels) {
  OpCost op;
  op.name = name;
  op.kind = kind;
  op.fp8 = fp8;
  op.flops = flops;
  op.bytes = bytes;
  op.kernels = kernels;
  return op;
}

OpCost matmul(const std::string& name, const Ctx& x, double in, double out, double count) {
  // y[t, out] = x[t, in] W[out, in]^T: 2 t in out FLOPs; operands and result move once.
  OpCost op = make_op(name, OpKind::Matmul, false, count * 2 * x.t * in * out,
                      count * x.c * (x.t * in + in * out + x.t * out), count);
  op.gemm = GemmShape{x.t, out, in};
  return op;
}

OpCost memory(const std::string& name, double bytes, double kernels) {
  return make_op(name, OpKind::Memory, false, 0, bytes, kernels);
}

// RMSNorm bytes per token. Eager: widen (when the residual is 16-bit), pow, mean, mul by rsqrt,
// narrow, weight multiply, and the autocast cast for the linear after it. Fused: one kernel reads
// the residual and writes `out` bytes per element (the compute dtype's by default) and rstd.
double norm_bytes_per_token(const Ctx& x, double out = 0) {
  const double D = x.D, r = x.r;
  if (x.mode.kernels == KernelMode::Fused) return (r + (out > 0 ? out : x.c)) * D + 4;
  double b = 0;
  if (r != 4) b += (r + 4) * D;  // x.to(fp32)
  b += 8 * D + 4 * D;            // pow (r+w), mean (r)
  b += 8 * D;                    // xf * rsqrt
  if (r != 4) b += (4 + r) * D;  // .to(x dtype)
  b += 2 * r * D;                // w * normed
  if (x.p.autocast) b += (r + x.c) * D;
  return b;
}
double norm_kernels(const Ctx& x) {
  if (x.mode.kernels == KernelMode::Fused) return 1;
  return 6 + (x.r != 4 ? 2 : 0) + (x.p.autocast ? 1 : 0);
}

// Rotary embedding of q and k: four half-width products to fp32, two sums, a stack and the cast
// back (eager); one kernel reading qkv and writing q, k, v (fused).
// The fused kernel reads q, k, v and writes them (k and v KV wide); eager rotates q (D) and k (KV).
double rope_bytes_per_token(const Ctx& x) {
  const double D = x.D, c = x.c, qkv = D + 2 * x.KV;
  if (x.mode.kernels == KernelMode::Fused)
    return 2 * c * qkv * x.attention.padded_head_dim / std::max<double>(1, x.attention.head_dim);
  const auto one = [&](double w) { return 4 * (c * w / 2 + 4 * w / 2) + 2 * (4 * w + 2 * w) + 8 * w + (4 + c) * w; };
  return one(D) + one(x.KV);
}

// A block linear: bf16/fp16 (or fp32) GEMM, or under amp fp8 a float8 GEMM whose input cast (with
// its transposed copy for backward) is a kernel of its own, and whose output gradient's is too,
// except where the kernels that make those values write them (SwiGLU: w2's input and w13's output
// gradient; the rotary backward: wqkv's). `gradient_bytes`: what that gradient's cast reads per
// element (0: none of its own).
void block_linear(PhaseWork& w, const Ctx& x, const std::string& name, double in, double out, bool input_cast,
                  double gradient_bytes) {
  OpCost op = matmul(name, x, in, out, 1);
  if (x.p.fp8) {
    op.fp8 = true;
    op.bytes = x.t * in + in * out + x.t * out * x.c;  // float8 operands, 16-bit output
    op.gradient_cast = gradient_bytes;
    if (input_cast) w.ops.push_back(memory(name + " input cast to float8", x.t * in * (x.c + 2), 1));
  }
  w.ops.push_back(op);
}

void block_forward(PhaseWork& w, const Ctx& x, const std::string& tag) {
  const double D = x.D, F = x.F, t = x.t, c = x.c, r = x.r;
  const bool eager = x.mode.kernels == KernelMode::Eager;
  // Under amp fp8 the fused norms write the float8 inputs of wqkv and w13 themselves, in both layouts,
  // instead of a 16-bit output for a cast kernel (kernels::rms_norm_fp8, which takes widths and
  // token counts that are multiples of 16, widths up to 8192).
  const bool norm_casts = x.p.fp8 && !eager && std::fmod(D, 16) == 0 && D <= 8192 && std::fmod(t, 16) == 0;
  if (eager) {
    w.ops.push_back(memory(tag + "norms", 2 * t * norm_bytes_per_token(x), 2 * norm_kernels(x)));
  } else {
    // rms_norm before attention; add_rms_norm (residual add + norm, reading the attention output and
    // writing h) before the feed-forward; each writes its output once in the compute dtype, or as
    // float8 twice
    const double out = norm_casts ? 2 : c;
    w.ops.push_back(memory(tag + "norms", t * (norm_bytes_per_token(x, out) + (2 * r + c + out) * D), 2));
  }
  // SDPA's flash path pads q, k, v to a multiple of 8 itself unless the fused rotary kernel
  // already wrote them padded (eager: three padding copies and the output's narrow).
  const double pad = x.attention.padded_head_dim / std::max<double>(1, x.attention.head_dim);
  // Under amp fp8 the projection and the rotation are one node whose backward writes wqkv's output
  // gradient as float8 in both layouts, for head sizes that are multiples of 16 (kernels/fp8_linear.h;
  // kernels::rope_qkv_backward_fp8 takes no other).
  const double qkv = D + 2 * x.KV;
  const bool rope_casts = x.p.fp8 && x.attention.head_dim % 16 == 0;
  block_linear(w, x, tag + "wqkv", D, qkv, !norm_casts, rope_casts ? 0 : c);
  OpCost rotary = memory(tag + "rotary", t * rope_bytes_per_token(x), eager ? 16 : 1);
  if (rope_casts) rotary.backward_bytes = t * qkv * (c * pad + 2);  // reads dq, dk, dv; writes float8 twice
  w.ops.push_back(rotary);
  if (eager && pad > 1) w.ops.push_back(memory(tag + "attention head padding", t * c * (D + 2 * x.KV) * (1 + pad), 3));
  // Causal attention: QK^T and PV over the lower triangle, 2 t T D FLOPs (the query heads); q, out
  // D wide, k, v KV wide.
  OpCost att = make_op(tag + "attention", OpKind::Attention, false, 2 * t * x.T * D, 2 * t * (D + x.KV) * c * pad, 1);
  att.attention = x.attention.kernel;
  att.head_dim = x.attention.head_dim;
  att.grouped = x.KV < D;
  w.ops.push_back(att);
  if (pad > 1) w.ops.push_back(memory(tag + "attention output unpadded", 2 * t * D * c, 1));
  if (x.mode.math_attention) w.ops.push_back(memory(tag + "attention output copy", 2 * t * D * c, 1));
  // Grouped-query attention without fused support (libtorch 1.13, the CPU): k and v repeated.
  if (x.mode.math_attention && x.KV < D)
    w.ops.push_back(memory(tag + "k/v repeated to the query heads", 4 * t * D * c, 2));
  block_linear(w, x, tag + "wo", D, D, true, c);
  // Eager: both residual adds; fused: only the block's last (the first is in add_rms_norm).
  w.ops.push_back(memory(tag + "residual adds", (eager ? 2 : 1) * t * (c + 2 * r) * D, eager ? 2 : 1));
  // Under amp fp8 the feed-forward is one node (kernels/fp8_linear.h): SwiGLU writes w2's input as
  // float8 in both layouts, and its backward w13's output gradient the same way; w2's output
  // gradient is cast from the residual's as it comes.
  const bool fp8 = x.p.fp8;
  block_linear(w, x, tag + "w13", D, 2 * F, !norm_casts, fp8 ? 0 : c);
  // silu(gate) * up: two kernels eager (read gate, write silu; read silu and up, write product).
  OpCost swiglu = memory(tag + "swiglu",
                         t * (eager ? 2 * c * F + 3 * c * F
                              : fp8 ? 2 * c * F + 2 * F
                                    : 3 * c * F),
                         eager ? 2 : 1);
  if (fp8) swiglu.backward_bytes = t * (3 * c * F + 2 * 2 * F);  // reads gate, up, d out; writes d gu twice
  w.ops.push_back(swiglu);
  block_linear(w, x, tag + "w2", F, D, !fp8, fp8 ? r : c);
}

}  // namespace

double PhaseWork::flops(OpKind kind) const {
  double s = 0;
  for (const auto& o : ops)
    if (o.kind == kind) s += o.flops;
  return s;
}
double PhaseWork::bytes() const {
  double s = 0;
  for (const auto& o : ops) s += o.bytes;
  return s;
}
double PhaseWork::kernels() const {
  double s = 0;
  for (const auto& o : ops) s += o.kernels;
  return s;
}

StepWork step_work(const config::TrialConfig& c, const Precision& p, const ExecutionMode& mode) {
  Ctx x;
  x.t = static_cast<double>(c.micro_batch * c.seq_len);
  x.T = static_cast<double>(c.seq_len);
  x.D = static_cast<double>(c.dims.dim);
  x.F = static_cast<double>(c.dims.ffn);
  x.V = static_cast<double>(c.dims.vocab);
  x.L = static_cast<double>(c.dims.layers);
  x.KV = static_cast<double>(c.dims.kv_dim());
  x.attention = attention_choice(c, mode.cuda);
  x.r = p.residual_bytes;
  x.c = p.compute_bytes;
  x.pb = p.param_bytes;
  x.p = p;
  x.mode = mode;
  const bool fsdp = c.strategy == Strategy::Fsdp;
  const bool ddp = c.strategy == Strategy::Ddp;
  const int n = std::max(1, c.world_size);
  const auto units = llama_units(c.dims);
  double numel = 0, matmul_numel = 0;
  for (const auto& u : units) {
    numel += static_cast<double>(u.numel());
    matmul_numel += static_cast<double>(u.matmul_numel());
  }
  const double block_matmul = units.size() > 2 ? static_cast<double>(units[1].matmul_numel()) : 0.0;
  const double L = x.L, t = x.t, D = x.D, V = x.V;

  StepWork s;
  // ---- forward -------------------------------------------------------------------------------
  PhaseWork& f = s.forward;
  f.ops.push_back(memory("embedding lookup", t * D * (x.pb + x.r), 1));
  // Every matmul weight cast from fp32 to the compute dtype once per forward (autocast, or the
  // fused ops); under amp fp8 the blocks' weights to float8 with their transposes.
  const double output_matrix = V * D;  // the head's matmul weight, tied to the embedding or not
  const double cast_per_param = 4 + (p.fp8 ? 2 : x.c);
  // (None where AdamW wrote the 16-bit or float8 weights in its own pass: memory_model.h.)
  if ((p.weight_copy_bytes > 0 || p.fp8) && !mode.weight_copies)
    f.ops.push_back(memory(
        "weight casts", L * block_matmul * cast_per_param + (p.weight_copy_bytes > 0 ? output_matrix * (4 + x.c) : 0.0),
        4 * L + 1));
  if (fsdp)  // gather(): the fp32 shard cast to the compute dtype before its all-gather
    f.ops.push_back(memory("FSDP shard casts", numel / n * (x.pb + p.gathered_bytes), L + 2));
  PhaseWork blocks;  // one block's ops, then scaled to all L (the forward's, and checkpointing's recompute)
  block_forward(blocks, x, "block ");
  for (auto& op : blocks.ops) {
    op.flops *= L;
    op.bytes *= L;
    op.kernels *= L;
    if (op.backward_bytes >= 0) op.backward_bytes *= L;
  }
  f.ops.insert(f.ops.end(), blocks.ops.begin(), blocks.ops.end());
  f.ops.push_back(memory("final norm", t * norm_bytes_per_token(x), norm_kernels(x)));
  f.ops.push_back(matmul("output head", x, D, V, 1));
  if (mode.kernels == KernelMode::Eager) {  // .to(fp32), log_softmax (two passes), nll
    f.ops.push_back(memory("cross-entropy", t * ((x.c == 4 ? 0 : (x.c + 4) * V) + 12 * V), 4));
  } else {
    // Fused linear cross-entropy: per chunk of rows the logits GEMM, the loss with the gradient
    // written over the logits (read and write), and already in forward the input and weight
    // gradients (two more GEMMs); backward only scales them.
    f.ops.push_back(memory("fused cross-entropy", t * x.c * V * 2, 1));
    OpCost dgrad = matmul("output head input gradient (in forward)", x, D, V, 1);
    dgrad.gemm = GemmShape{t, D, V};
    OpCost wgrad = matmul("output head weight gradient (in forward)", x, D, V, 1);
    wgrad.gemm = GemmShape{V, D, t};
    f.ops.push_back(dgrad);
    f.ops.push_back(wgrad);
  }

  // ---- recompute (checkpointing: each block's forward again, inside backward) ----------------
  if (c.checkpointing) {
    s.recompute.ops.insert(s.recompute.ops.end(), blocks.ops.begin(), blocks.ops.end());
    if (p.weight_copy_bytes > 0 || p.fp8)
      s.recompute.ops.push_back(memory("weight casts (recompute)", block_matmul * L * cast_per_param, 4 * L));
  }

  // ---- backward ------------------------------------------------------------------------------
  PhaseWork& b = s.backward;
  // Every linear: input gradient and weight gradient, each as many FLOPs as its forward (the fused
  // loss did the head's in forward). Float8 gradients go through an e5m2 cast of the output's.
  for (const auto& op : f.ops) {
    if (op.kind != OpKind::Matmul || (mode.kernels == KernelMode::Fused && op.name.rfind("output head", 0) == 0))
      continue;
    // y[t, out] = x[t, in] W^T: dx[t, in] = dy[t, out] W (K = out), dW[out, in] = dy^T x (K = t).
    OpCost dgrad = make_op(op.name + " (dgrad)", OpKind::Matmul, op.fp8, op.flops, op.bytes, op.kernels);
    dgrad.gemm = GemmShape{op.gemm.m, op.gemm.k, op.gemm.n};
    OpCost wgrad = make_op(op.name + " (wgrad)", OpKind::Matmul, op.fp8, op.flops, op.bytes, op.kernels);
    wgrad.gemm = GemmShape{op.gemm.n, op.gemm.k, op.gemm.m};
    b.ops.push_back(dgrad);
    b.ops.push_back(wgrad);
    if (op.fp8 && op.gradient_cast > 0) {
      const double dy_elements = op.flops / (2 * op.gemm.k);  // tokens x the linear's outputs
      b.ops.push_back(memory(op.name + " gradient cast to float8", dy_elements * (op.gradient_cast + 2), 1));
    }
  }
  if (mode.kernels == KernelMode::Fused) {
    // Scale dh and dW by the loss gradient (fused_ops.cpp). An fp32 head weight's dW is scaled in
    // place by kernels::scale_in_place, which writes nothing when the loss gradient is 1: it is not 1
    // with the loss divided over micro-steps or fp16's loss scale. A 16-bit head weight (pure bf16,
    // FSDP's gathered 16-bit units) takes the product into a new tensor every step.
    const bool scaled_loss = c.grad_accum > 1 || c.amp == config::Amp::Fp16;
    const double head_weight_bytes = fsdp ? p.gathered_bytes : p.param_bytes;
    const double dw_pass = scaled_loss || head_weight_bytes != 4 ? V * D * 2 * head_weight_bytes : 0.0;
    b.ops.push_back(memory("output head gradients scaled", t * D * (x.c + x.r) + dw_pass, 2));
  }
  // Attention backward recomputes the scores: 5 matmul-sized products against 2 in forward.
  for (const auto& op : f.ops) {
    if (op.kind != OpKind::Attention) continue;
    OpCost back = op;  // the same kernel and head size
    back.name = op.name + " backward";
    back.flops = 2.5 * op.flops;
    back.bytes = 2.25 * op.bytes;
    b.ops.push_back(back);
  }
  for (const auto& op : f.ops) {
    if (op.kind != OpKind::Memory || op.name == "weight casts" || op.name == "FSDP shard casts") continue;
    if (op.name == "embedding lookup" || op.name == "fused cross-entropy") continue;
    if (op.name.find("cast to float8") != std::string::npos) continue;
    b.ops.push_back(memory(op.name + " backward", op.backward_bytes >= 0 ? op.backward_bytes : 2 * op.bytes,
                           op.backward_bytes >= 0 ? op.kernels : 2 * op.kernels));
  }
  // Embedding backward: a table gradient (zeros, then index_add of t rows), of the whole table, or
  // (tied_lookup_rows) of the batch's rows only.
  const auto lookup_rows = static_cast<double>(c.lookup_gradient_rows());
  b.ops.push_back(memory("embedding backward", lookup_rows * D * 4 + 2 * t * D * 4, 2));
  // Tied embeddings: the lookup's gradient is added to the head's, a dense sum or those rows only.
  if (c.dims.tie_embeddings)
    b.ops.push_back(memory(c.tied_lookup_rows() ? "tied lookup rows added" : "tied embedding gradients summed",
                           lookup_rows * D * 3 * x.pb, 1));
  // Weight gradients: produced in the compute dtype and cast to the parameter dtype under autocast;
  // the fused ops write fp32 weight gradients straight from the GEMM.
  if (p.autocast) b.ops.push_back(memory("weight gradient casts", matmul_numel * (x.c + 4), 4 * L + 1));
  // Landing in .grad: stolen on the first micro-step of single runs; added in place into the DDP
  // bucket, an accumulated or graph-kept gradient, or FSDP's unit buffer (whose reduce dtype copy
  // follows).
  const bool in_place = ddp || fsdp || mode.cuda_graph;
  const double gb = fsdp ? p.gathered_bytes : x.pb;
  if (in_place) b.ops.push_back(memory("gradient accumulation into .grad", numel * 3 * gb, 6 * L + 3));
  if (fsdp) {
    b.ops.push_back(memory("FSDP gradient buffer zeroing", numel * gb, L + 2));
    if (p.reduce_bytes != gb) b.ops.push_back(memory("FSDP reduce dtype copies", numel * (gb + p.reduce_bytes), L + 2));
    if (c.fsdp_mode == config::FsdpMode::FullShard)
      b.ops.push_back(memory("FSDP shard casts (re-gather)", numel / n * (x.pb + p.gathered_bytes), L + 1));
  }
  if (ddp && c.compression != config::Compression::None)
    b.ops.push_back(memory("compression copies into the 16-bit buckets", numel * (x.pb + 2), 2 * L + 2));

  // ---- optimizer -----------------------------------------------------------------------------
  PhaseWork& o = s.optimizer;
  const double opt_params = fsdp ? numel / n : numel;  // what this rank updates
  const double ob = x.pb;
  const double accum_adds = (!in_place && c.grad_accum > 1) ? 1.0 : 0.0;
  if (accum_adds > 0)  // accumulation into existing single-GPU gradients, micro-steps 2..k
    b.ops.push_back(memory("gradient accumulation (micro-steps after the first)", numel * 3 * ob, 6 * L + 3));
  if (c.amp == config::Amp::Fp16) o.ops.push_back(memory("loss-scale unscale", opt_params * 2 * ob, 2));
  if (c.grad_clip > 0) o.ops.push_back(memory("gradient clipping (norm, scale)", opt_params * 3 * ob, 4));
  const bool fused = c.fused_optimizer && c.optimizer == config::Optimizer::AdamW && mode.cuda;
  if (c.optimizer == config::Optimizer::AdamW) {
    // Fused: one pass reads p, g, m, v and writes p, m, v. Foreach: eight passes (+ weight decay).
    const double passes = fused ? 7 : 21 + (c.weight_decay > 0 ? 2 : 0);
    // (half_weight_grads: the blocks' matmul weights' gradients are read in the compute dtype.)
    const double half_grads = mode.half_weight_grads ? L * block_matmul * (ob - x.c) : 0.0;
    o.ops.push_back(memory(fused ? "AdamW (fused)" : "AdamW (foreach)", opt_params * passes * ob - half_grads,
                           fused ? 4 : 9 * 4));
    if (fused && mode.weight_copies)
      o.ops.push_back(memory("AdamW's weights for the next forward (16-bit; float8 for fp8's linears)",
                             (numel - (c.dims.tie_embeddings ? 0.0 : V * D)) * x.c, 0));
  } else {
    o.ops.push_back(memory("SGD (foreach)", opt_params * (3 + (c.weight_decay > 0 ? 2 : 0)) * ob, 2));
  }
  if (ddp) o.ops.push_back(memory("DDP bucket zeroing", numel * ob, 1));
  if (ddp && c.compression != config::Compression::None)
    o.ops.push_back(memory("compression copies back to the buckets", numel * (x.pb + 2), 2 * L + 2));
  if (mode.cuda_graph) o.ops.push_back(memory("graph gradient zeroing", numel * ob, 4 * L));
  return s;
}

}  // namespace tunebench::predict
