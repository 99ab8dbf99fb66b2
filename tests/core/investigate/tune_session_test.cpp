// A tune plan in a session: core/predict ranks the space once when the plan is opened, the ranking
// is stored with the plan (so a resumed search replays the same seeds), and a stored ranking
// that does not match its space is refused.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "core/investigate/tune_session.h"
#include "core/store/plans.h"
#include "core/store/session_store.h"

namespace ti = tunebench::investigate;
namespace tc = tunebench::config;
namespace ts = tunebench::store;

namespace {

struct TempDir {
  TempDir() : dir(std::filesystem::temp_directory_path() / ("tb-tune-session-" + std::to_string(::getpid()))) {
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
  }
  ~TempDir() { std::filesystem::remove_all(dir); }
  std::filesystem::path dir;
};

ti::TuneSpec gpu_spec() {
  ti::TuneSpec spec;
  spec.base.name = "tune";
  spec.base.device = tc::Device::Cuda;
  spec.base.micro_batch = 2;
  spec.cuda = true;
  spec.gpu = "h200";
  for (const char* a : {"micro_batch=1,2,4", "checkpointing=false,true"}) spec.space.axes.push_back(ti::parse_axis(a));
  spec.options.short_steps = 4;
  spec.options.long_steps = 8;
  return spec;
}

}  // namespace

TEST(TuneSession, ThePredictionRanksEveryPointBestFirst) {
  auto spec = gpu_spec();
  ti::predict_space(spec, {});
  ASSERT_EQ(spec.predicted.size(), spec.space.grid_size()) << spec.prediction_note;
  for (size_t i = 1; i < spec.predicted.size(); ++i)
    EXPECT_GE(spec.predicted[i - 1].objective, spec.predicted[i].objective);
  // Recomputing activations costs time: every point without checkpointing ranks above its twin with it.
  auto rank_of = [&](int mb, int ckpt) {
    for (size_t i = 0; i < spec.predicted.size(); ++i)
      if (spec.predicted[i].point == ti::TunePoint{mb, ckpt}) return i;
    return spec.predicted.size();
  };
  for (int mb = 0; mb < 3; ++mb) EXPECT_LT(rank_of(mb, 0), rank_of(mb, 1)) << mb;
  EXPECT_NE(spec.prediction_note.find("H200"), std::string::npos) << spec.prediction_note;
  EXPECT_NE(spec.prediction_note.find("0 trials"), std::string::npos) << spec.prediction_note;
}

TEST(TuneSession, WithoutAKnownGpuTheNoteSaysWhyAndTheSearchStartsFromTheBase) {
  auto spec = gpu_spec();
  spec.gpu.clear();
  ti::predict_space(spec, {});
  EXPECT_TRUE(spec.predicted.empty());
  EXPECT_NE(spec.prediction_note.find("no GPU named"), std::string::npos) << spec.prediction_note;
  spec.gpu = "h200";
  ti::predict_space(spec, {});
  EXPECT_FALSE(spec.predicted.empty()) << spec.prediction_note;
  spec.gpu = "no-such-gpu";
  ti::predict_space(spec, {});
  EXPECT_TRUE(spec.predicted.empty());
  EXPECT_NE(spec.prediction_note.find("not in the hardware catalogue"), std::string::npos);
  spec.cuda = false;
  spec.base.device = tc::Device::Cpu;
  ti::predict_space(spec, {});
  EXPECT_TRUE(spec.predicted.empty());
  EXPECT_NE(spec.prediction_note.find("GPU step times only"), std::string::npos) << spec.prediction_note;
}

TEST(TuneSession, TheRankingIsStoredWithThePlanAndResumingFindsTheSamePlan) {
  TempDir tmp;
  const auto path = (tmp.dir / "s.tbsession").string();
  ts::SessionStore::create(path, "tune");
  auto s = ts::SessionStore::open(path);
  const auto spec = gpu_spec();
  const auto id = ti::open_tune(s, spec);
  const auto stored = ti::load_tune(s, id);
  ASSERT_EQ(stored.predicted.size(), spec.space.grid_size());
  auto expected = spec;
  ti::predict_space(expected, {});
  for (size_t i = 0; i < stored.predicted.size(); ++i) EXPECT_EQ(stored.predicted[i].point, expected.predicted[i].point);
  EXPECT_EQ(ti::open_tune(s, spec), id);            // the same request resumes the plan
  EXPECT_NE(ti::open_tune(s, spec, false), id);     // unless a new one is asked for
  const auto first = ti::tune_step(s, id).next;     // the base goes first
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ(first->config.micro_batch, 2);
}

TEST(TuneSession, AStoredRankingOutsideItsSpaceIsRefused) {
  auto j = ti::to_json(gpu_spec());
  j["predicted"] = {{{"point", {0, 5}}, {"objective", 1.0}}};
  EXPECT_THROW(ti::tune_spec_from_json(j), std::runtime_error);
  j["predicted"] = {{{"point", {0}}, {"objective", 1.0}}};
  EXPECT_THROW(ti::tune_spec_from_json(j), std::runtime_error);
  j["predicted"] = {{{"point", {2, 1}}, {"objective", 1.0}}};
  EXPECT_EQ(ti::tune_spec_from_json(j).predicted.size(), 1u);
  j["options"]["eta"] = 0.5;
  EXPECT_THROW(ti::tune_spec_from_json(j), std::runtime_error);
}
