#include "core/rules/optimizer_rules.h"

#include <algorithm>

namespace tunebench::rules {

bool optimizer_weight_copies_apply(const config::TrialConfig& c, bool cuda) {
  return cuda && c.compile == config::Compile::Fused &&
         (c.amp == config::Amp::Bf16 || (c.amp == config::Amp::Fp8 && !c.optimizer_overlap)) &&
         c.optimizer == config::Optimizer::AdamW && c.fused_optimizer && c.strategy == config::Strategy::Single;
}

int64_t weight_copies_added_bytes(const config::TrialConfig& c, int64_t largest_unit_bytes, int64_t all_bytes) {
  return c.optimizer_overlap ? all_bytes : largest_unit_bytes;
}

bool weight_copies_fit(int64_t added_bytes, int64_t free_bytes) { return free_bytes < 0 || added_bytes <= free_bytes; }

bool half_weight_grads(const config::TrialConfig& c, bool cuda) {
  return c.grad_dtype == config::DType::Bf16 && c.amp == config::Amp::Bf16 && c.grad_accum == 1 &&
         !c.optimizer_overlap && optimizer_weight_copies_apply(c, cuda);
}

int64_t loss_chunk_rows(int64_t rows, int64_t vocab) {
  return std::max<int64_t>(1, std::min<int64_t>(rows, (int64_t{1} << 28) / std::max<int64_t>(vocab, 1)));
}

}  // namespace tunebench::rules
