#include "core/import/torch_trace_reader.h"

#include <istream>

#include <nlohmann/json.hpp>

#include "core/import/step_builder.h"
#include "core/import/trace_collector.h"
#include "core/import/trace_error.h"
#include "core/import/trace_sax.h"
#include "core/protocol/event_reader.h"

namespace tunebench::import {
namespace {

std::string size_text(int64_t bytes) {
  char buf[32];
  if (bytes >= 1000000)
    std::snprintf(buf, sizeof buf, "%.1f MB", static_cast<double>(bytes) / 1e6);
  else
    std::snprintf(buf, sizeof buf, "%lld bytes", static_cast<long long>(bytes));
  return buf;
}

// nlohmann's "[json.exception.parse_error.101] parse error at line 1, column 5: syntax error ..."
// without the tag.
std::string json_reason(const std::string& what) {
  const auto close = what.find("] ");
  return close == std::string::npos ? what : what.substr(close + 2);
}

RankTrace read_from(TraceStreambuf& buf, const std::string& path) {
  const std::string name = file_name(path);
  TraceHeader header;
  TraceCollector collector;
  TraceSaxHandler handler(header, [&](const TraceEvent& e) { collector.add(e); });
  std::istream in(&buf);
  try {
    nlohmann::json::sax_parse(in, &handler);
  } catch (const std::exception& e) {  // the SAX parser reports through parse_error; this is a backstop
    throw TraceError(name + " could not be read: " + e.what());
  }
  if (buf.cancelled()) throw TraceError("import cancelled while reading " + name);
  if (!buf.error().empty())
    throw TraceError(name + ": " + buf.error() + " after " + size_text(buf.source_read()) + " of " +
                     size_text(buf.source_bytes()) + ".");
  if (handler.failed()) {
    if (header.root_is_object && handler.error_position() >= buf.output_bytes())
      throw TraceError(name + " is truncated: the JSON ends after " + size_text(buf.output_bytes()) +
                       ", inside the document (" + json_reason(handler.error_message()) + ").");
    throw TraceError(name + " is not valid JSON at byte " + std::to_string(handler.error_position()) + ": " +
                     json_reason(handler.error_message()));
  }
  if (!header.root_is_object || !header.has_trace_events)
    throw TraceError(name +
                     " is not a torch.profiler trace: it has no \"traceEvents\" array (torch.profiler writes "
                     "Chrome-trace JSON, plain or gzip'd, with one).");
  RankTrace out;
  out.path = path;
  out.trace_id = header.trace_id;
  out.has_distributed_info = header.has_distributed_info;
  out.file_bytes = buf.source_bytes();
  out.json_bytes = buf.output_bytes();
  try {
    StepBuilder(collector.records(), header).build(out);
  } catch (const TraceError& e) {
    throw TraceError(name + ": " + e.what());
  }
  return out;
}

}  // namespace

RankTrace read_torch_trace(const std::string& path, const TraceStreambuf::Progress& progress) {
  TraceStreambuf buf(path);
  buf.set_progress(progress);
  return read_from(buf, path);
}

RankTrace read_torch_trace_bytes(std::string_view bytes, const std::string& name) {
  TraceStreambuf buf(bytes);
  return read_from(buf, name);
}

FileKind detect_file_kind(const std::string& path) {
  TraceStreambuf buf(path);
  if (buf.gzip()) return FileKind::TorchTrace;
  std::string sample(1u << 20, '\0');
  sample.resize(static_cast<size_t>(buf.sgetn(sample.data(), static_cast<std::streamsize>(sample.size()))));
  if (sample.find("\"traceEvents\"") != std::string::npos) return FileKind::TorchTrace;
  bool object_line = false;
  size_t pos = 0;
  for (int lines = 0; lines < 64 && pos < sample.size(); ++lines) {
    const size_t nl = sample.find('\n', pos);
    if (nl == std::string::npos) break;  // a line longer than the sample: not judged here
    const std::string_view line(sample.data() + pos, nl - pos);
    pos = nl + 1;
    if (line.find_first_not_of(" \t\r") == std::string_view::npos) continue;
    if (!protocol::json_nesting_within(line, protocol::EventReader::kMaxJsonDepth)) continue;
    const auto j = nlohmann::json::parse(line, nullptr, false);
    if (!j.is_object()) continue;
    object_line = true;
    if (j.contains("type") && j["type"].is_string() && j.contains("v")) return FileKind::EventLog;
  }
  if (object_line) return FileKind::Unknown;
  const size_t first = sample.find_first_not_of(" \t\r\n");
  if (first != std::string::npos && (sample[first] == '{' || sample[first] == '[')) return FileKind::TorchTrace;
  return FileKind::Unknown;
}

std::string file_name(const std::string& path) {
  const auto slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

}  // namespace tunebench::import
