#include "core/predict/attention.h"

#include <iterator>
#include <map>
#include <string>

namespace tunebench::predict {

namespace {

int64_t round_up(int64_t v, int64_t m) { return (v + m - 1) / m * m; }

}  // namespace

double attention_tflops(AttentionKernel kernel, int64_t head_dim, bool grouped, const hardware::Catalogue& cat) {
  if (head_dim <= 0) return 0;
  if (kernel == AttentionKernel::Math)
    return cat.constant("attention_math_relative") * attention_tflops(AttentionKernel::Cudnn, 128, false, cat);
  const std::string prefix =
      std::string("attention_tflops_") + rules::to_string(kernel) + (grouped ? "_gqa" : "_mha") + "_hd";
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
  const std::vector<AttentionChoice> candidates = rules::attention_candidates(c, cuda);
  const int64_t hd = c.dims.head_dim();
  const bool grouped = c.dims.kv_head_count() < c.dims.heads;
  if (candidates.size() == 1 && candidates.front().kernel != AttentionKernel::Math &&
      attention_tflops(candidates.front().kernel, hd, grouped, cat) <= 0) {
    // One kernel, and it cannot run here (the memory-efficient kernel takes no grouped heads, so
    // fp32 with grouped-query attention): auto gets PyTorch's fallback, the math, as the engine
    // does (core/engine/attention_choice.cpp); a forced kernel is refused by the run.
    const AttentionChoice& only = candidates.front();
    AttentionChoice math = rules::attention_candidates(
        [&] { config::TrialConfig m = c; m.attention = config::Attention::Math; return m; }(), cuda).front();
    math.why = std::string(rules::to_string(only.kernel)) + " cannot run head size " + std::to_string(hd) +
               (grouped ? " grouped" : "") + " (nothing measured there): " +
               (c.attention == config::Attention::Auto ? "auto falls back to the math, as PyTorch does"
                                                       : "the run refuses it; priced as the math");
    return {math};
  }
  if (candidates.size() <= 1) return candidates;
  std::vector<double> tflops;
  for (const auto& k : candidates) tflops.push_back(attention_tflops(k.kernel, hd, grouped, cat));
  std::vector<AttentionChoice> ranked = rules::rank_candidates(c, candidates, tflops, "measured");
  if (ranked.empty()) {  // the catalogue knows none of them here: flash, as PyTorch would try first
    for (const auto& k : candidates)
      if (k.kernel == AttentionKernel::Flash) ranked.push_back(k);
    ranked.front().why += " (nothing measured at head size " + std::to_string(hd) + ")";
  }
  return ranked;
}

AttentionChoice attention_choice(const config::TrialConfig& c, bool cuda, const hardware::Catalogue& cat) {
  return attention_candidates(c, cuda, cat).front();
}

}  // namespace tunebench::predict
