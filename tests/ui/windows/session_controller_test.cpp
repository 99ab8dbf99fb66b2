// Issue 44: a stored trial's row in the trials table (to_trial_record). A torch.profiler import of
// some ranks of a run showed the run's world size in the Ranks column while the trial view's title
// said "1 of 2 ranks": the row says what was imported, as the title does.
#include <gtest/gtest.h>

#include "core/config/trial_config.h"
#include "tests/ui/fake_events.h"
#include "ui/models/trials_model.h"
#include "ui/windows/session_controller.h"

using namespace tunebench;
using namespace tunebench::ui;

namespace session_controller_test {

// The stored log of `ranks` ranks of a `world`-rank DDP run (hellos and a few steps each), and the
// trial's row as the session lists it.
TrialRecord stored_row(const std::vector<int>& ranks, int world) {
  config::TrialConfig c = *config::trial_preset("7b-ddp");
  c.world_size = world;
  c.steps = 3;
  protocol::TrialLog log;
  for (int r : ranks) {
    log.add({{1, "t", r, 1'000'000}, fake::make_hello(c, r, true)});
    for (int64_t i = 0; i < 3; ++i) {
      const int64_t t = 2'000'000 + i * 400'000;
      log.add({{1, "t", r, t + 400'000}, fake::make_step(c, r, i, t, 400'000, true)});
    }
  }
  store::TrialInfo info;
  info.id = 7;
  info.name = "import";
  info.config = config::to_json(c);
  info.status = protocol::TrialStatus::Done;
  info.step_count = int64_t(3 * ranks.size());
  return to_trial_record(info, log);
}

std::string ranks_cell(const TrialRecord& record) {
  TrialsModel model;
  model.upsert(record);
  return model.index(0, TrialsModel::Ranks).data().toString().toStdString();
}

}  // namespace session_controller_test

using namespace session_controller_test;

TEST(TrialsTableRanks, APartialImportSaysHowManyRanksOfItsWorldItHolds) {
  EXPECT_EQ(ranks_cell(stored_row({0, 1}, 4)), "2 of 4");
  EXPECT_EQ(ranks_cell(stored_row({1}, 2)), "1 of 2");
}

TEST(TrialsTableRanks, AWholeRunSaysItsWorldSize) {
  EXPECT_EQ(ranks_cell(stored_row({0, 1, 2, 3}, 4)), "4");
  EXPECT_EQ(ranks_cell(stored_row({0}, 1)), "1");
  // A queued trial has no log yet: its configured world.
  store::TrialInfo queued;
  config::TrialConfig c = *config::trial_preset("7b-ddp");
  c.world_size = 8;
  queued.config = config::to_json(c);
  EXPECT_EQ(ranks_cell(to_trial_record(queued, {})), "8");
}
