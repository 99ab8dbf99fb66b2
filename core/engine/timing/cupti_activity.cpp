#include "core/engine/timing/cupti_activity.h"

#include <cupti.h>

#include <cctype>
#include <cstdlib>
#include <ctime>
#include <mutex>

namespace tunebench::engine::cupti {

namespace {

constexpr size_t kBufferBytes = 8u << 20;  // CUPTI asks for more when a step fills one
constexpr size_t kAlign = 8;               // CUPTI's record alignment

const CUpti_ActivityKind kKinds[] = {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,
                                     CUPTI_ACTIVITY_KIND_MEMSET, CUPTI_ACTIVITY_KIND_RUNTIME,
                                     CUPTI_ACTIVITY_KIND_DRIVER};

// The records of the current sample. CUPTI completes buffers on its own thread too.
std::mutex g_mutex;
std::vector<Record> g_records;
size_t g_dropped = 0;
bool g_host_clock = false;  // the records carry host_clock_ns()

std::string result_text(CUptiResult r) {
  const char* s = nullptr;
  cuptiGetResultString(r, &s);
  return s ? s : "CUPTI error " + std::to_string(static_cast<int>(r));
}

// "cudaStreamSynchronize_v3020" -> "cudaStreamSynchronize": the runtime's version suffix (four or more
// digits) goes, the driver's "_v2" (part of the entry point's name) stays.
std::string api_name(CUpti_CallbackDomain domain, uint32_t cbid) {
  const char* raw = nullptr;
  if (cuptiGetCallbackName(domain, cbid, &raw) != CUPTI_SUCCESS || !raw) return {};
  std::string name(raw);
  const size_t v = name.rfind("_v");
  if (v != std::string::npos && name.size() - v - 2 >= 4) {
    bool digits = true;
    for (size_t i = v + 2; i < name.size(); ++i) digits = digits && std::isdigit(static_cast<unsigned char>(name[i]));
    if (digits) name.resize(v);
  }
  return name;
}

const char* copy_name(uint8_t kind) {
  switch (kind) {
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD:
      return "Memcpy HtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH:
      return "Memcpy DtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD:
      return "Memcpy DtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_PTOP:
      return "Memcpy PtoP";
    default:
      return "Memcpy";
  }
}

// Every record on the host's clock (std::chrono::system_clock, protocol::now_us): registered before
// the kinds are enabled. Without it this CUPTI stamped records in its own units (a sampled tiny
// step's records spanned 2.2x its host length).
uint64_t CUPTIAPI host_clock_ns() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

void CUPTIAPI buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *buffer = static_cast<uint8_t*>(std::aligned_alloc(kAlign, kBufferBytes));
  *size = *buffer ? kBufferBytes : 0;
  *max_records = 0;  // as many as fit
}

void CUPTIAPI buffer_completed(CUcontext context, uint32_t stream, uint8_t* buffer, size_t /*size*/, size_t valid) {
  std::vector<Record> out;
  CUpti_Activity* a = nullptr;
  while (cuptiActivityGetNextRecord(buffer, valid, &a) == CUPTI_SUCCESS) {
    Record r;
    switch (a->kind) {
      case CUPTI_ACTIVITY_KIND_KERNEL:
      case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
        const auto* k = reinterpret_cast<const CUpti_ActivityKernel10*>(a);
        r = {Kind::Kernel, static_cast<int64_t>(k->start), static_cast<int64_t>(k->end), k->correlationId, 0,
             k->name ? k->name : "kernel"};
        break;
      }
      case CUPTI_ACTIVITY_KIND_MEMCPY: {
        const auto* m = reinterpret_cast<const CUpti_ActivityMemcpy6*>(a);
        r = {Kind::Memcpy, static_cast<int64_t>(m->start), static_cast<int64_t>(m->end), m->correlationId, 0,
             copy_name(m->copyKind)};
        break;
      }
      case CUPTI_ACTIVITY_KIND_MEMSET: {
        const auto* m = reinterpret_cast<const CUpti_ActivityMemset4*>(a);
        r = {Kind::Memset, static_cast<int64_t>(m->start), static_cast<int64_t>(m->end), m->correlationId, 0, "Memset"};
        break;
      }
      case CUPTI_ACTIVITY_KIND_RUNTIME:
      case CUPTI_ACTIVITY_KIND_DRIVER: {
        const auto* api = reinterpret_cast<const CUpti_ActivityAPI*>(a);
        const bool runtime = a->kind == CUPTI_ACTIVITY_KIND_RUNTIME;
        r = {runtime ? Kind::Runtime : Kind::Driver, static_cast<int64_t>(api->start), static_cast<int64_t>(api->end),
             api->correlationId, api->threadId,
             api_name(runtime ? CUPTI_CB_DOMAIN_RUNTIME_API : CUPTI_CB_DOMAIN_DRIVER_API, api->cbid)};
        break;
      }
      default:
        continue;
    }
    out.push_back(std::move(r));
  }
  size_t dropped = 0;
  cuptiActivityGetNumDroppedRecords(context, stream, &dropped);
  std::free(buffer);
  std::lock_guard<std::mutex> lock(g_mutex);
  g_dropped += dropped;
  for (auto& r : out) g_records.push_back(std::move(r));
}

}  // namespace

bool start(std::string* error) {
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    g_records.clear();
    g_dropped = 0;
  }
  // Registered on every start: cuptiFinalize() forgets the callbacks. The clock is a nicety (the
  // sampler maps CUPTI's clock onto the host's from two readings anyway): its failure is no error.
  g_host_clock = cuptiActivityRegisterTimestampCallback(host_clock_ns) == CUPTI_SUCCESS;
  CUptiResult r = cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed);
  for (size_t i = 0; r == CUPTI_SUCCESS && i < sizeof kKinds / sizeof kKinds[0]; ++i) r = cuptiActivityEnable(kKinds[i]);
  if (r != CUPTI_SUCCESS) {
    if (error) *error = "CUPTI could not start recording: " + result_text(r);
    for (const auto kind : kKinds) cuptiActivityDisable(kind);
    return false;
  }
  return true;
}

std::vector<Record> stop(std::string* error) {
  for (const auto kind : kKinds) cuptiActivityDisable(kind);
  const CUptiResult flushed = cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  if (flushed != CUPTI_SUCCESS && error) *error = "CUPTI could not flush its records: " + result_text(flushed);
  std::lock_guard<std::mutex> lock(g_mutex);
  if (g_dropped > 0 && error && error->empty())
    *error = "CUPTI dropped " + std::to_string(g_dropped) + " records of the step (its buffers were full)";
  std::vector<Record> out;
  out.swap(g_records);
  return out;
}

void detach(std::string* error) {
  const CUptiResult r = cuptiFinalize();
  if (r != CUPTI_SUCCESS && error) *error = "CUPTI could not detach: " + result_text(r);
}

int64_t timestamp_ns() {
  if (g_host_clock) return static_cast<int64_t>(host_clock_ns());
  uint64_t t = 0;
  cuptiGetTimestamp(&t);
  return static_cast<int64_t>(t);
}

}  // namespace tunebench::engine::cupti
