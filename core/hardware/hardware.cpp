// Parsing and lookup of the hardware catalogue (hardware.h). The compiled-in JSON text comes
// from the generated header hardware_catalogue_data.h (see CMakeLists.txt).
#include "core/hardware/hardware.h"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "core/hardware/hardware_catalogue_data.h"

namespace tunebench::hardware {

namespace {

using nlohmann::json;

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

bool is_word_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; }

// `word` occurs in `text` with no letter or digit directly before or after it.
bool contains_word(const std::string& text, const std::string& word) {
  for (size_t pos = text.find(word); pos != std::string::npos; pos = text.find(word, pos + 1)) {
    const bool start_ok = pos == 0 || !is_word_char(text[pos - 1]);
    const size_t end = pos + word.size();
    const bool end_ok = end == text.size() || !is_word_char(text[end]);
    if (start_ok && end_ok) return true;
  }
  return false;
}

std::optional<double> opt_number(const json& j, const char* key) {
  if (!j.contains(key) || j.at(key).is_null()) return std::nullopt;
  return j.at(key).get<double>();
}

GpuSpec parse_gpu(const json& j) {
  GpuSpec g;
  g.id = j.at("id").get<std::string>();
  g.name = j.at("name").get<std::string>();
  for (const auto& m : j.at("match")) g.match.push_back(lower(m.get<std::string>()));
  g.memory_bytes = j.at("memory_bytes").get<int64_t>();
  g.bf16_tflops = opt_number(j, "bf16_tflops");
  g.fp16_tflops = opt_number(j, "fp16_tflops");
  g.fp8_tflops = opt_number(j, "fp8_tflops");
  g.tf32_tflops = opt_number(j, "tf32_tflops");
  g.fp32_tflops = opt_number(j, "fp32_tflops");
  g.hbm_gbps = j.at("hbm_gbps").get<double>();
  g.sms = j.at("sms").get<int>();
  g.default_link = j.value("default_link", std::string());
  g.pcie_gen = j.value("pcie_gen", 4);
  g.source = j.at("source").get<std::string>();
  if (g.match.empty() || g.memory_bytes <= 0 || g.hbm_gbps <= 0 || g.sms <= 0)
    throw std::runtime_error("incomplete figures");
  return g;
}

LinkSpec parse_link(const json& j) {
  LinkSpec l;
  l.id = j.at("id").get<std::string>();
  l.name = j.at("name").get<std::string>();
  l.busbw_gbps = j.at("busbw_gbps").get<double>();
  l.alpha_us = j.at("alpha_us").get<double>();
  l.nccl_channels = j.at("nccl_channels").get<int>();
  l.source = j.at("source").get<std::string>();
  if (l.busbw_gbps <= 0 || l.alpha_us < 0 || l.nccl_channels < 0) throw std::runtime_error("bad figures");
  return l;
}

}  // namespace

double Catalogue::constant(const std::string& name) const {
  const auto it = constants.find(name);
  if (it == constants.end())
    throw std::out_of_range("hardware catalogue (" + origin + ") has no constant '" + name + "'");
  return it->second.value;
}

Catalogue parse_catalogue(std::string_view text, std::string origin) {
  Catalogue cat;
  cat.origin = std::move(origin);
  json doc;
  try {
    doc = json::parse(text);
  } catch (const json::exception& e) {
    throw std::runtime_error("hardware catalogue " + cat.origin + " is not valid JSON: " + e.what());
  }
  auto entry = [&](const char* section, const json& j, auto parse) {
    try {
      return parse(j);
    } catch (const std::exception& e) {
      throw std::runtime_error("hardware catalogue " + cat.origin + ": " + section + " entry " +
                               j.value("id", std::string("(no id)")) + ": " + e.what());
    }
  };
  try {
    for (const auto& g : doc.at("gpus")) cat.gpus.push_back(entry("gpu", g, parse_gpu));
    for (const auto& l : doc.at("links")) cat.links.push_back(entry("link", l, parse_link));
    for (const auto& [name, c] : doc.at("constants").items())
      cat.constants[name] = Constant{c.at("value").get<double>(), c.at("source").get<std::string>()};
  } catch (const json::exception& e) {
    throw std::runtime_error("hardware catalogue " + cat.origin + ": " + e.what());
  }
  for (const auto& g : cat.gpus)
    if (!g.default_link.empty() && !find_link(g.default_link, cat))
      throw std::runtime_error("hardware catalogue " + cat.origin + ": gpu " + g.id + " names unknown link " +
                               g.default_link);
  return cat;
}

const Catalogue& catalogue() {
  static const Catalogue cat = parse_catalogue(kHardwareCatalogueJson, "built in");
  return cat;
}

Catalogue load_catalogue(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot open hardware catalogue " + path);
  std::stringstream ss;
  ss << in.rdbuf();
  return parse_catalogue(ss.str(), path);
}

const GpuSpec* find_gpu(std::string_view device_name_or_id, const Catalogue& cat) {
  const std::string name = lower(device_name_or_id);
  if (name.empty()) return nullptr;
  for (const auto& g : cat.gpus)
    if (g.id == name) return &g;
  for (const auto& g : cat.gpus) {
    const bool all =
        std::all_of(g.match.begin(), g.match.end(), [&](const std::string& w) { return contains_word(name, w); });
    if (all) return &g;
  }
  return nullptr;
}

const LinkSpec* find_link(std::string_view id, const Catalogue& cat) {
  const std::string key = lower(id);
  for (const auto& l : cat.links)
    if (l.id == key) return &l;
  return nullptr;
}

const LinkSpec* implied_link(const GpuSpec& gpu, const std::map<std::string, std::string>& env, const Catalogue& cat) {
  const auto set = [&](const char* name) {
    const auto it = env.find(name);
    return it != env.end() && it->second != "0" && !it->second.empty();
  };
  if (set("NCCL_P2P_DISABLE")) {
    if (set("NCCL_SHM_DISABLE")) return find_link("host-sockets", cat);
    return find_link(gpu.pcie_gen >= 5 ? "pcie5-nop2p" : "pcie4-nop2p", cat);
  }
  return find_link(gpu.default_link, cat);
}

std::optional<double> peak_tflops(const GpuSpec& gpu, std::string_view dtype) {
  if (dtype == "bf16") return gpu.bf16_tflops;
  if (dtype == "fp16") return gpu.fp16_tflops;
  if (dtype == "fp8") return gpu.fp8_tflops;
  if (dtype == "tf32") return gpu.tf32_tflops;
  if (dtype == "fp32") return gpu.fp32_tflops;
  return std::nullopt;
}

std::optional<double> mfu_peak_tflops(std::string_view device_name, const Catalogue& cat) {
  const GpuSpec* gpu = find_gpu(device_name, cat);
  if (!gpu) return std::nullopt;
  return gpu->bf16_tflops;
}

}  // namespace tunebench::hardware
