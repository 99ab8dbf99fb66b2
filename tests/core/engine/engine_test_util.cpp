#include "engine_test_util.h"

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <gtest/gtest.h>

namespace tunebench::engine::testing {

config::TrialConfig small_config() {
  config::TrialConfig c;
  c.model = "custom";
  c.dims = {64, 2, 4, 176, 96};
  c.seq_len = 32;
  c.micro_batch = 4;
  c.device = config::Device::Cpu;
  c.steps = 6;
  c.warmup = 1;
  c.lr = 1e-3;
  return c;
}

at::Tensor random_tokens(const config::TrialConfig& c, int64_t batch, uint64_t seed) {
  at::Generator gen = at::detail::createCPUGenerator(seed);
  return at::randint(0, c.dims.vocab, {batch, c.seq_len + 1}, gen, at::TensorOptions().dtype(at::kLong));
}

std::string write_pattern_file(const std::string& name, int64_t tokens, int period, int vocab) {
  const std::string path = ::testing::TempDir() + "/" + name + "-" + std::to_string(::getpid()) + ".bin";
  std::ofstream out(path, std::ios::binary);
  for (int64_t i = 0; i < tokens; ++i) {
    const uint16_t v = static_cast<uint16_t>((i % period) * 7 % vocab);
    out.write(reinterpret_cast<const char*>(&v), 2);
  }
  return path;
}

double max_rel_diff(const std::vector<at::Tensor>& a, const std::vector<at::Tensor>& b) {
  double worst = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    const double scale = b[i].abs().max().item<double>() + 1e-12;
    worst = std::max(worst, (a[i] - b[i]).abs().max().item<double>() / scale);
  }
  return worst;
}

std::vector<protocol::Step> Events::steps() const {
  std::vector<protocol::Step> out;
  for (const auto& p : all)
    if (std::holds_alternative<protocol::Step>(p)) out.push_back(std::get<protocol::Step>(p));
  return out;
}

}  // namespace tunebench::engine::testing
