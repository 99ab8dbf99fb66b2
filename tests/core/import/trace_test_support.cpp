#include "tests/core/import/trace_test_support.h"

#include <zlib.h>

#include <dirent.h>
#include <algorithm>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "core/import/trace_error.h"

namespace tunebench::import::test {

std::string trace_dir(const std::string& run) { return std::string(TUNEBENCH_TEST_DATA_DIR) + "/traces/" + run; }

std::vector<std::string> trace_files(const std::string& run) {
  std::vector<std::string> files;
  const std::string dir = trace_dir(run);
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d)) {
      const std::string name = e->d_name;
      if (name.find(".pt.trace.json.gz") != std::string::npos) files.push_back(dir + "/" + name);
    }
    closedir(d);
  }
  std::sort(files.begin(), files.end());
  return files;
}

nlohmann::json meta(const std::string& run) {
  std::ifstream in(trace_dir(run) + "/meta.json");
  return nlohmann::json::parse(in);
}

std::string gunzip_file(const std::string& path) {
  gzFile f = gzopen(path.c_str(), "rb");
  if (!f) throw std::runtime_error("cannot open " + path);
  std::string out;
  char buf[1 << 16];
  int n = 0;
  while ((n = gzread(f, buf, sizeof buf)) > 0) out.append(buf, static_cast<size_t>(n));
  gzclose(f);
  return out;
}

void gzip_file(const std::string& path, const std::string& text) {
  gzFile f = gzopen(path.c_str(), "wb");
  if (!f) throw std::runtime_error("cannot write " + path);
  gzwrite(f, text.data(), static_cast<unsigned>(text.size()));
  gzclose(f);
}

std::vector<double> profiler_step_durations_us(const std::string& path) {
  const auto j = nlohmann::json::parse(gunzip_file(path));
  std::vector<std::pair<double, double>> steps;
  for (const auto& e : j["traceEvents"])
    if (e.value("cat", "") == "user_annotation" && e.value("name", "").rfind("ProfilerStep#", 0) == 0)
      steps.emplace_back(e["ts"].get<double>(), e["dur"].get<double>());
  std::sort(steps.begin(), steps.end());
  std::vector<double> out;
  for (const auto& s : steps) out.push_back(s.second);
  return out;
}

void rewrite_trace(const std::string& from, const std::string& out, const std::function<void(nlohmann::json&)>& edit) {
  auto j = nlohmann::json::parse(gunzip_file(from));
  edit(j);
  std::ofstream(out) << j.dump();
}

void drop_events(nlohmann::json& trace, const std::function<bool(const nlohmann::json&)>& drop) {
  auto& events = trace["traceEvents"];
  nlohmann::json kept = nlohmann::json::array();
  for (auto& e : events)
    if (!drop(e)) kept.push_back(std::move(e));
  events = std::move(kept);
}

std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const TraceError& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace tunebench::import::test
