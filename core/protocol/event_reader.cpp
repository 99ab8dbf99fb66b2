#include "core/protocol/event_reader.h"

#include <cstring>
#include <stdexcept>

namespace tunebench::protocol {
bool json_nesting_within(std::string_view text, int max_depth) {
  int depth = 0;
  bool in_string = false, escaped = false;
  for (const char c : text) {
    if (in_string) {
      if (escaped) escaped = false;
      else if (c == '\\') escaped = true;
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '{' || c == '[') {
      if (++depth > max_depth) return false;
    } else if (c == '}' || c == ']') {
      --depth;
    }
  }
  return true;
}

namespace {
constexpr std::string_view kNestingMessage = "JSON nested deeper than ";
}

bool is_nesting_problem(const ReadProblem& problem) {
  return problem.kind == ReadProblem::Kind::BadJson && problem.message.rfind(kNestingMessage, 0) == 0;
}

std::string_view to_string(ReadProblem::Kind kind) {
  switch (kind) {
    case ReadProblem::Kind::BadJson: return "bad-json";
    case ReadProblem::Kind::BadEvent: return "bad-event";
    case ReadProblem::Kind::UnknownType: return "unknown-type";
    case ReadProblem::Kind::NewerVersion: return "newer-version";
    case ReadProblem::Kind::LineTooLong: return "line-too-long";
    case ReadProblem::Kind::TruncatedLine: return "truncated-line";
    case ReadProblem::Kind::DuplicateStep: return "duplicate-step";
    case ReadProblem::Kind::Omitted: return "omitted";
  }
  return "unknown";
}

std::optional<ReadProblem::Kind> problem_kind_from_string(std::string_view name) {
  for (int k = 0; k <= static_cast<int>(ReadProblem::Kind::Omitted); ++k)
    if (to_string(static_cast<ReadProblem::Kind>(k)) == name) return static_cast<ReadProblem::Kind>(k);
  return std::nullopt;
}

EventReader::EventReader(ReadListener& listener, size_t max_line_bytes)
    : m_listener(listener), m_max_line_bytes(max_line_bytes) {}

void EventReader::feed(std::string_view chunk) {
  while (!chunk.empty()) {
    const void* nl = std::memchr(chunk.data(), '\n', chunk.size());
    const size_t take = nl ? static_cast<size_t>(static_cast<const char*>(nl) - chunk.data()) : chunk.size();
    if (m_skipping) {
      if (nl) m_skipping = false;
    } else if (m_partial.size() + take > m_max_line_bytes) {
      ++m_line_number;
      report(ReadProblem::Kind::LineTooLong,
             "line longer than " + std::to_string(m_max_line_bytes) + " bytes skipped",
             m_partial.empty() ? chunk.substr(0, take) : std::string_view(m_partial));
      m_partial.clear();
      m_skipping = !nl;
    } else if (nl && m_partial.empty()) {
      handle_line(chunk.substr(0, take));  // fast path: the whole line is inside this chunk
    } else {
      m_partial.append(chunk.data(), take);
      if (nl) {
        handle_line(m_partial);
        m_partial.clear();
      }
    }
    chunk.remove_prefix(nl ? take + 1 : take);
  }
}

void EventReader::finish() {
  if (m_skipping) {
    m_skipping = false;
    return;
  }
  if (m_partial.empty()) return;
  std::string line;
  line.swap(m_partial);
  ++m_line_number;
  // A writer killed mid-line leaves a prefix; it is reported, never half-delivered as an event.
  report(ReadProblem::Kind::TruncatedLine, "stream ended inside a line", line);
}

void EventReader::handle_line(std::string_view line) {
  ++m_line_number;
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  if (line.find_first_not_of(" \t") == std::string_view::npos) return;  // blank lines are allowed
  Event event;
  if (!json_nesting_within(line, kMaxJsonDepth)) {
    report(ReadProblem::Kind::BadJson, std::string(kNestingMessage) + std::to_string(kMaxJsonDepth) + " levels", line);
    return;
  }
  nlohmann::json j = nlohmann::json::parse(line.begin(), line.end(), nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    report(ReadProblem::Kind::BadJson, "not a JSON object", line);
    return;
  }
  const auto type_it = j.find("type");
  if (type_it != j.end() && type_it->is_string()) {
    const std::string& t = type_it->get_ref<const std::string&>();
    if (!is_event_type(t)) {
      report(ReadProblem::Kind::UnknownType, "unknown event type '" + t.substr(0, 64) + "'", line);
      return;
    }
  }
  try {
    event = event_from_json(j);
  } catch (const std::exception& e) {
    report(ReadProblem::Kind::BadEvent, std::string("invalid event: ") + e.what(), line);
    return;
  }
  if (event.header.v < 1) {
    report(ReadProblem::Kind::BadEvent, "schema version must be >= 1", line);
    return;
  }
  if (event.header.v > kSchemaVersion && !m_warned_newer) {
    m_warned_newer = true;
    report(ReadProblem::Kind::NewerVersion,
           "events use schema version " + std::to_string(event.header.v) + ", this build reads version " +
               std::to_string(kSchemaVersion) + "; unknown fields are ignored",
           line);
  }
  ++m_events;
  m_listener.on_event(std::move(event));
}

void EventReader::report(ReadProblem::Kind kind, std::string message, std::string_view line) {
  if (kind != ReadProblem::Kind::NewerVersion) ++m_problems;
  ReadProblem p{kind, m_line_number, std::move(message), std::string(line.substr(0, kExcerptBytes))};
  m_listener.on_problem(p);
}

bool parse_event_line(std::string_view line, Event& out, std::string& why) {
  struct One final : ReadListener {
    Event* out;
    std::string* why;
    bool ok = false;
    void on_event(Event&& e) override {
      *out = std::move(e);
      ok = true;
    }
    void on_problem(const ReadProblem& p) override {
      if (p.kind != ReadProblem::Kind::NewerVersion) *why = p.message;
    }
  } one;
  one.out = &out;
  one.why = &why;
  EventReader reader(one);
  reader.feed(line);
  reader.feed("\n");
  return one.ok;
}

}  // namespace tunebench::protocol
