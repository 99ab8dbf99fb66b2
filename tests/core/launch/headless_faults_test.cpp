// The shared fault table (supervision_faults.h) against the headless runner, launch::run_trial,
// with the fake worker and the fake ssh: every fault ends with the row's status, exit code and
// words, in the result and in the session. tests/ui/runner/runner_faults_test.cpp runs the same
// rows against the GUI's TrialRunner.
#include <gtest/gtest.h>

#include <filesystem>

#include "core/launch/headless_run.h"
#include "core/store/session_store.h"
#include "tests/core/launch/supervision_faults.h"

using namespace tunebench;
using tunebench::test::FaultCase;

namespace {

struct TempDir {
  std::filesystem::path path;
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "tunebench-faults-XXXXXX").string();
    path = ::mkdtemp(tmpl.data());
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
};

}  // namespace

// At namespace scope: TEST_P derives a class with external linkage from it.
class HeadlessFaults : public ::testing::TestWithParam<FaultCase> {};

TEST_P(HeadlessFaults, EndsWithTheSharedWords) {
  const FaultCase& c = GetParam();
  TempDir dir;
  test::FaultEnvironment fault(c);
  launch::HeadlessRequest request;
  request.session_path = (dir.path / "faults.tbsession").string();
  request.config = test::fault_config(c, TUNEBENCH_FAKE_WORKER, TUNEBENCH_FAKE_SSH);
  request.name = c.name;
  request.source = "faults test";
  request.worker = c.worker.empty() ? std::string(TUNEBENCH_FAKE_WORKER) : c.worker;
  request.supervision.grace_s = 2.0;
  bool stop = false;
  request.on_progress = [&](const launch::Progress& p) {
    stop = stop || (c.stop_at_step >= 0 && p.step >= c.stop_at_step);
  };
  request.cancelled = [&] { return stop; };

  const launch::HeadlessResult r = launch::run_trial(request);
  const launch::TrialEnd& e = r.end;
  EXPECT_EQ(e.status, c.status) << protocol::to_string(e.status) << ": " << r.message;
  EXPECT_EQ(e.exit_code, c.exit_code) << r.message;
  EXPECT_EQ(e.reason, c.reason);
  EXPECT_EQ(e.failed_rank, c.failed_rank);
  std::string tail;
  for (const auto& line : e.stderr_tail) tail += line + "\n";
  EXPECT_NE(tail.find(c.stderr_has), std::string::npos) << tail;

  // The session says the same.
  if (c.invalid_config) {
    EXPECT_EQ(r.trial_id, -1);  // refused before anything was added
    return;
  }
  ASSERT_GT(r.trial_id, 0) << r.message;
  const auto store = store::SessionStore::open(request.session_path, {store::SessionStore::Mode::ReadOnly});
  const auto stored = store.trial(r.trial_id);
  EXPECT_EQ(stored.status, c.status);
  EXPECT_EQ(stored.exit_reason, c.reason);
}

INSTANTIATE_TEST_SUITE_P(Faults, HeadlessFaults, ::testing::ValuesIn(test::fault_cases()),
                         [](const auto& info) { return test::fault_name(info.param); });
