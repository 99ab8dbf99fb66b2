// The fields of every event record, listed once.
//
// visit_fields(record, visitor) calls visitor(field, member) for each field of a Header, Hello,
// ModelInfo, Step, MemoryCategories, MemoryTimelinePoint, Interval, GpuSample, GpuCounters, Done,
// Log, Warning, Error or LinkProbe, in wire order (a Step holds its MemoryCategories' fields and a GpuSample its
// GpuCounters', stored in tables of their own). The JSON
// mapping (events.cpp), the session store's SQL inserts and loads (core/store) and the CSV/JSON
// exports all walk these lists, so adding a field is one line here (plus a schema migration for
// the store). Each field carries its wire name, where it nests in JSON, its SQL column, and the
// integer range a stranger's value must fall in: an out-of-range number makes a bad event (or a
// bad session file), never a wrapped one.
//
// Deliberately no I/O and no JSON here: only names, ranges and member access.
#pragma once

#include <cstdint>
#include <limits>
#include <string_view>
#include <type_traits>

#include "core/protocol/events.h"

namespace tunebench::protocol {

// Integer range accepted from outside (inclusive). Times are µs since the epoch or offsets; 2^53 µs
// is 285 years, so differences and sums of a few of them never overflow.
struct IntRange {
  int64_t lo = std::numeric_limits<int64_t>::min();
  int64_t hi = std::numeric_limits<int64_t>::max();
  bool contains(int64_t v) const { return v >= lo && v <= hi; }
};
inline constexpr int64_t kMaxTimeUs = int64_t{1} << 53;
inline constexpr IntRange kTimeRange{-kMaxTimeUs, kMaxTimeUs};
inline constexpr IntRange kCountRange{0, int64_t{1} << 53};  // steps, bytes, tokens, pids, parameters
inline constexpr IntRange kRankRange{0, kMaxWorldSize - 1};
inline constexpr IntRange kWorldRange{1, kMaxWorldSize};
inline constexpr IntRange kGpuIndexRange{-1, kMaxWorldSize - 1};  // -1: a CPU sample
inline constexpr IntRange kExitCodeRange{-255, 255};
inline constexpr IntRange kIntRange{std::numeric_limits<int>::min(), std::numeric_limits<int>::max()};
// Real numbers must be finite and at most this large in magnitude (ms, GB/s, FLOPs, watts...).
inline constexpr double kMaxReal = 1e18;

enum class Presence {
  Optional,     // read when present; always written
  Required,     // a record without it is a bad event
  OmitDefault,  // read when present; written only when it differs from the default (0, false, "")
};

struct Field {
  std::string_view name;             // wire name; also the CSV header and, by default, the SQL column
  std::string_view json_group = {};  // JSON object the field nests in ("memory", "summary"); empty: top level
  std::string_view column = {};      // SQL column when it differs from name; kNoColumn: stored elsewhere
  IntRange range = {};               // integers only
  Presence presence = Presence::Optional;
  bool negative_is_unknown = false;  // reals only: a negative value means "unknown" (exports write null / empty)

