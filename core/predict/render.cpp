#include "core/predict/render.h"

#include <cstdio>

#include "core/predict/text.h"

namespace tunebench::predict {

namespace {

std::string pad(const std::string& text, size_t width) {
  return text.size() >= width ? text : std::string(width - text.size(), ' ') + text;
}

std::string thousands(double v) {
  const long long n = static_cast<long long>(v + 0.5);
  std::string digits = std::to_string(n), out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

std::string where(const Prediction& p) {
  const auto& c = p.scenario.config;
  std::string s = std::to_string(c.world_size) + " x ";
  s += p.gpu ? p.gpu->name : (p.cuda ? p.scenario.gpu + " (not in the catalogue)" : std::string("CPU"));
  if (p.link) s += " over " + p.link->name;
  return s;
}

}  // namespace

std::string format_bytes(double bytes) {
  if (bytes >= kGiB) return fmt("%.1f GiB", bytes / kGiB);
  return fmt("%.0f MiB", bytes / (1024.0 * 1024.0));
}

std::string memory_line(const Prediction& p) {
  const bool shared = p.ranks_sharing_memory > 1;
  std::string s = std::string(p.cuda ? "Memory per GPU" : "Memory per rank") + ": peak " +
                  format_bytes(static_cast<double>(p.memory.peak_bytes)) + " (" + p.memory.peak_at + "); needs " +
                  format_bytes(static_cast<double>(p.memory.device_needed_bytes));
  if (shared)
    s += " x " + std::to_string(p.ranks_sharing_memory) + " ranks = " +
         format_bytes(static_cast<double>(p.memory.device_needed_bytes) * p.ranks_sharing_memory);
  if (p.device_memory_bytes > 0)
    s += " of " + format_bytes(static_cast<double>(p.device_memory_bytes)) + (p.cuda ? "" : " on this host") + ": " +
         to_string(p.fit);
  else
    s += " (the device's memory is unknown: no fit verdict)";
  return s;
}

std::string fit_sentence(const Prediction& p) {
  if (p.device_memory_bytes <= 0) return "";
  const double needed = static_cast<double>(p.memory.device_needed_bytes) * p.ranks_sharing_memory;
  const std::string of = format_bytes(static_cast<double>(p.device_memory_bytes));
  const std::string where = p.cuda ? "per GPU" : "for " + std::to_string(p.ranks_sharing_memory) + " rank(s) on this host";
  switch (p.fit) {
    case Fit::Fits:
      return "Fits: " + format_bytes(needed) + " " + where + " of " + of + ".";
    case Fit::Tight:
      return "Tight: " + format_bytes(needed) + " needed of " + of +
             "; the allocator may have to free its cache and retry.";
    default:
      return "Will not fit: needs " + format_bytes(needed) + " " + where + " but " +
             (p.cuda ? std::string("the GPU") : std::string("this host")) + " has " + of +
             ". Running it will end out of memory; try checkpointing, a smaller micro-batch, FSDP or pure-bf16.";
  }
}

std::string render_text(const Prediction& p) {
  const auto& c = p.scenario.config;
  std::string s =
      "Prediction: " + (c.name.empty() ? c.model + " " + std::string(config::to_string(c.strategy)) : c.name) + " on " +
      where(p) + "\n";
  s += "\n" + memory_line(p) + "\n";
  for (const auto& t : p.memory.at_peak) s += "  " + pad(format_bytes(t.bytes), 9) + "  " + t.name + "\n";
  for (const auto& o : p.memory.overheads)
    s += "+ " + pad(format_bytes(o.bytes), 9) + "  " + o.name + " (" + o.note + ")\n";

  if (!p.step) {
    s += "\nStep time: unknown";
  } else {
    const auto& st = *p.step;
    s += std::string("\nStep") + (p.fit == Fit::DoesNotFit ? " (if it fit)" : "") + ": " + fmt("%.1f ms", st.step_ms) +
         " = forward " + fmt("%.1f", st.forward_ms) + " + backward " + fmt("%.1f", st.backward_ms) +
         (st.recompute_ms > 0 ? fmt(" (recompute %.1f)", st.recompute_ms) : "") + " + optimizer " +
         fmt("%.1f", st.optimizer_ms);
    if (c.world_size > 1)
      s += " + exposed communication " + fmt("%.1f", st.exposed_comm_ms) + " + contention " +
           fmt("%.1f", st.contention_ms);
    if (st.data_wait_ms >= 0.05) s += " + data wait " + fmt("%.1f", st.data_wait_ms);
    if (st.h2d_ms >= 0.05) s += " + host-to-device " + fmt("%.1f", st.h2d_ms);
    s += "\n  tokens/s: " + thousands(st.tokens_per_s_total) + " total, " + thousands(st.tokens_per_s_per_gpu) +
         " per GPU";
    s += st.mfu ? fmt(", MFU %.1f %%", 100.0 * *st.mfu) : std::string(", MFU unknown");
    s += "\n";
    if (c.world_size > 1)
      s += "  communication floor " + fmt("%.1f ms", st.comm_floor_ms) +
           " per step (every collective, nothing overlapped)\n";
  }
  if (p.scaling) s += "\nScaling: " + p.scaling->statement + "\n";
  if (!p.notes.empty()) {
    s += "\nBasis:\n";
    for (const auto& n : p.notes) s += "  " + n + "\n";
  }
  return s;
}

nlohmann::json render_json(const Prediction& p) {
  using nlohmann::json;
  json j;
  j["config"] = config::to_json(p.scenario.config);
  j["gpu"] = p.gpu ? json(p.gpu->id) : json(nullptr);
  j["gpus"] = p.scenario.config.world_size;
  j["link"] = p.link ? json{{"name", p.link->name}, {"source", p.link->source}, {"measured", p.link->measured()}}
                     : json(nullptr);
  json mem;
  mem["peak_bytes"] = p.memory.peak_bytes;
  mem["peak_at"] = p.memory.peak_at;
  mem["device_needed_bytes"] = p.memory.device_needed_bytes;
  mem["device_memory_bytes"] = p.device_memory_bytes > 0 ? json(p.device_memory_bytes) : json(nullptr);
  mem["ranks_sharing_memory"] = p.ranks_sharing_memory;
  mem["fit"] = to_string(p.fit);
  const auto terms_json = [](const std::vector<MemoryTerm>& terms) {
    json out = json::array();
    for (const auto& t : terms) out.push_back({{"name", t.name}, {"bytes", static_cast<int64_t>(t.bytes)}});
    return out;
  };
  mem["at_peak"] = terms_json(p.memory.at_peak);
  // What a memory-sampled step's categories are compared with (memory_explain.h).
  mem["at_forward_end"] = terms_json(p.memory.at_forward_end);
  mem["at_backward_end"] = terms_json(p.memory.at_backward_end);
  json over = json::array();
  for (const auto& o : p.memory.overheads)
    over.push_back({{"name", o.name}, {"bytes", static_cast<int64_t>(o.bytes)}, {"source", o.note}});
  mem["overheads"] = over;
  json saved = json::array();
  for (const auto& t : p.memory.block.saved)
    saved.push_back({{"op", t.op}, {"tensor", t.what}, {"bytes_per_token", t.bytes_per_token}});
  mem["block_saved_tensors"] = saved;
  j["memory"] = mem;
  if (p.step) {
    const auto& st = *p.step;
    j["step"] = {{"step_ms", st.step_ms},
                 {"forward_ms", st.forward_ms},
                 {"backward_ms", st.backward_ms},
                 {"recompute_ms", st.recompute_ms},
                 {"optimizer_ms", st.optimizer_ms},
                 {"exposed_comm_ms", st.exposed_comm_ms},
                 {"contention_ms", st.contention_ms},
                 {"comm_floor_ms", st.comm_floor_ms},
                 {"data_wait_ms", st.data_wait_ms},
                 {"h2d_ms", st.h2d_ms},
                 {"tokens_per_step", st.tokens_per_step},
                 {"tokens_per_s_total", st.tokens_per_s_total},
                 {"tokens_per_s_per_gpu", st.tokens_per_s_per_gpu},
                 {"mfu", st.mfu ? json(*st.mfu) : json(nullptr)}};
  } else {
    j["step"] = nullptr;
  }
  if (p.scaling) {
    const auto& sc = *p.scaling;
    j["scaling"] = {{"single_step_ms", sc.single_step_ms},
                    {"speedup", sc.speedup},
                    {"speedup_no_overlap", sc.speedup_no_overlap},
                    {"speedup_full_overlap", sc.speedup_full_overlap},
                    {"fits", sc.fits},
                    {"can_beat_single", sc.fits ? json(sc.can_beat_single) : json(nullptr)},  // no verdict
                    {"accum_for_90pct", sc.accum_for_90pct},
                    {"statement", sc.statement}};
  } else {
    j["scaling"] = nullptr;
  }
  j["efficiency"] = {{"matmul_forward", p.efficiency.matmul_forward},
                     {"matmul_backward", p.efficiency.matmul_backward},
                     {"attention_ratio", p.efficiency.attention_ratio},
                     {"memory", p.efficiency.memory},
                     {"source", p.efficiency.source}};
  j["contention"] = p.contention;
  j["notes"] = p.notes;
  return j;
}

}  // namespace tunebench::predict
