// JSON mapping of the event structs: one writer and one reader, both walking the field lists of
// event_fields.h (the wire names of docs/PROTOCOL.md).
#include "core/protocol/events.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "core/protocol/event_fields.h"

namespace tunebench::protocol {
namespace {

using nlohmann::json;

template <class T>
struct is_optional : std::false_type {};
template <class T>
struct is_optional<std::optional<T>> : std::true_type {};

constexpr std::array<std::string_view, 3> kLaneNames = {"host", "compute", "comm"};
constexpr std::array<std::string_view, 15> kPhaseNames = {
    "data_wait",      "h2d",       "forward", "backward",  "recompute",  "optimizer", "all_reduce",
    "all_gather", "reduce_scatter", "broadcast", "other", "host_wait", "launch_gap", "sync_wait",
    "dependency_wait"};
constexpr std::array<std::string_view, 3> kMemoryPointNames = {"start", "peak", "end"};

// ---- writing ----------------------------------------------------------------------------------

template <class T>
bool is_default(const T& v) {
  return v == T{};
}

template <class T>
struct is_vector : std::false_type {};
template <class T>
struct is_vector<std::vector<T>> : std::true_type {};

json value_to_json(Lane lane) { return to_string(lane); }
json value_to_json(Phase phase) { return to_string(phase); }
json value_to_json(MemoryPoint point) { return to_string(point); }
json value_to_json(const std::vector<Interval>& intervals);
json value_to_json(const std::vector<MemoryTimelinePoint>& points);
template <class T>
json value_to_json(const T& v) {
  return json(v);
}

struct JsonWriter {
  json& j;
  template <class T>
  void operator()(const Field& f, const T& value) const {
    if constexpr (is_optional<T>::value) {
      if (value) put(f, value_to_json(*value));
    } else {
      if constexpr (std::is_arithmetic_v<T> || std::is_same_v<T, std::string>)
        if (f.presence == Presence::OmitDefault && is_default(value)) return;
      if constexpr (is_vector<T>::value)
        if (f.presence == Presence::OmitDefault && value.empty()) return;
      put(f, value_to_json(value));
    }
  }
  void put(const Field& f, json value) const {
    json& target = f.json_group.empty() ? j : j[std::string(f.json_group)];
    target[std::string(f.name)] = std::move(value);
  }
};

// An array of records, each an object of its fields.
template <class Record>
json records_to_json(const std::vector<Record>& records) {
  json arr = json::array();
  for (const auto& r : records) {
    json item = json::object();
    visit_fields(r, JsonWriter{item});
    arr.push_back(std::move(item));
  }
  return arr;
}
json value_to_json(const std::vector<Interval>& intervals) { return records_to_json(intervals); }
json value_to_json(const std::vector<MemoryTimelinePoint>& points) { return records_to_json(points); }

// ---- reading ----------------------------------------------------------------------------------

[[noreturn]] void bad(const Field& f, const std::string& what) {
  throw std::invalid_argument("'" + std::string(f.name) + "' " + what);
}

// An integer in the field's range. A float is taken only when it is a whole number in range, so
// 1e30 or 2^64-1 is a bad event instead of a wrapped value.
int64_t integer_in(const Field& f, const json& j) {
  int64_t v = 0;
  if (j.is_number_unsigned()) {
    const uint64_t u = j.get<uint64_t>();
    if (u > static_cast<uint64_t>(f.range.hi)) bad(f, "out of range: " + std::to_string(u));
    v = static_cast<int64_t>(u);
  } else if (j.is_number_integer()) {
    v = j.get<int64_t>();
  } else if (j.is_number_float()) {
    const double d = j.get<double>();
    if (!(d >= -9.0e18 && d <= 9.0e18) || std::floor(d) != d) bad(f, "is not an integer in range");
    v = static_cast<int64_t>(d);
  } else {
    bad(f, "is not an integer");
  }
  if (!f.range.contains(v)) bad(f, "out of range: " + std::to_string(v));
  return v;
}

void read_value(const Field& f, const json& j, int64_t& out) { out = integer_in(f, j); }
void read_value(const Field& f, const json& j, int& out) {
  const int64_t v = integer_in(f, j);
  if (v < std::numeric_limits<int>::min() || v > std::numeric_limits<int>::max()) bad(f, "out of range");
  out = static_cast<int>(v);
}
void read_value(const Field& f, const json& j, double& out) {
  if (!j.is_number()) bad(f, "is not a number");
  const double d = j.get<double>();
  if (!(std::abs(d) <= kMaxReal)) bad(f, "out of range");
  out = d;
}
void read_value(const Field& f, const json& j, bool& out) {
  if (!j.is_boolean()) bad(f, "is not true or false");
  out = j.get<bool>();
}
void read_value(const Field& f, const json& j, std::string& out) {
  if (!j.is_string()) bad(f, "is not a string");
  out = j.get<std::string>();
}
void read_value(const Field& f, const json& j, std::map<std::string, std::string>& out) {
  if (!j.is_object()) bad(f, "is not an object");
  for (auto it = j.begin(); it != j.end(); ++it) {
    if (!it->is_string()) bad(f, "holds a value that is not a string");
    out[it.key()] = it->get<std::string>();
  }
}
// Free-form documents (config, error details): kept only when they are objects.
void read_value(const Field&, const json& j, json& out) {
  if (j.is_object()) out = j;
}
void read_value(const Field& f, const json& j, Lane& out) {
  if (!j.is_string()) bad(f, "is not a string");
  const auto lane = lane_from_string(j.get<std::string>());
  if (!lane) throw std::invalid_argument("unknown lane '" + j.get<std::string>().substr(0, 64) + "'");
  out = *lane;
}
void read_value(const Field& f, const json& j, Phase& out) {
  if (!j.is_string()) bad(f, "is not a string");
  out = phase_from_string(j.get<std::string>()).value_or(Phase::Other);  // a newer phase: Other
}
void read_value(const Field& f, const json& j, MemoryPoint& out) {
  if (!j.is_string()) bad(f, "is not a string");
  const auto point = memory_point_from_string(j.get<std::string>());
  if (!point) bad(f, "is '" + j.get<std::string>().substr(0, 64) + "', not start, peak or end");
  out = *point;
}
template <class T>
void read_value(const Field& f, const json& j, std::optional<T>& out) {
  T v{};
  read_value(f, j, v);
  out = v;
}
void read_value(const Field& f, const json& j, std::vector<Interval>& out);
void read_value(const Field& f, const json& j, std::vector<MemoryTimelinePoint>& out);

struct JsonReader {
  const json& j;
  template <class T>
  void operator()(const Field& f, T& out) const {
    const json* source = &j;
    if (!f.json_group.empty()) {
      const auto g = j.find(std::string(f.json_group));
      if (g == j.end() || g->is_null()) {
        if (f.presence == Presence::Required) bad(f, "is missing");
        return;
      }
      if (!g->is_object()) throw std::invalid_argument("'" + std::string(f.json_group) + "' is not an object");
      source = &*g;
    }
    const auto it = source->find(std::string(f.name));
    if (it == source->end() || it->is_null()) {
      if (f.presence == Presence::Required) bad(f, "is missing");
      return;
    }
    read_value(f, *it, out);
  }
};

void read_value(const Field& f, const json& j, std::vector<Interval>& out) {
  if (!j.is_array()) bad(f, "is not an array");
  out.reserve(j.size());
  for (const auto& item : j) {
    if (!item.is_object()) bad(f, "holds an interval that is not an object");
    Interval in;
    visit_fields(in, JsonReader{item});
    if (!item.contains("lane")) in.lane = default_lane(in.phase);
    out.push_back(std::move(in));
  }
}

// A memory timeline refuses what no worker sends: more than kMaxMemoryTimelinePoints points, a
// phase it does not read, a point that is not start, peak or end, negative bytes or offsets. The
// message names the point (its index in the array).
void read_value(const Field& f, const json& j, std::vector<MemoryTimelinePoint>& out) {
  if (!j.is_array()) bad(f, "is not an array");
  if (j.size() > kMaxMemoryTimelinePoints)
    bad(f, "holds " + std::to_string(j.size()) + " points, more than the " + std::to_string(kMaxMemoryTimelinePoints) +
               " a step's timeline may have");
  out.reserve(j.size());
  for (size_t i = 0; i < j.size(); ++i) {
    const json& item = j[i];
    const std::string where = "'" + std::string(f.name) + "' point " + std::to_string(i) + ": ";
    if (!item.is_object()) throw std::invalid_argument(where + "is not an object");
    MemoryTimelinePoint p;
    try {
      visit_fields(p, JsonReader{item});
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument(where + e.what());
    }
    if (!is_memory_timeline_phase(p.phase))
      throw std::invalid_argument(where + "phase '" + item.at("phase").get<std::string>().substr(0, 64) +
                                  "' is not one a memory timeline reads (forward, backward, optimizer)");
    out.push_back(p);
  }
}

template <class T>
Payload read_payload(const json& j) {
  T record;
  visit_fields(record, JsonReader{j});
  return record;
}

Payload payload_from_json(std::string_view type, const json& j) {
  if (type == "hello") return read_payload<Hello>(j);
  if (type == "model") return read_payload<ModelInfo>(j);
  if (type == "step") return read_payload<Step>(j);
  if (type == "gpu") return read_payload<GpuSample>(j);
  if (type == "log") return read_payload<Log>(j);
  if (type == "warning") return read_payload<Warning>(j);
  if (type == "error") return read_payload<Error>(j);
  if (type == "done") return read_payload<Done>(j);
  if (type == "probe") {
    Payload p = read_payload<LinkProbe>(j);
    if (default_lane(std::get<LinkProbe>(p).collective) != Lane::Comm)
      throw std::invalid_argument("'collective' is not a collective");
    return p;
  }
  throw std::out_of_range("unknown event type '" + std::string(type) + "'");
}

}  // namespace

std::string_view to_string(Lane lane) { return kLaneNames.at(static_cast<size_t>(lane)); }
std::string_view to_string(Phase phase) { return kPhaseNames.at(static_cast<size_t>(phase)); }

std::string_view to_string(MemoryPoint point) { return kMemoryPointNames.at(static_cast<size_t>(point)); }

std::optional<MemoryPoint> memory_point_from_string(std::string_view s) {
  for (size_t i = 0; i < kMemoryPointNames.size(); ++i)
    if (kMemoryPointNames[i] == s) return static_cast<MemoryPoint>(i);
  return std::nullopt;
}

bool is_memory_timeline_phase(Phase phase) {
  return phase == Phase::Forward || phase == Phase::Backward || phase == Phase::Optimizer;
}

std::optional<Lane> lane_from_string(std::string_view s) {
  for (size_t i = 0; i < kLaneNames.size(); ++i)
    if (kLaneNames[i] == s) return static_cast<Lane>(i);
  return std::nullopt;
}

std::optional<Phase> phase_from_string(std::string_view s) {
  for (size_t i = 0; i < kPhaseNames.size(); ++i)
    if (kPhaseNames[i] == s) return static_cast<Phase>(i);
  return std::nullopt;
}

Lane default_lane(Phase phase) {
  switch (phase) {
    case Phase::DataWait:
    case Phase::HostToDevice: return Lane::Host;
    case Phase::AllReduce:
    case Phase::AllGather:
    case Phase::ReduceScatter:
    case Phase::Broadcast: return Lane::Comm;
    default: return Lane::Compute;
  }
}

bool is_gpu_idle(Phase phase) {
  return phase == Phase::HostWait || phase == Phase::LaunchGap || phase == Phase::SyncWait ||
         phase == Phase::DependencyWait;
}

namespace {
// In the order of the Payload variant's alternatives.
constexpr std::array<std::string_view, std::variant_size_v<Payload>> kTypeNames = {
    "hello", "model", "step", "gpu", "log", "warning", "error", "done", "probe"};
}  // namespace

std::string_view type_name(const Payload& payload) { return kTypeNames.at(payload.index()); }

bool is_event_type(std::string_view type) {
  return std::find(kTypeNames.begin(), kTypeNames.end(), type) != kTypeNames.end();
}

std::string_view Event::type() const { return type_name(payload); }

bool MemoryCategories::operator==(const MemoryCategories& o) const {
  return phase == o.phase && parameters_bytes == o.parameters_bytes && gradients_bytes == o.gradients_bytes &&
         optimizer_bytes == o.optimizer_bytes && activations_bytes == o.activations_bytes &&
         temporaries_bytes == o.temporaries_bytes && communication_bytes == o.communication_bytes &&
         unattributed_bytes == o.unattributed_bytes && reserved_free_bytes == o.reserved_free_bytes;
}

json to_json(const Event& event) {
  json j = json::object();
  visit_fields(event.header, JsonWriter{j});
  j["type"] = type_name(event.payload);
  std::visit([&j](const auto& p) { visit_fields(p, JsonWriter{j}); }, event.payload);
  return j;
}

Event event_from_json(const json& j) {
  if (!j.is_object()) throw std::invalid_argument("event is not a JSON object");
  Event e;
  visit_fields(e.header, JsonReader{j});
  const auto type = j.find("type");
  if (type == j.end() || !type->is_string()) throw std::invalid_argument("'type' is missing or not a string");
  e.payload = payload_from_json(type->get<std::string>(), j);
  return e;
}

json memory_categories_to_json(const MemoryCategories& categories) {
  json j = json::object();
  visit_fields(categories, JsonWriter{j});
  return j["memory_categories"];
}

MemoryCategories memory_categories_from_json(const json& object) {
  if (!object.is_object()) throw std::invalid_argument("'memory_categories' is not an object");
  MemoryCategories c;
  visit_fields(c, JsonReader{json{{"memory_categories", object}}});
  return c;
}

json memory_timeline_to_json(const std::vector<MemoryTimelinePoint>& points) { return records_to_json(points); }

int64_t now_ns() {
  using namespace std::chrono;
  return duration_cast<nanoseconds>(system_clock::now().time_since_epoch()).count();
}

int64_t now_us() { return now_ns() / 1000; }

}  // namespace tunebench::protocol
