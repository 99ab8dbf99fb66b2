// Reading events from a byte stream that arrives in arbitrary chunks.
//
// EventReader frames lines, parses them and hands Events to a listener. It never throws on bad
// input and never crashes: every line that is not a valid event is reported through
// ReadListener::on_problem together with (a bounded excerpt of) its text, so the caller can keep
// it as a log line. The reader keeps no state beyond the current partial line.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/protocol/events.h"

namespace tunebench::protocol {

struct ReadProblem {
  enum class Kind {
    BadJson,        // not JSON, or JSON that is not an object (garbage, NUL bytes, truncation)
    BadEvent,       // JSON object without the required fields or with wrong types
    UnknownType,    // a "type" this reader does not know (kept, not fatal)
    NewerVersion,   // "v" is newer than kSchemaVersion; reported once, the event is still delivered
    LineTooLong,    // longer than the reader's limit; the line is skipped up to its newline
    TruncatedLine,  // the stream ended inside a line (reported by finish())
    DuplicateStep,  // a rank sent a step index twice; the first is kept (TrialLog::add)
    Omitted,        // stands for problems beyond TrialLog::kMaxKeptProblems: excerpt holds their count
  };
  Kind kind;
  int64_t line_number = 0;  // 1-based line number in the stream
  std::string message;      // one sentence for a human
  std::string excerpt;      // the start of the offending line (at most kExcerptBytes)
};

std::string_view to_string(ReadProblem::Kind kind);
std::optional<ReadProblem::Kind> problem_kind_from_string(std::string_view name);

class ReadListener {
 public:
  virtual ~ReadListener() = default;
  virtual void on_event(Event&& event) = 0;
  virtual void on_problem(const ReadProblem& problem) = 0;
};

class EventReader {
 public:
  static constexpr size_t kDefaultMaxLineBytes = 64u << 20;  // a 7B step with every interval fits
  static constexpr size_t kExcerptBytes = 512;
  static constexpr int kMaxJsonDepth = 128;  // events nest a few levels; deeper lines are bad JSON

  explicit EventReader(ReadListener& listener, size_t max_line_bytes = kDefaultMaxLineBytes);

  // Feeds the next chunk of the stream; delivers every complete line it contains.
  void feed(std::string_view chunk);
  // The stream ended: a pending partial line is reported as TruncatedLine (its text may still be
  // parsed: a writer killed mid-line leaves exactly this).
  void finish();

  int64_t lines() const { return m_line_number; }
  int64_t events() const { return m_events; }
  int64_t problems() const { return m_problems; }

 private:
  void handle_line(std::string_view line);
  void report(ReadProblem::Kind kind, std::string message, std::string_view line);

  ReadListener& m_listener;
  size_t m_max_line_bytes;
  std::string m_partial;
  bool m_skipping = false;  // inside an over-long line, dropping bytes until '\n'
  bool m_warned_newer = false;
  int64_t m_line_number = 0;
  int64_t m_events = 0;
  int64_t m_problems = 0;
};

// True when `text` nests arrays/objects at most `max_depth` deep (brackets inside strings do not
// count). nlohmann::json recurses once per level: anything parsed from a stranger goes through this.
bool json_nesting_within(std::string_view text, int max_depth);
// True for the problem the reader reports for a line nested deeper than EventReader::kMaxJsonDepth.
bool is_nesting_problem(const ReadProblem& problem);

// Parses one line (without its newline) into an Event; on failure returns false and fills `why`.
bool parse_event_line(std::string_view line, Event& out, std::string& why);

}  // namespace tunebench::protocol
