// CSV and JSON tables of trials: summaries and per-step records. Columns are the records' fields
// (protocol/event_fields.h) under their session-table names, so the tables match the store's; the
// summaries add the trial's own figures handed in (TrialFigures: trial_step_ms, trial_comm_ms, ...),
// the numbers the comparison and the trials table show.
#include <string>

#include "core/protocol/event_fields.h"
#include "core/store/export.h"
#include "core/store/sql_fields.h"

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

// One CSV cell per column of a record (protocol/event_fields.h), in column order.
std::string csv_value(int64_t v) { return std::to_string(v); }
std::string csv_value(int v) { return std::to_string(v); }
std::string csv_value(double v) { return num(v); }
std::string csv_value(bool v) { return v ? "1" : "0"; }
template <class T>
std::string csv_value(const T&) {
  return "";
}

template <class Record>
std::string csv_header() {
  std::string out;
  for (const auto& c : sql_columns<Record>()) out += "," + c;
  return out;
}
template <class Record>
std::string csv_cells(const Record& record) {
  std::string out;
  protocol::visit_fields(record, [&](const protocol::Field& f, const auto& value) {
    if (!f.stored_in_row()) return;
    if constexpr (std::is_same_v<std::decay_t<decltype(value)>, double>)
      if (f.negative_is_unknown && value < 0) {
        out += ",";  // unknown (MFU without a peak): an empty cell, not -1
        return;
      }
    out += "," + csv_value(value);
  });
  return out;
}
template <class Record>
std::string csv_empty_cells() {
  return std::string(sql_columns<Record>().size(), ',');
}

// A record as a flat JSON object keyed by column name (nested groups flattened, as in the tables).
// Fields the store keeps in tables of their own (a sampled step's GPU busy, its memory categories
// and memory timeline, a rank's topology) keep their wire name and group ("memory_categories":
// {...}, "memory_timeline": [...]) and appear, as on the wire, only where the record has them.
template <class Record>
json flat_json(const Record& record, std::initializer_list<std::string_view> skip = {}) {
  json out = json::object();
  protocol::visit_fields(record, [&](const protocol::Field& f, const auto& value) {
    using T = std::decay_t<decltype(value)>;
    if constexpr (std::is_same_v<T, std::vector<tp::MemoryTimelinePoint>>) {
      if (!value.empty()) out[std::string(f.name)] = tp::memory_timeline_to_json(value);
    } else if constexpr (!std::is_same_v<T, std::vector<tp::Interval>>) {
      for (const auto name : skip)
        if (name == f.name) return;
      if (!f.stored_in_row()) {
        if (f.presence == protocol::Presence::OmitDefault && value == T{}) return;
        json& into = f.json_group.empty() ? out : out[std::string(f.json_group)];
        into[std::string(f.name)] = value;
        return;
      }
      if constexpr (std::is_same_v<T, double>)
        if (f.negative_is_unknown && value < 0) {
          out[std::string(f.sql_column())] = nullptr;  // unknown, not -1
          return;
        }
      out[std::string(f.sql_column())] = value;
    }
  });
  return out;
}

// The steps table's last columns: a kernel-sampled step's GPU busy and a memory-sampled step's
// categories (blank cells for the other steps), after the step's own columns; the categories by
// their field names (protocol/event_fields.h), the phase as memory_phase.
std::string sampled_step_header() {
  std::string out = ",gpu_busy_ms";
  const tp::MemoryCategories names;
  protocol::visit_fields(names, [&out](const protocol::Field& f, const auto&) {
    out += "," + (f.name == "phase" ? std::string("memory_phase") : std::string(f.name));
  });
  return out;
}
std::string sampled_step_cells(const tp::Step& s) {
  std::string out = "," + (s.gpu_sampled ? num(s.gpu_busy_ms) : std::string());
  protocol::visit_fields(s.memory_categories, [&](const protocol::Field&, const auto& value) {
    out += ",";
    if (!s.memory_sampled) return;
    if constexpr (std::is_same_v<std::decay_t<decltype(value)>, std::string>)
      out += cell(value);
    else
      out += std::to_string(value);
  });
  return out;
}

