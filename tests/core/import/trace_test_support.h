// Helpers of the trace import tests: the recorded traces of tests/data/traces/, their meta.json,
// the trace's own ProfilerStep spans read independently of the importer (a plain DOM parse), and
// rewriting a real trace into a bad one (dropping or changing events) for the bad-input tests.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace tunebench::import::test {

// tests/data/traces/<run>/ (single-nw0, single-nw4, single-ckpt, ddp-nw4, fsdp2-nw4).
std::string trace_dir(const std::string& run);
// The run's *.pt.trace.json.gz files, sorted by name (rank0..., rank1...).
std::vector<std::string> trace_files(const std::string& run);
nlohmann::json meta(const std::string& run);

// What `f` threw as a TraceError, or "(no error)".
std::string message_of(const std::function<void()>& f);

std::string gunzip_file(const std::string& path);  // the whole uncompressed text
void gzip_file(const std::string& path, const std::string& text);

// Durations (µs) of the ProfilerStep#N user annotations of a trace file, in time order.
std::vector<double> profiler_step_durations_us(const std::string& path);

// Loads a trace, lets `edit` change the document, writes it as plain JSON to `out`.
void rewrite_trace(const std::string& from, const std::string& out, const std::function<void(nlohmann::json&)>& edit);
// Removes every element of traceEvents for which `drop` is true.
void drop_events(nlohmann::json& trace, const std::function<bool(const nlohmann::json&)>& drop);

}  // namespace tunebench::import::test
