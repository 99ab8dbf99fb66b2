#include "core/rules/attention.h"

#include <algorithm>
#include <cstdio>

namespace tunebench::rules {

namespace {

using config::Amp;
using config::Attention;

bool sixteen_bit(const config::TrialConfig& c) {
  if (c.strategy == config::Strategy::Fsdp && c.fsdp_param_dtype != config::DType::Fp32) return true;
  return c.amp == Amp::Bf16 || c.amp == Amp::Fp16 || c.amp == Amp::PureBf16 || c.amp == Amp::Fp8;
}

std::string dtype_of(const config::TrialConfig& c) {
  return sixteen_bit(c) ? (c.amp == Amp::Fp16 ? "fp16" : "bf16") : "fp32";
}

int64_t round_up(int64_t v, int64_t m) { return (v + m - 1) / m * m; }

AttentionChoice make(const config::TrialConfig& c, AttentionKernel k, const std::string& why) {
  AttentionChoice a;
  a.kernel = k;
  a.head_dim = c.dims.head_dim();
  a.padded_head_dim = sixteen_bit(c) && k != AttentionKernel::Math ? round_up(a.head_dim, 8) : a.head_dim;
  a.why = why;
  if (a.padded_head_dim != a.head_dim) a.why += ", padded to " + std::to_string(a.padded_head_dim);
  return a;
}

}  // namespace

std::vector<AttentionChoice> attention_candidates(const config::TrialConfig& c, bool cuda) {
  const std::string size = " head size " + std::to_string(c.dims.head_dim());
  if (!cuda) return {make(c, AttentionKernel::Math, "the CPU runs the composite math")};
  const auto forced = [&](AttentionKernel k) {
    return std::vector<AttentionChoice>{
        make(c, k, std::string("attention=") + to_string(k) + " (" + dtype_of(c) + size + ")")};
  };
  switch (c.attention) {
    case Attention::Flash: return forced(AttentionKernel::Flash);
    case Attention::Cudnn: return forced(AttentionKernel::Cudnn);
    case Attention::Efficient: return forced(AttentionKernel::Efficient);
    case Attention::Math: return forced(AttentionKernel::Math);
    case Attention::Auto: break;
  }
  if (!sixteen_bit(c))
    return {make(c, AttentionKernel::Efficient, "auto: efficient for fp32" + size + " (flash and cuDNN run 16 bits)")};
  std::vector<AttentionChoice> out;
  for (const auto k : {AttentionKernel::Cudnn, AttentionKernel::Flash, AttentionKernel::Efficient})
    out.push_back(make(c, k, std::string("auto: ") + to_string(k)));  // why: set when ranked
  return out;
}

std::vector<AttentionKernel> rank_attention(const std::vector<std::pair<AttentionKernel, double>>& speeds) {
  std::vector<std::pair<AttentionKernel, double>> runnable;
  for (const auto& s : speeds)
    if (s.second > 0) runnable.push_back(s);
  std::stable_sort(runnable.begin(), runnable.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  std::vector<AttentionKernel> out;
  for (const auto& r : runnable) out.push_back(r.first);
  return out;
}

std::vector<AttentionChoice> rank_candidates(const config::TrialConfig& c, const std::vector<AttentionChoice>& candidates,
                                             const std::vector<double>& tflops, const std::string& how) {
  std::vector<std::pair<AttentionKernel, double>> speeds;
  for (size_t i = 0; i < candidates.size(); ++i) speeds.emplace_back(candidates[i].kernel, i < tflops.size() ? tflops[i] : 0.0);
  const bool grouped = c.dims.kv_head_count() < c.dims.heads;
  std::vector<AttentionChoice> out;
  for (const auto k : rank_attention(speeds)) {
    const auto at = std::find_if(speeds.begin(), speeds.end(), [&](const auto& s) { return s.first == k; });
    char rate[32];
    std::snprintf(rate, sizeof rate, "%.0f", at->second);
    out.push_back(make(c, k, std::string("auto: ") + to_string(k) + " for " + dtype_of(c) + " head size " +
                                 std::to_string(c.dims.head_dim()) + (grouped ? " grouped" : "") + ", " + how +
                                 " " + rate + " TFLOP/s"));
  }
  return out;
}

double attention_fwd_bwd_flops(int64_t batch, int64_t heads, int64_t seq, int64_t head_dim) {
  const double forward = 4.0 * static_cast<double>(batch) * static_cast<double>(heads) * static_cast<double>(seq) *
                         static_cast<double>(seq) * static_cast<double>(head_dim) / 2.0;
  return forward * 3.5;
}

const char* to_string(AttentionKernel kernel) {
  switch (kernel) {
    case AttentionKernel::Math:
      return "math";
    case AttentionKernel::Flash:
      return "flash";
    case AttentionKernel::Cudnn:
      return "cudnn";
    case AttentionKernel::Efficient:
      return "efficient";
  }
  return "?";
}

}  // namespace tunebench::rules
