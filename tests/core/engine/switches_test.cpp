// The worker's environment switches: read once, each one that is set kept for the trial's record.
#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <string>

#include "core/engine/switches.h"

namespace te = tunebench::engine;

namespace {

std::map<std::string, std::string> g_env;
const char* fake_getenv(const char* name) {
  const auto it = g_env.find(name);
  return it == g_env.end() ? nullptr : it->second.c_str();
}

}  // namespace

TEST(Switches, NoneSetIsTheDefaultBehaviour) {
  g_env.clear();
  const te::Switches s = te::read_switches(fake_getenv);
  EXPECT_TRUE(s.set.empty());
  EXPECT_FALSE(s.memory_phases);
  EXPECT_TRUE(s.gemm_search);
  EXPECT_FALSE(s.gemm_log);
  EXPECT_FALSE(s.torch_adamw);
  EXPECT_TRUE(s.sampler_dump.empty());
  EXPECT_TRUE(s.memory_snapshot.empty());
}

TEST(Switches, EachSwitchSetActsAndIsKeptForTheRecord) {
  g_env = {{"TUNEBENCH_MEMORY_PHASES", "1"}, {"TUNEBENCH_GEMM", "cublas"}, {"TUNEBENCH_GEMM_LOG", ""},
           {"TUNEBENCH_ADAMW", "torch"},      {"TUNEBENCH_SAMPLER_DUMP", "/tmp/d"},
           {"TUNEBENCH_MEMORY_SNAPSHOT", "/tmp/m.json"}, {"TUNEBENCH_COLLECTIVE_DELAY", "1:50"}, {"TUNEBENCH_TRIAL", "t1"},         {"TUNEBENCH_HOST_PARTS", "1"}};
  const te::Switches s = te::read_switches(fake_getenv);
  EXPECT_TRUE(s.memory_phases);
  EXPECT_FALSE(s.gemm_search);
  EXPECT_TRUE(s.gemm_log) << "any value turns the log on";
  EXPECT_TRUE(s.torch_adamw);
  EXPECT_EQ(s.sampler_dump, "/tmp/d");
  EXPECT_EQ(s.memory_snapshot, "/tmp/m.json");
  EXPECT_EQ(s.collective_delay_rank, 1);
  EXPECT_DOUBLE_EQ(s.collective_delay_ms, 50.0);
  EXPECT_TRUE(s.problems.empty());
  EXPECT_EQ(s.set.size(), te::switch_names().size());
  for (const auto& name : te::switch_names()) EXPECT_EQ(s.set.at(name), g_env.at(name)) << name;
  // The launcher's variable and a removed switch are not switches.
  EXPECT_FALSE(s.set.count("TUNEBENCH_TRIAL"));
  EXPECT_FALSE(s.set.count("TUNEBENCH_HOST_PARTS"));
}

// A switch set to a value that changes nothing is still recorded: it is what the trial ran with.
TEST(Switches, ValuesThatChangeNothingAreRecordedToo) {
  g_env = {{"TUNEBENCH_MEMORY_PHASES", "0"}, {"TUNEBENCH_GEMM", "search"}};
  const te::Switches s = te::read_switches(fake_getenv);
  EXPECT_FALSE(s.memory_phases);
  EXPECT_TRUE(s.gemm_search);
  EXPECT_EQ(s.set.size(), 2u);
}

// The collective delay (issue 40) takes RANK:MS; anything else is a problem the worker refuses in words.
TEST(Switches, ACollectiveDelayIsRankColonMillisecondsOrAProblem) {
  g_env = {{"TUNEBENCH_COLLECTIVE_DELAY", "0:12.5"}};
  te::Switches s = te::read_switches(fake_getenv);
  EXPECT_EQ(s.collective_delay_rank, 0);
  EXPECT_DOUBLE_EQ(s.collective_delay_ms, 12.5);
  for (const char* bad : {"50", "one:fifty", "1:", ":5", "1:-3", "1:5x", "-1:5", "1:1e9"}) {
    g_env = {{"TUNEBENCH_COLLECTIVE_DELAY", bad}};
    s = te::read_switches(fake_getenv);
    EXPECT_EQ(s.collective_delay_rank, -1) << bad;
    ASSERT_EQ(s.problems.size(), 1u) << bad;
    EXPECT_EQ(s.problems[0], std::string("TUNEBENCH_COLLECTIVE_DELAY=") + bad +
                                 ": expected RANK:MS, a rank and a delay of 0 to 60000 ms (e.g. 1:50)");
    EXPECT_EQ(s.set.at("TUNEBENCH_COLLECTIVE_DELAY"), bad);  // recorded as set, even when refused
  }
}
