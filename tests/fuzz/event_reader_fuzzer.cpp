// Fuzz target: bytes as an event stream from a stranger (a socket, an imported .jsonl).
//
// Fed to the EventReader in chunks whose sizes come from the input itself, into a TrialLog and a
// TrialSplitter, and then through the analysis a `tunebench-cli report` runs. Oracles beyond "no
// crash, no sanitizer report": every event the reader accepts must survive to_json -> reader
// again (the writer never writes what the reader refuses), and chunking must not change what is
// read.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/analysis/report.h"
#include "core/protocol/event_reader.h"
#include "core/protocol/event_writer.h"
#include "core/protocol/trial_log.h"

namespace tp = tunebench::protocol;

namespace {

struct Collect final : tp::ReadListener {
  std::vector<tp::Event> events;
  int64_t problems = 0;
  void on_event(tp::Event&& e) override { events.push_back(std::move(e)); }
  void on_problem(const tp::ReadProblem&) override { ++problems; }
};

// A broken property is a finding like a crash: libFuzzer saves the input. `what` names it in the
// core dump and in this source.
[[noreturn]] void oracle_failed(const char* what) {
  (void)what;
  __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);

  // Whole, then in chunks of 1..16 bytes chosen by the input: the same events either way.
  Collect whole;
  {
    tp::EventReader reader(whole);
    reader.feed(text);
    reader.finish();
  }
  Collect chunked;
  {
    tp::EventReader reader(chunked);
    size_t at = 0;
    for (size_t i = 0; at < text.size(); ++i) {
      const size_t n = 1 + static_cast<size_t>(data[i % size]) % 16;
      reader.feed(text.substr(at, n));
      at += n;
    }
    reader.finish();
  }
  if (whole.events.size() != chunked.events.size() || whole.problems != chunked.problems)
    oracle_failed("chunking changed what was read");

  // What was accepted can be written and read back.
  for (const auto& e : whole.events) {
    tp::Event back;
    std::string why;
    if (!tp::parse_event_line(tp::format_line(e), back, why)) oracle_failed("an accepted event does not round-trip");
  }

  // The consumers: one TrialLog per trial id, and the report the CLI prints for them.
  tp::TrialSplitter splitter;
  {
    tp::EventReader reader(splitter);
    reader.feed(text);
    reader.finish();
  }
  const auto logs = splitter.take();
  const auto report = tunebench::analysis::make_report(logs);
  (void)tunebench::analysis::render_text(report);
  (void)tunebench::analysis::render_json(report).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  return 0;
}
