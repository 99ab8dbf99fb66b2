#include "tests/core/report/report_fixtures.h"

#include "core/store/session_store.h"
#include "core/store/trial_writer.h"

namespace tunebench::report::test {

namespace ts = tunebench::store;
namespace tt = tunebench::store::test;

std::vector<ts::LoadedTrial> h200_trials(const std::vector<int64_t>& ids) {
  auto s = ts::SessionStore::open(TUNEBENCH_SESSIONS_DIR "/h200-7b.tbsession", {ts::SessionStore::Mode::ReadOnly});
  std::vector<ts::LoadedTrial> out;
  for (int64_t id : ids) out.push_back(s.load_trial(id));
  return out;
}

std::vector<ts::LoadedTrial> all_h200_trials() {
  return load_all(TUNEBENCH_SESSIONS_DIR "/h200-7b.tbsession");
}

std::vector<ts::LoadedTrial> load_all(const std::string& path) {
  auto s = ts::SessionStore::open(path, {ts::SessionStore::Mode::ReadOnly});
  std::vector<ts::LoadedTrial> out;
  for (const auto& t : s.list_trials()) out.push_back(s.load_trial(t.id));
  return out;
}

std::string hostile_session(const tt::TempDir& dir) {
  const std::string path = dir.file("hostile.tbsession");
  int64_t a = 0, b = 0;
  {
    auto s = ts::SessionStore::create(path, "hostile");
    a = s.add_trial(kHostileName, {{"strategy", "ddp"}, {"world_size", 2}});
    b = s.add_trial("plain", {{"strategy", "ddp"}, {"world_size", 2}, {"micro_batch", 2}});
  }
  for (int64_t id : {a, b}) {
    ts::TrialWriter w(path, id);
    for (const auto& e : tt::full_trial(2, 6)) w.add(e);
    w.finish(ts::TrialStatus::Done);
  }
  {
    auto s = ts::SessionStore::open(path);
    s.set_trial_notes(a, kHostileNotes);
    s.set_trial_tags(a, {"<b>bold</b>", "a\"b", "`tick`|pipe"});
  }
  tt::raw_exec(path,
               "UPDATE trials SET name = CAST(X'41FF42' AS TEXT) WHERE name = 'plain';"
               "UPDATE rank_env SET host = CAST(X'C0AF68' AS TEXT)");
  return path;
}

}  // namespace tunebench::report::test