  std::string_view sql_column() const { return column.empty() ? name : column; }
  bool stored_in_row() const { return column != kNoColumn; }
  static constexpr std::string_view kNoColumn = "-";
};

// The header fields that every record of the store also keeps in its own columns.
inline constexpr Field kRankField{"rank", {}, {}, kRankRange};
inline constexpr Field kTimeField{"t_us", {}, {}, kTimeRange};

namespace detail {
template <class S, class T>
inline constexpr bool is = std::is_same_v<std::remove_const_t<S>, T>;
}

// Calls v(const Field&, member&) for every field of `s`, in wire order. S may be const.
template <class S, class V>
void visit_fields(S& s, V&& v) {
  using P = Presence;
  if constexpr (detail::is<S, Header>) {
    v(Field{"v", {}, {}, kIntRange, P::Required}, s.v);
    v(Field{"trial"}, s.trial);
    v(kRankField, s.rank);
    v(kTimeField, s.t_us);
  } else if constexpr (detail::is<S, Hello>) {
    v(Field{"host"}, s.host);
    v(Field{"pid", {}, {}, kCountRange}, s.pid);
    v(Field{"world_size", {}, {}, kWorldRange}, s.world_size);
    v(Field{"local_rank", {}, {}, kRankRange}, s.local_rank);
    v(Field{"device"}, s.device);
    v(Field{"device_kind"}, s.device_kind);
    v(Field{"device_memory_bytes", {}, {}, kCountRange}, s.device_memory_bytes);
    v(Field{"driver"}, s.driver);
    v(Field{"cuda"}, s.cuda);
    v(Field{"cudnn"}, s.cudnn);
    v(Field{"nccl"}, s.nccl);
    v(Field{"torch"}, s.torch);
    v(Field{"backend"}, s.backend);
    v(Field{"env", {}, "nccl_env"}, s.env);
    v(Field{"topology", {}, Field::kNoColumn, {}, P::OmitDefault}, s.topology);  // its own table (schema 3)
    v(Field{"config"}, s.config);
    v(Field{"clock_offset_us", {}, {}, kTimeRange}, s.clock_offset_us);
  } else if constexpr (detail::is<S, ModelInfo>) {
    v(Field{"parameters", {}, {}, kCountRange}, s.parameters);
    v(Field{"matmul_parameters", {}, {}, kCountRange}, s.matmul_parameters);
    v(Field{"flops_per_token"}, s.flops_per_token);
    v(Field{"flops_formula"}, s.flops_formula);
    v(Field{"predicted_peak_bytes", {}, {}, kCountRange}, s.predicted_peak_bytes);
    v(Field{"parameter_bytes", {}, {}, kCountRange}, s.parameter_bytes);
    v(Field{"attention", {}, Field::kNoColumn, {}, P::OmitDefault}, s.attention);  // the event log's record
  } else if constexpr (detail::is<S, Step>) {
    v(Field{"step", {}, {}, kCountRange, P::Required}, s.step);
    v(Field{"warmup"}, s.warmup);
    v(Field{"start_us", {}, {}, kTimeRange}, s.start_us);
    v(Field{"end_us", {}, {}, kTimeRange}, s.end_us);
    v(Field{"step_ms"}, s.step_ms);
    v(Field{"tokens", {}, {}, kCountRange}, s.tokens);
    v(Field{"loss"}, s.loss);
    v(Field{"allocated_bytes", "memory", {}, kCountRange}, s.memory.allocated_bytes);
    v(Field{"reserved_bytes", "memory", {}, kCountRange}, s.memory.reserved_bytes);
    v(Field{"peak_bytes", "memory", {}, kCountRange}, s.memory.peak_bytes);
    v(Field{"alloc_retries", "memory", {}, kCountRange}, s.memory.alloc_retries);
    v(Field{"comm_ms"}, s.comm_ms);
    v(Field{"exposed_comm_ms"}, s.exposed_comm_ms);
    v(Field{"busbw_gbps"}, s.busbw_gbps);
    v(Field{"skipped", {}, {}, {}, P::OmitDefault}, s.skipped);
    // Table step_gpu (schema 6), written only for sampled steps.
    v(Field{"gpu_sampled", {}, Field::kNoColumn, {}, P::OmitDefault}, s.gpu_sampled);
    v(Field{"gpu_busy_ms", {}, Field::kNoColumn, {}, P::OmitDefault}, s.gpu_busy_ms);
    // Table step_memory (schema 7), written only for memory-sampled steps.
    v(Field{"memory_sampled", {}, Field::kNoColumn, {}, P::OmitDefault}, s.memory_sampled);
    visit_fields(s.memory_categories, [&v](Field f, auto& member) {
      f.column = Field::kNoColumn;
      f.presence = P::OmitDefault;
      v(f, member);
    });
    // Table step_memory_timeline (schema 8), one row per point.
    v(Field{"memory_timeline", {}, Field::kNoColumn, {}, P::OmitDefault}, s.memory_timeline);
    v(Field{"intervals", {}, Field::kNoColumn}, s.intervals);  // table `intervals`
    // A script's sampled step, until the runner folds its trace in (core/launch/kernel_traces.h).
    v(Field{"kernel_trace", {}, Field::kNoColumn, {}, P::OmitDefault}, s.kernel_trace);
  } else if constexpr (detail::is<S, MemoryCategories>) {
    // A step's JSON group "memory_categories"; the columns of table step_memory (schema 7).
    constexpr std::string_view g = "memory_categories";
    v(Field{"phase", g}, s.phase);
    v(Field{"parameters_bytes", g, {}, kCountRange}, s.parameters_bytes);
    v(Field{"gradients_bytes", g, {}, kCountRange}, s.gradients_bytes);
    v(Field{"optimizer_bytes", g, {}, kCountRange}, s.optimizer_bytes);
    v(Field{"activations_bytes", g, {}, kCountRange}, s.activations_bytes);
    v(Field{"temporaries_bytes", g, {}, kCountRange}, s.temporaries_bytes);
    v(Field{"communication_bytes", g, {}, kCountRange}, s.communication_bytes);
    v(Field{"unattributed_bytes", g, {}, kCountRange}, s.unattributed_bytes);
    v(Field{"reserved_free_bytes", g, {}, kCountRange}, s.reserved_free_bytes);
  } else if constexpr (detail::is<S, MemoryTimelinePoint>) {
    // An object of a step's "memory_timeline" array; the columns of table step_memory_timeline
    // (schema 8). `phase` must be forward, backward or optimizer (checked by the readers).
    v(Field{"phase", {}, {}, {}, P::Required}, s.phase);
    v(Field{"point", {}, {}, {}, P::Required}, s.point);
    v(Field{"offset_us", {}, {}, IntRange{0, kMaxTimeUs}}, s.offset_us);
    v(Field{"allocated_bytes", {}, {}, kCountRange, P::Required}, s.allocated_bytes);
    v(Field{"reserved_bytes", {}, {}, kCountRange, P::Required}, s.reserved_bytes);
  } else if constexpr (detail::is<S, GpuCounters>) {
    // Top-level fields of a `gpu` event; the columns of table gpu_counters (schema 7).
    v(Field{"energy_mj", {}, {}, kCountRange}, s.energy_mj);
    v(Field{"sm_activity_pct"}, s.sm_activity_pct);
    v(Field{"sm_occupancy_pct"}, s.sm_occupancy_pct);
    v(Field{"tensor_activity_pct"}, s.tensor_activity_pct);
  } else if constexpr (detail::is<S, Interval>) {
    v(Field{"lane"}, s.lane);  // absent: the phase's default lane
    v(Field{"phase", {}, {}, {}, P::Required}, s.phase);
    v(Field{"start_us", {}, {}, kTimeRange, P::Required}, s.start_us);
    v(Field{"end_us", {}, {}, kTimeRange, P::Required}, s.end_us);
    v(Field{"label", {}, {}, {}, P::OmitDefault}, s.label);
    v(Field{"bytes", {}, {}, kCountRange, P::OmitDefault}, s.bytes);
    v(Field{"busbw_gbps", {}, {}, {}, P::OmitDefault}, s.busbw_gbps);
  } else if constexpr (detail::is<S, GpuSample>) {
    v(Field{"index", {}, "gpu_index", kGpuIndexRange}, s.index);
    v(Field{"util_pct"}, s.util_pct);
    v(Field{"mem_used_bytes", {}, {}, kCountRange}, s.mem_used_bytes);
    v(Field{"mem_total_bytes", {}, {}, kCountRange}, s.mem_total_bytes);
    v(Field{"power_w"}, s.power_w);
    v(Field{"sm_clock_mhz"}, s.sm_clock_mhz);
    v(Field{"temperature_c"}, s.temperature_c);
    v(Field{"pcie_tx_mbps"}, s.pcie_tx_mbps);
    v(Field{"pcie_rx_mbps"}, s.pcie_rx_mbps);
    v(Field{"nvlink_tx_mbps"}, s.nvlink_tx_mbps);
    v(Field{"nvlink_rx_mbps"}, s.nvlink_rx_mbps);
    v(Field{"cpu_pct"}, s.cpu_pct);
    v(Field{"rss_bytes", {}, {}, kCountRange}, s.rss_bytes);
    visit_fields(s.counters, [&v](Field f, auto& member) {  // table gpu_counters (schema 7)
      f.column = Field::kNoColumn;
      v(f, member);
    });
  } else if constexpr (detail::is<S, Done>) {
    v(Field{"exit_code", {}, {}, kExitCodeRange}, s.exit_code);
    v(Field{"measured_steps", "summary", {}, kCountRange}, s.summary.measured_steps);
    v(Field{"step_ms_median", "summary"}, s.summary.step_ms_median);
    v(Field{"step_ms_p25", "summary"}, s.summary.step_ms_p25);
    v(Field{"step_ms_p75", "summary"}, s.summary.step_ms_p75);
    v(Field{"tokens_per_s", "summary"}, s.summary.tokens_per_s);
    v(Field{"mfu", "summary", {}, {}, P::Optional, true}, s.summary.mfu);  // -1: the peak is unknown
    v(Field{"peak_bytes", "summary", {}, kCountRange}, s.summary.peak_bytes);
    v(Field{"comm_ms_median", "summary"}, s.summary.comm_ms_median);
    v(Field{"exposed_comm_ms_median", "summary"}, s.summary.exposed_comm_ms_median);
    v(Field{"data_wait_ms_median", "summary"}, s.summary.data_wait_ms_median);
    v(Field{"final_loss", "summary"}, s.summary.final_loss);
  } else if constexpr (detail::is<S, Log>) {
    v(Field{"level"}, s.level);
    v(Field{"message"}, s.message);
  } else if constexpr (detail::is<S, Warning>) {
    v(Field{"kind"}, s.kind);
    v(Field{"message"}, s.message);
  } else if constexpr (detail::is<S, Error>) {
    v(Field{"kind"}, s.kind);
    v(Field{"message"}, s.message);
    v(Field{"details"}, s.details);
  } else if constexpr (detail::is<S, LinkProbe>) {
    // Table link_probes (schema 4); `collective` must be a comm-lane phase (checked by the readers).
    v(Field{"collective", {}, {}, {}, P::Required}, s.collective);
    v(Field{"dtype"}, s.dtype);
    v(Field{"bytes", {}, {}, kCountRange, P::Required}, s.bytes);
    v(Field{"world_size", {}, {}, IntRange{0, kMaxWorldSize}}, s.world_size);
    v(Field{"iterations", {}, {}, kCountRange}, s.iterations);
    v(Field{"time_us", {}, {}, {}, P::Required}, s.time_us);
    v(Field{"algbw_gbps"}, s.algbw_gbps);
    v(Field{"busbw_gbps", {}, {}, {}, P::Required}, s.busbw_gbps);
  } else {
    static_assert(detail::is<S, void>, "visit_fields: not an event record");
  }
}

}  // namespace tunebench::protocol