// The trial's own figures (TrialFigures: the comparison's, the table's and the report's), beside
// each rank's: a rank's comm_ms_median is that rank's, the trial's is its critical rank's.
struct TrialFigure {
  const char* column;  // CSV column and JSON key ("trial_" is added in the CSV)
  std::optional<double> TrialFigures::*value;
};
const TrialFigure kTrialFigures[] = {
    {"step_ms", &TrialFigures::step_ms},
    {"tokens_per_s", &TrialFigures::tokens_per_s},
    {"tokens_per_s_per_gpu", &TrialFigures::tokens_per_s_per_gpu},
    {"comm_ms", &TrialFigures::comm_ms},
    {"exposed_comm_ms", &TrialFigures::exposed_comm_ms},
    {"data_wait_ms", &TrialFigures::data_wait_ms},
    {"joules_per_step", &TrialFigures::joules_per_step},
    {"tokens_per_joule", &TrialFigures::tokens_per_joule},
};
// Trial i's figures; none known past the end of `figures`.
const TrialFigures& figures_of(const std::vector<TrialFigures>& figures, size_t i) {
  static const TrialFigures kNone;
  return i < figures.size() ? figures[i] : kNone;
}

std::string config_text(const json& config, const char* key) {
  auto it = config.find(key);
  if (it == config.end()) return "";
  return it->is_string() ? it->get<std::string>() : it->dump();
}

}  // namespace

void write_steps_csv(const std::vector<LoadedTrial>& trials, std::ostream& out) {
  out << "trial_id,trial_name,rank" << csv_header<tp::Step>() << sampled_step_header() << '\n';
  for (const auto& t : trials)
    for (const auto& [rank, r] : t.log.ranks)
      for (const auto& s : r.steps)
        out << t.info.id << ',' << cell(t.info.name) << ',' << rank << csv_cells(s) << sampled_step_cells(s) << '\n';
}

void write_summaries_csv(const std::vector<LoadedTrial>& trials, const std::vector<TrialFigures>& trial_figures,
                         std::ostream& out) {
  out << "trial_id,trial_name,status,strategy,world_size,rank,host,device" << csv_header<tp::Done>();
  for (const auto& f : kTrialFigures) out << ",trial_" << f.column;
  out << '\n';
  for (size_t i = 0; i < trials.size(); ++i) {
    const LoadedTrial& t = trials[i];
    const TrialFigures& m = figures_of(trial_figures, i);
    std::string figures;
    for (const auto& f : kTrialFigures) figures += "," + ((m.*f.value) ? num(*(m.*f.value)) : std::string());
    for (const auto& [rank, r] : t.log.ranks) {
      out << t.info.id << ',' << cell(t.info.name) << ',' << to_string(t.info.status) << ','
          << cell(config_text(t.info.config, "strategy")) << ',' << t.log.world_size() << ',' << rank << ','
          << cell(r.hello ? r.hello->host : "") << ',' << cell(r.hello ? r.hello->device : "")
          << (r.done ? csv_cells(*r.done) : csv_empty_cells<tp::Done>()) << figures << '\n';
    }
  }
}

json trials_to_json(const std::vector<LoadedTrial>& trials, const std::vector<TrialFigures>& trial_figures) {
  json arr = json::array();
  for (size_t i = 0; i < trials.size(); ++i) {
    const LoadedTrial& t = trials[i];
    json ranks = json::array();
    for (const auto& [rank, r] : t.log.ranks) {
      json steps = json::array();
      for (const auto& s : r.steps) steps.push_back(flat_json(s, {"kernel_trace"}));  // the probe's, never stored
      json jr = {{"rank", rank}, {"steps", std::move(steps)}};
      jr["summary"] = r.done ? flat_json(*r.done) : json(nullptr);
      // The config the rank ran is the trial's config, exported once beside it.
      if (r.hello) jr["environment"] = flat_json(*r.hello, {"config"});
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
    const TrialFigures& m = figures_of(trial_figures, i);
    json metrics = json::object();  // the trial's figures, as the comparison shows them (medians)
    for (const auto& f : kTrialFigures)
      metrics[std::string(f.column) == "tokens_per_s" ? "tokens_per_s_total" : f.column] =
          (m.*f.value) ? json(*(m.*f.value)) : json(nullptr);
    jt["metrics"] = std::move(metrics);
    jt["start_us"] = t.info.start_us ? json(*t.info.start_us) : json(nullptr);
    jt["end_us"] = t.info.end_us ? json(*t.info.end_us) : json(nullptr);
    arr.push_back(std::move(jt));
  }
  return {{"format", "tunebench-trials"}, {"version", 1}, {"trials", std::move(arr)}};
}

}  // namespace tunebench::store
