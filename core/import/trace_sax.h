// TraceSaxHandler: nlohmann::json's SAX interface over a torch.profiler trace, building no DOM.
//
// It keeps a stack of open containers (one byte each) and the key at the four shallowest levels,
// so it knows where every value sits: a top-level key (trace_id, baseTimeNanoseconds, ...), a
// field of distributedInfo or of one deviceProperties entry, or a field / arg of one element of
// traceEvents. Each element is collected into one reused TraceEvent and handed to the sink when
// its object closes; values it does not use (shapes, strides, nested args) are dropped as they
// stream by. Wrong types are ignored field by field, never thrown: the reader decides afterwards
// whether what arrived is a trace.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/import/trace_event.h"

namespace tunebench::import {

class TraceSaxHandler final : public nlohmann::json_sax<nlohmann::json> {
 public:
  using Sink = std::function<void(const TraceEvent&)>;

  TraceSaxHandler(TraceHeader& header, Sink sink) : m_header(header), m_sink(std::move(sink)) {}

  bool null() override { return true; }
  bool boolean(bool) override { return true; }
  bool number_integer(number_integer_t value) override;
  bool number_unsigned(number_unsigned_t value) override;
  bool number_float(number_float_t value, const string_t&) override;
  bool string(string_t& value) override;
  bool binary(binary_t&) override { return true; }
  bool start_object(std::size_t) override { return open(true); }
  bool key(string_t& value) override;
  bool end_object() override { return close(); }
  bool start_array(std::size_t) override { return open(false); }
  bool end_array() override { return close(); }
  bool parse_error(std::size_t position, const std::string& last_token,
                   const nlohmann::detail::exception& error) override;

  int64_t events() const { return m_events; }
  bool failed() const { return m_failed; }
  int64_t error_position() const { return m_error_position; }  // byte offset in the JSON text
  const std::string& error_message() const { return m_error_message; }

 private:
  enum class Section { None, Events, Devices, Distributed };
  static constexpr size_t kKeyLevels = 5;

  bool open(bool object);
  bool close();
  // The key of a value arriving now, or nullptr inside an array or below kKeyLevels.
  const std::string* current_key() const;
  void integer(int64_t value);
  void real(double value);

  TraceHeader& m_header;
  Sink m_sink;
  std::vector<char> m_stack;  // 1: object, 0: array
  std::string m_keys[kKeyLevels];
  Section m_section = Section::None;
  bool m_in_event = false;
  bool m_in_args = false;
  bool m_in_device = false;
  TraceEvent m_event;
  DeviceProperties m_device;
  int64_t m_events = 0;
  bool m_failed = false;
  int64_t m_error_position = 0;
  std::string m_error_message;
};

}  // namespace tunebench::import
