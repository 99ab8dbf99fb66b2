// When the optimizer writes the next forward's weights and when the weight gradients stay in
// bf16: the rules the engine follows and the memory and step models assume.
//
// `compile fused` AdamW (the worker's own kernel) can write each weight's compute-dtype copy for
// the next forward in its pass, which then reads it instead of casting (the bytes a forward's
// casts hold until backward, here from the optimizer step on). Under amp fp8 a block's copies are
// its matmul weights' float8 casts (the weight and its transpose, as the forward's cast would
// write them) and the rest keep 16 bits.
#pragma once

#include <cstdint>

#include "core/config/trial_config.h"

namespace tunebench::rules {

// Where the copies may be written: one GPU (`cuda`), compile fused (no CUDA graph), amp bf16 or
// fp8 (fp8 not with optimizer_overlap: its updates run before the step's float8 amax is rolled
// into the history that scales the weights they would write), AdamW with fused_optimizer, one
// rank. The worker also needs its AdamW kernel running; the predictions assume it where the
// libtorch has fused AdamW.
bool optimizer_weight_copies_apply(const config::TrialConfig& config, bool cuda);

// The most the copies add to the step's peak, from the bytes of the largest unit's copies and of
// all units'. The serial update writes them unit by unit as each unit's gradients go (a unit's
// copies are allocated before its gradients are freed), and the forward reads each instead of
// casting it: one unit's at most. With optimizer_overlap a unit is updated as soon as its last
// gradient is in, while the backward still holds the activations: all of them.
int64_t weight_copies_added_bytes(const config::TrialConfig& config, int64_t largest_unit_bytes, int64_t all_bytes);

// Whether the copies are written where they apply: the device holds what they add beside the step
// without them. `free_bytes`: the device's memory left over by that step (negative: unknown, taken
// as room). The worker measures it after step 0, which runs without them; the memory model
// predicts it.
bool weight_copies_fit(int64_t added_bytes, int64_t free_bytes);

// grad_dtype bf16: the blocks' matmul weights keep their gradients in bf16. The fused linears'
// backward writes dW in bf16 from the GEMM (the rounding PyTorch's autocast gives its dW before
// casting it to fp32) and the project's AdamW kernel reads it so: 2 bytes a parameter less to
// write, hold and read. Where the copies apply (optimizer_weight_copies_apply), in bf16 with one
// micro-step and no optimizer_overlap; the other parameters (norms, embedding, head) keep fp32.
// The worker (with its AdamW kernel running), the memory model and the step model follow this.
bool half_weight_grads(const config::TrialConfig& config, bool cuda);

// Rows per chunk of the fused linear + cross-entropy: logits of at most 2^28 elements (512 MB in
// bf16) exist at a time. The engine's kernel chunks by it; the memory model counts by it.
int64_t loss_chunk_rows(int64_t rows, int64_t vocab);

}  // namespace tunebench::rules
