// CSV and JSON tables of trials: summaries and per-step records.
#include <string>

#include "core/store/export.h"

namespace tunebench::store {
namespace {

namespace tp = protocol;
using nlohmann::json;

// A CSV text cell: quoted when needed; a leading = + - @ (or tab/CR) gets a ' so spreadsheets
// show it as text instead of evaluating it (OWASP "CSV injection").
std::string cell(const std::string& text) {
  std::string s = text;
  if (!s.empty() && (s[0] == '=' || s[0] == '+' || s[0] == '-' || s[0] == '@' || s[0] == '\t' ||
                     s[0] == '\r'))
    s.insert(s.begin(), '\'');
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) {
    if (c == '"') q += '"';
    q += c;
  }
  return q + '"';
}
std::string num(double v) {
  const std::string s = json(v).dump();
  return s == "null" ? "" : s;  // NaN / inf
}
std::string num(int64_t v) { return std::to_string(v); }

json summary_json(const tp::Done& d) {
  const tp::Summary& s = d.summary;
  return {{"exit_code", d.exit_code},
          {"measured_steps", s.measured_steps},
          {"step_ms_median", s.step_ms_median},
          {"step_ms_p25", s.step_ms_p25},
          {"step_ms_p75", s.step_ms_p75},
          {"tokens_per_s", s.tokens_per_s},
          {"mfu", s.mfu < 0 ? json(nullptr) : json(s.mfu)},  // -1: the peak is unknown, so is MFU
          {"peak_bytes", s.peak_bytes},
          {"comm_ms_median", s.comm_ms_median},
          {"exposed_comm_ms_median", s.exposed_comm_ms_median},
          {"data_wait_ms_median", s.data_wait_ms_median},
          {"final_loss", s.final_loss}};
}

json step_json(const tp::Step& s) {
  return {{"step", s.step},
          {"warmup", s.warmup},
          {"start_us", s.start_us},
          {"end_us", s.end_us},
          {"step_ms", s.step_ms},
          {"tokens", s.tokens},
          {"loss", s.loss},
          {"allocated_bytes", s.memory.allocated_bytes},
          {"reserved_bytes", s.memory.reserved_bytes},
          {"peak_bytes", s.memory.peak_bytes},
          {"alloc_retries", s.memory.alloc_retries},
          {"comm_ms", s.comm_ms},
          {"exposed_comm_ms", s.exposed_comm_ms},
          {"busbw_gbps", s.busbw_gbps},
          {"skipped", s.skipped}};
}

std::string config_text(const json& config, const char* key) {
  auto it = config.find(key);
  if (it == config.end()) return "";
  return it->is_string() ? it->get<std::string>() : it->dump();
}

}  // namespace

void write_steps_csv(const std::vector<LoadedTrial>& trials, std::ostream& out) {
  out << "trial_id,trial_name,rank,step,warmup,start_us,end_us,step_ms,tokens,loss,"
         "allocated_bytes,reserved_bytes,peak_bytes,alloc_retries,comm_ms,exposed_comm_ms,"
         "busbw_gbps,skipped\n";
  for (const auto& t : trials)
    for (const auto& [rank, r] : t.log.ranks)
      for (const auto& s : r.steps)
        out << t.info.id << ',' << cell(t.info.name) << ',' << rank << ',' << s.step << ','
            << (s.warmup ? 1 : 0) << ',' << s.start_us << ',' << s.end_us << ',' << num(s.step_ms)
            << ',' << s.tokens << ',' << num(s.loss) << ',' << s.memory.allocated_bytes << ','
            << s.memory.reserved_bytes << ',' << s.memory.peak_bytes << ','
            << s.memory.alloc_retries << ',' << num(s.comm_ms) << ',' << num(s.exposed_comm_ms)
            << ',' << num(s.busbw_gbps) << ',' << (s.skipped ? 1 : 0) << '\n';
}

void write_summaries_csv(const std::vector<LoadedTrial>& trials, std::ostream& out) {
  out << "trial_id,trial_name,status,strategy,world_size,rank,host,device,exit_code,"
         "measured_steps,step_ms_median,step_ms_p25,step_ms_p75,tokens_per_s,mfu,peak_bytes,"
         "comm_ms_median,exposed_comm_ms_median,data_wait_ms_median,final_loss\n";
  for (const auto& t : trials) {
    for (const auto& [rank, r] : t.log.ranks) {
      out << t.info.id << ',' << cell(t.info.name) << ',' << to_string(t.info.status) << ','
          << cell(config_text(t.info.config, "strategy")) << ',' << t.log.world_size() << ','
          << rank << ',' << cell(r.hello ? r.hello->host : "") << ','
          << cell(r.hello ? r.hello->device : "") << ',';
      if (r.done) {
        const tp::Summary& s = r.done->summary;
        out << r.done->exit_code << ',' << s.measured_steps << ',' << num(s.step_ms_median) << ','
            << num(s.step_ms_p25) << ',' << num(s.step_ms_p75) << ',' << num(s.tokens_per_s) << ','
            << (s.mfu < 0 ? std::string() : num(s.mfu)) << ',' << num(s.peak_bytes) << ',' << num(s.comm_ms_median) << ','
            << num(s.exposed_comm_ms_median) << ',' << num(s.data_wait_ms_median) << ','
            << num(s.final_loss);
      } else {
        out << ",,,,,,,,,,,";
      }
      out << '\n';
    }
  }
}

json trials_to_json(const std::vector<LoadedTrial>& trials) {
  json arr = json::array();
  for (const auto& t : trials) {
    json ranks = json::array();
    for (const auto& [rank, r] : t.log.ranks) {
      json steps = json::array();
      for (const auto& s : r.steps) steps.push_back(step_json(s));
      json jr = {{"rank", rank}, {"steps", std::move(steps)}};
      jr["summary"] = r.done ? summary_json(*r.done) : json(nullptr);
      if (r.hello)
        jr["environment"] = {{"host", r.hello->host},       {"device", r.hello->device},
                             {"device_memory_bytes", r.hello->device_memory_bytes},
                             {"driver", r.hello->driver},   {"cuda", r.hello->cuda},
                             {"cudnn", r.hello->cudnn},     {"nccl", r.hello->nccl},
                             {"torch", r.hello->torch},     {"backend", r.hello->backend},
                             {"nccl_env", r.hello->env}};
      ranks.push_back(std::move(jr));
    }
    json jt = {{"id", t.info.id},
               {"name", t.info.name},
               {"run_id", t.info.run_id},
               {"status", to_string(t.info.status)},
               {"exit_reason", t.info.exit_reason},
               {"notes", t.info.notes},
               {"tags", t.info.tags},
               {"config", t.info.config},
               {"world_size", t.log.world_size()},
               {"ranks", std::move(ranks)}};
    jt["start_us"] = t.info.start_us ? json(*t.info.start_us) : json(nullptr);
    jt["end_us"] = t.info.end_us ? json(*t.info.end_us) : json(nullptr);
    arr.push_back(std::move(jt));
  }
  return {{"format", "tunebench-trials"}, {"version", 1}, {"trials", std::move(arr)}};
}

}  // namespace tunebench::store
