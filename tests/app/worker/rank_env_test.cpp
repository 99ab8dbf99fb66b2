// How a rank learns who it is: torchrun's variables, SLURM's, or none.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "rank_env.h"

namespace tw = tunebench::worker;

namespace {
std::map<std::string, std::string> g_env;
const char* fake_getenv(const char* name) {
  auto it = g_env.find(name);
  return it == g_env.end() ? nullptr : it->second.c_str();
}
tw::RankEnv read(std::string* error) { return tw::read_rank_env(error, &fake_getenv); }
}  // namespace

TEST(RankEnv, NoLauncherIsRankZeroOfOne) {
  g_env = {};
  std::string error;
  const auto env = read(&error);
  EXPECT_TRUE(error.empty());
  EXPECT_EQ(env.source, "none");
  EXPECT_EQ(env.world_size, 1);
  EXPECT_EQ(env.rank, 0);
}

TEST(RankEnv, Torchrun) {
  g_env = {{"RANK", "3"}, {"WORLD_SIZE", "4"}, {"LOCAL_RANK", "1"}, {"MASTER_ADDR", "node7"}, {"MASTER_PORT", "29400"}};
  std::string error;
  const auto env = read(&error);
  EXPECT_TRUE(error.empty()) << error;
  EXPECT_EQ(env.source, "torchrun");
  EXPECT_EQ(env.rank, 3);
  EXPECT_EQ(env.world_size, 4);
  EXPECT_EQ(env.local_rank, 1);
  EXPECT_EQ(env.master_addr, "node7");
  EXPECT_EQ(env.master_port, 29400);
}

TEST(RankEnv, Slurm) {
  g_env = {{"SLURM_PROCID", "5"}, {"SLURM_NTASKS", "8"}, {"SLURM_LOCALID", "1"}, {"MASTER_ADDR", "n1"}};
  std::string error;
  const auto env = read(&error);
  EXPECT_TRUE(error.empty()) << error;
  EXPECT_EQ(env.source, "slurm");
  EXPECT_EQ(env.rank, 5);
  EXPECT_EQ(env.world_size, 8);
  EXPECT_EQ(env.local_rank, 1);
}

TEST(RankEnv, ValuesBeyondIntAreReportedNotWrapped) {
  // 4294967298 = 2^32 + 2 used to join 2 ranks; 4294967296 + 1 as RANK used to be rank 1.
  for (auto bad : std::vector<std::map<std::string, std::string>>{
           {{"RANK", "0"}, {"WORLD_SIZE", "4294967298"}},
           {{"RANK", "4294967297"}, {"WORLD_SIZE", "2"}},
           {{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "4294967298"}},
           {{"RANK", "0"}, {"WORLD_SIZE", "2"}, {"LOCAL_RANK", "4294967296"}},
       }) {
    g_env = bad;
    std::string error;
    const auto env = read(&error);
    EXPECT_FALSE(error.empty()) << "world " << env.world_size << ", rank " << env.rank;
  }
}

TEST(RankEnv, MalformedValuesAreReported) {
  for (auto bad : std::vector<std::map<std::string, std::string>>{
           {{"RANK", "two"}, {"WORLD_SIZE", "4"}},
           {{"RANK", "4"}, {"WORLD_SIZE", "4"}},
           {{"RANK", "0"}, {"WORLD_SIZE", "0"}},
           {{"RANK", "0"}, {"WORLD_SIZE", "2"}, {"MASTER_PORT", "99999"}},
       }) {
    g_env = bad;
    std::string error;
    read(&error);
    EXPECT_FALSE(error.empty());
  }
}
