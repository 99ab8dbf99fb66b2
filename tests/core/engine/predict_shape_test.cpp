// core/predict counts parameters without libtorch (model_shape.h); it must describe the very model
// the engine builds, unit by unit.
#include <gtest/gtest.h>

#include "core/engine/model/llama.h"
#include "core/predict/model_shape.h"

namespace te = tunebench::engine;
namespace predict = tunebench::predict;

TEST(PredictShape, UnitsMatchTheEnginesModel) {
  for (const auto& name : tunebench::config::model_preset_names()) {
    if (name == "custom") continue;
    const auto dims = *tunebench::config::model_preset(name);
    const auto units = predict::llama_units(dims);
    ASSERT_EQ(units.size(), static_cast<size_t>(dims.layers) + 2) << name;
    for (size_t u = 0; u < units.size(); ++u) {
      const auto shapes = te::LlamaModel::unit_shapes(dims, u);
      ASSERT_EQ(shapes.size(), units[u].params.size()) << name << " unit " << u;
      for (size_t k = 0; k < shapes.size(); ++k) {
        int64_t numel = 1;
        for (auto v : shapes[k]) numel *= v;
        EXPECT_EQ(numel, units[u].params[k].numel()) << name << " unit " << u << " param " << k;
        EXPECT_EQ(shapes[k].size() == 2, units[u].params[k].matmul || u == 0) << name << " unit " << u;
      }
    }
  }
  const auto tiny = *tunebench::config::model_preset("tiny");
  te::LlamaModel model(tiny, at::TensorOptions().dtype(at::kFloat));
  EXPECT_EQ(model.parameter_count(), predict::parameter_count(tiny));
}
