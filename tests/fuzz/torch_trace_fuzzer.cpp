// libFuzzer harness: any bytes through the torch.profiler trace reader (core/import), plain or
// gzip (a gzip magic in front selects the in-memory inflater). A TraceError is the expected answer
// to bad input; anything else (a crash, a sanitizer report, another exception) is a bug.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "core/import/torch_trace_reader.h"
#include "core/import/trace_error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    const auto trace =
        tunebench::import::read_torch_trace_bytes(std::string_view(reinterpret_cast<const char*>(data), size), "fuzz");
    // What the import guarantees of every step it returns.
    for (const auto& step : trace.steps) {
      if (step.end_us < step.start_us) __builtin_trap();
      for (const auto& in : step.intervals)
        if (in.start_us < step.start_us || in.end_us > step.end_us || in.end_us <= in.start_us) __builtin_trap();
    }
  } catch (const tunebench::import::TraceError&) {
  }
  return 0;
}
