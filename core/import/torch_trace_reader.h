// Reading one torch.profiler trace file (one rank) into a RankTrace, and telling a trace from a
// Tunebench event log by its content.
//
// The file streams through TraceStreambuf (gunzip when it starts with the gzip magic) into
// nlohmann::json's SAX parser (TraceSaxHandler) and TraceCollector, so memory grows with the
// number of GPU activities and CUDA launches, not with the file (docs/IMPORT.md, "Streaming and memory"); then
// StepBuilder maps the records. Every failure is a TraceError naming the file: not JSON, not a
// trace, truncated, corrupt gzip, a CPU-only run, cancelled.
#pragma once

#include <string>
#include <string_view>

#include "core/import/rank_trace.h"
#include "core/import/trace_streambuf.h"

namespace tunebench::import {

// `progress` (may be empty) is called with the bytes of the file read so far; false cancels.
RankTrace read_torch_trace(const std::string& path, const TraceStreambuf::Progress& progress = {});
// The same from bytes in memory (tests, fuzzing); `name` stands for the file in messages.
RankTrace read_torch_trace_bytes(std::string_view bytes, const std::string& name);

enum class FileKind {
  EventLog,    // JSON lines, the first parsable one an event with "type" (tunebench-worker --events file:)
  TorchTrace,  // gzip, or JSON naming "traceEvents" in its first MiB, or other multi-line JSON
  Unknown,     // neither (one-line JSON that is not an event, text, binary)
};
// The file's name without its folders: how every import message names a trace.
std::string file_name(const std::string& path);

// Looks at the first MiB of the file (uncompressed); throws TraceError when it cannot be read.
FileKind detect_file_kind(const std::string& path);

}  // namespace tunebench::import
