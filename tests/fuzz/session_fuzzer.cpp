// Fuzz target: bytes as a .tbsession file from a stranger, opened and loaded the way the GUI and
// `tunebench-cli list/report/export` do.
//
// The bytes are written to a file (SQLite reads files), opened read-only and every trial listed,
// loaded and exported; then opened read-write and changed once (migration of an older schema,
// orphaned trials). Every failure must be a StoreError; nothing may crash or trip a sanitizer.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include "core/analysis/step_time.h"
#include "core/report/export.h"
#include "core/store/export.h"
#include "core/store/session_store.h"
#include "core/store/store_error.h"

namespace ts = tunebench::store;

namespace {

std::string scratch_path() {
  const char* dir = std::getenv("TMPDIR");
  return std::string(dir && *dir ? dir : "/tmp") + "/tunebench-fuzz-session-" + std::to_string(::getpid()) +
         ".tbsession";
}

void remove_all(const std::string& path) {
  for (const char* suffix : {"", "-wal", "-shm", "-journal"}) std::remove((path + suffix).c_str());
}

void read_everything(const std::string& path) {
  ts::SessionStore::OpenOptions options;
  options.mode = ts::SessionStore::Mode::ReadOnly;
  options.busy_timeout = std::chrono::milliseconds(0);
  auto store = ts::SessionStore::open(path, options);
  (void)store.info();
  std::vector<ts::LoadedTrial> loaded;
  for (const auto& t : store.list_trials()) {
    try {
      (void)store.trial_summaries(t.id);
      (void)tunebench::analysis::trial_step_ms(store.trial_steps(t.id));
      loaded.push_back(store.load_trial(t.id));
    } catch (const ts::StoreError&) {
      // one bad trial: the others still load
    }
  }
  std::ostringstream sink;
  ts::write_steps_csv(loaded, sink);
  std::vector<ts::TrialFigures> figures;  // the analysis of every loaded trial, as the exports run it
  for (const auto& t : loaded) figures.push_back(tunebench::report::trial_figures(t));
  ts::write_summaries_csv(loaded, figures, sink);
  sink << ts::trials_to_json(loaded, figures).dump();  // no error handler: text must already be valid UTF-8
  for (const auto& t : loaded) sink << ts::chrome_trace(t).dump();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string path = scratch_path();
  remove_all(path);
  {
    std::ofstream out(path, std::ios::binary);
    out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  }
  try {
    read_everything(path);
    ts::SessionStore::OpenOptions options;
    options.busy_timeout = std::chrono::milliseconds(0);
    auto store = ts::SessionStore::open(path, options);
    (void)store.needs_upgrade();
    (void)store.mark_orphaned_trials_interrupted();  // a change: migrates an older file
    (void)store.list_trials();
  } catch (const ts::StoreError&) {
    // refused or damaged: the expected outcome for most inputs
  }
  remove_all(path);
  return 0;
}
