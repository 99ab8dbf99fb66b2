#include "core/predict/attention.h"

#include <algorithm>
#include <cstdio>
#include <iterator>
#include <map>

namespace tunebench::predict {

namespace {

using config::Amp;
using config::Attention;

bool sixteen_bit(const config::TrialConfig& c) {
  if (c.strategy == config::Strategy::Fsdp && c.fsdp_param_dtype != config::DType::Fp32) return true;
  return c.amp == Amp::Bf16 || c.amp == Amp::Fp16 || c.amp == Amp::PureBf16 || c.amp == Amp::Fp8;
}

int64_t round_up(int64_t v, int64_t m) { return (v + m - 1) / m * m; }

}  // namespace

std::vector<AttentionKernel> rank_attention(const std::vector<std::pair<AttentionKernel, double>>& measured) {
  std::vector<std::pair<AttentionKernel, double>> runnable;
  for (const auto& m : measured)
    if (m.second > 0) runnable.push_back(m);
  std::stable_sort(runnable.begin(), runnable.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  std::vector<AttentionKernel> out;
  for (const auto& r : runnable) out.push_back(r.first);
  return out;
}

double attention_tflops(AttentionKernel kernel, int64_t head_dim, bool grouped, const hardware::Catalogue& cat) {
  if (head_dim <= 0) return 0;
  if (kernel == AttentionKernel::Math)
    return cat.constant("attention_math_relative") * attention_tflops(AttentionKernel::Cudnn, 128, false, cat);
  const std::string prefix =
      std::string("attention_tflops_") + to_string(kernel) + (grouped ? "_gqa" : "_mha") + "_hd";
  std::map<int64_t, double> table;  // handed head size -> TFLOP/s computed at that size
  for (auto it = cat.constants.lower_bound(prefix); it != cat.constants.end() && it->first.rfind(prefix, 0) == 0; ++it)
    table[std::stoll(it->first.substr(prefix.size()))] = it->second.value;
  if (table.empty()) return 0;
  const int64_t handed = round_up(head_dim, 8);
  double at_handed;
  const auto hi = table.lower_bound(handed);
  if (hi == table.end())
    at_handed = std::prev(hi)->second;
  else if (hi->first == handed || hi == table.begin())
    at_handed = hi->second;
  else {
    const auto lo = std::prev(hi);
    const double f = static_cast<double>(handed - lo->first) / static_cast<double>(hi->first - lo->first);
    at_handed = lo->second + f * (hi->second - lo->second);
  }
  return at_handed * static_cast<double>(head_dim) / static_cast<double>(handed);  // padded columns do no work
}

double attention_speed(AttentionKernel kernel, int64_t head_dim, bool grouped, const hardware::Catalogue& cat) {
  const double reference = attention_tflops(AttentionKernel::Cudnn, 128, false, cat);
  return reference > 0 ? attention_tflops(kernel, head_dim, grouped, cat) / reference : 1.0;
}

std::vector<AttentionChoice> attention_candidates(const config::TrialConfig& c, bool cuda,
                                                  const hardware::Catalogue& cat) {
  const int64_t hd = c.dims.head_dim();
  const bool grouped = c.dims.kv_head_count() < c.dims.heads;
  const bool half = sixteen_bit(c);
  const std::string dtype = half ? (c.amp == Amp::Fp16 ? "fp16" : "bf16") : "fp32";
  const std::string size = " head size " + std::to_string(hd);
  const auto make = [&](AttentionKernel k, const std::string& why) {
    AttentionChoice a;
    a.kernel = k;
    a.head_dim = hd;
    a.padded_head_dim = half && k != AttentionKernel::Math ? round_up(hd, 8) : hd;
    a.why = why;
    if (a.padded_head_dim != hd) a.why += ", padded to " + std::to_string(a.padded_head_dim);
    return a;
  };
  if (!cuda) return {make(AttentionKernel::Math, "the CPU runs the composite math")};
  const auto forced = [&](AttentionKernel k) {
    return std::vector<AttentionChoice>{make(k, std::string("attention=") + to_string(k) + " (" + dtype + size + ")")};
  };
  switch (c.attention) {
    case Attention::Flash: return forced(AttentionKernel::Flash);
    case Attention::Cudnn: return forced(AttentionKernel::Cudnn);
    case Attention::Efficient: return forced(AttentionKernel::Efficient);
    case Attention::Math: return forced(AttentionKernel::Math);
    case Attention::Auto: break;
  }
  if (!half) return {make(AttentionKernel::Efficient, "auto: efficient for fp32" + size + " (flash and cuDNN run 16 bits)")};
  std::vector<std::pair<AttentionKernel, double>> measured;
  for (const auto k : {AttentionKernel::Cudnn, AttentionKernel::Flash, AttentionKernel::Efficient})
    measured.emplace_back(k, attention_tflops(k, hd, grouped, cat));
  std::vector<AttentionChoice> out;
  for (const auto k : rank_attention(measured)) {
    const double tf = std::find_if(measured.begin(), measured.end(), [&](const auto& m) { return m.first == k; })->second;
    char rate[32];
    std::snprintf(rate, sizeof rate, "%.0f", tf);
    out.push_back(make(k, std::string("auto: ") + to_string(k) + " for " + dtype + size + (grouped ? " grouped" : "") +
                              ", measured " + rate + " TFLOP/s"));
  }
  if (out.empty()) out.push_back(make(AttentionKernel::Flash, "auto: flash for " + dtype + size + " (nothing measured)"));
  return out;
}

AttentionChoice attention_choice(const config::TrialConfig& c, bool cuda, const hardware::Catalogue& cat) {
  return attention_candidates(c, cuda, cat).front();
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

}  // namespace tunebench::predict
