#include "core/import/trace_sax.h"

#include <algorithm>

#include <cmath>
#include <limits>

namespace tunebench::import {

const std::string* TraceSaxHandler::current_key() const {
  const size_t depth = m_stack.size();
  if (depth == 0 || depth >= kKeyLevels || !m_stack.back()) return nullptr;
  return &m_keys[depth];
}

bool TraceSaxHandler::key(string_t& value) {
  const size_t depth = m_stack.size();
  if (depth < kKeyLevels) m_keys[depth].assign(value);  // copies into kept storage; the lexer keeps its own
  return true;
}

bool TraceSaxHandler::open(bool object) {
  const size_t depth = m_stack.size();  // the new container sits at depth + 1
  const bool in_object = depth > 0 && m_stack.back();
  if (depth == 0) {
    m_header.root_is_object = object;
  } else if (depth == 1 && in_object) {
    const std::string& k = m_keys[1];
    if (k == "traceEvents" && !object) {
      m_section = Section::Events;
      m_header.has_trace_events = true;
    } else if ((k == "deviceProperties" || k == "computeProperties") && !object) {  // computeProperties: PyTorch 1.8-1.10
      m_section = Section::Devices;
    } else if (k == "distributedInfo" && object) {
      m_section = Section::Distributed;
      m_header.has_distributed_info = true;
    }
  } else if (depth == 2 && !in_object && object) {
    if (m_section == Section::Events) {
      m_event.clear();
      m_in_event = true;
    } else if (m_section == Section::Devices) {
      m_device = DeviceProperties{};
      m_in_device = true;
    }
  } else if (depth == 3 && in_object && object && m_in_event && m_keys[3] == "args") {
    m_in_args = true;
  }
  m_stack.push_back(object ? 1 : 0);
  return true;
}

bool TraceSaxHandler::close() {
  if (m_stack.empty()) return true;
  const size_t depth = m_stack.size();  // the container closing now
  m_stack.pop_back();
  if (depth == 4 && m_in_args) {
    m_in_args = false;
  } else if (depth == 3 && m_in_event) {
    m_in_event = false;
    ++m_events;
    m_sink(m_event);
  } else if (depth == 3 && m_in_device) {
    m_in_device = false;
    m_header.devices.push_back(std::move(m_device));
  } else if (depth == 2) {
    m_section = Section::None;
  }
  return true;
}

void TraceSaxHandler::integer(int64_t v) {
  const std::string* k = current_key();
  if (!k) return;
  const size_t depth = m_stack.size();
  if (depth == 1) {
    if (*k == "schemaVersion")
      m_header.schema_version = v;
    else if (*k == "baseTimeNanoseconds")
      m_header.base_time_ns = v;
    else if (*k == "cuda_runtime_version")
      m_header.cuda_runtime_version = v;
    else if (*k == "cuda_driver_version")
      m_header.cuda_driver_version = v;
  } else if (depth == 2 && m_section == Section::Distributed) {
    if (*k == "rank")
      m_header.rank = v;
    else if (*k == "world_size")
      m_header.world_size = v;
  } else if (depth == 3 && m_in_device) {
    if (*k == "id")
      m_device.id = v;
    else if (*k == "totalGlobalMem")
      m_device.total_memory_bytes = v;
  } else if (depth == 3 && m_in_event) {
    if (*k == "pid")
      m_event.pid = v;
    else if (*k == "tid")
      m_event.tid = v;
    else if (*k == "ts")
      m_event.ts_us = static_cast<double>(v);
    else if (*k == "dur")
      m_event.dur_us = static_cast<double>(v);
  } else if (depth == 4 && m_in_args) {
    if (*k == "correlation")
      m_event.correlation = v;
    else if (*k == "External id")
      m_event.external_id = v;
    else if (*k == "Sequence number")
      m_event.sequence_number = v;
    else if (*k == "Fwd thread id")
      m_event.fwd_thread_id = v;
    else if (*k == "device")
      m_event.device = v;
    else if (*k == "stream")
      m_event.stream = v;
    else if (*k == "In msg nelems")
      m_event.in_nelems = v;
    else if (*k == "Out msg nelems")
      m_event.out_nelems = v;
    else if (*k == "Group size")
      m_event.group_size = v;
    else if (*k == "wait_on_stream")
      m_event.wait_on_stream = v;
    else if (*k == "wait_on_cuda_event_record_corr_id")
      m_event.wait_on_record_correlation = v;
  }
}

void TraceSaxHandler::real(double v) {
  const size_t depth = m_stack.size();
  const std::string* k = current_key();
  if (!k || !std::isfinite(v)) return;
  if (depth == 3 && m_in_event) {
    if (*k == "ts")
      m_event.ts_us = v;
    else if (*k == "dur")
      m_event.dur_us = v;
    return;
  }
  // Counts written as floats (some exporters): take them when they are whole and in range.
  if (v == std::floor(v) && std::abs(v) < 9.0e15) integer(static_cast<int64_t>(v));
}

bool TraceSaxHandler::number_integer(number_integer_t value) {
  integer(static_cast<int64_t>(value));
  return true;
}

bool TraceSaxHandler::number_unsigned(number_unsigned_t value) {
  if (value <= static_cast<number_unsigned_t>(std::numeric_limits<int64_t>::max()))
    integer(static_cast<int64_t>(value));
  return true;
}

bool TraceSaxHandler::number_float(number_float_t value, const string_t&) {
  real(static_cast<double>(value));
  return true;
}

bool TraceSaxHandler::string(string_t& value) {
  const std::string* k = current_key();
  if (!k) return true;
  const size_t depth = m_stack.size();
  if (depth == 1) {
    if (*k == "trace_id") m_header.trace_id = std::move(value);
  } else if (depth == 2 && m_section == Section::Distributed) {
    if (*k == "backend")
      m_header.backend = std::move(value);
    else if (*k == "nccl_version")
      m_header.nccl_version = std::move(value);
  } else if (depth == 3 && m_in_device) {
    if (*k == "name") m_device.name = std::move(value);
  } else if (depth == 3 && m_in_event) {
    if (*k == "name")
      m_event.name.assign(value);
    else if (*k == "cat")
      m_event.cat.assign(value);
    else if (*k == "ph")
      m_event.ph = value.empty() ? 0 : value[0];
    else if ((*k == "tid" || *k == "pid") && !value.empty() && value.size() <= 18 &&
             std::all_of(value.begin(), value.end(), [](char c) { return c >= '0' && c <= '9'; }))
      // PyTorch 1.8-1.10 wrote thread ids as strings ("tid": "24572"); "stream 7" and the
      // "Spans"/"Traces" rows stay unset.
      (*k == "tid" ? m_event.tid : m_event.pid) = std::stoll(value);
  } else if (depth == 4 && m_in_args) {
    if (*k == "Collective name")
      m_event.collective.assign(value);
    else if (*k == "dtype")
      m_event.dtype.assign(value);
  }
  return true;
}

bool TraceSaxHandler::parse_error(std::size_t position, const std::string&, const nlohmann::detail::exception& error) {
  m_failed = true;
  m_error_position = static_cast<int64_t>(position);
  m_error_message = error.what();
  return false;
}

}  // namespace tunebench::import
