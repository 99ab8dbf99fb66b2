// The hardware catalogue: it parses, every figure has a source, NVML's device names find the right
// entry, and the link a config implies follows its NCCL variables.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <regex>
#include <string>
#include <utility>
#include <vector>

#include "core/hardware/hardware.h"

namespace hw = tunebench::hardware;

TEST(HardwareCatalogue, EveryEntryHasFiguresAndASource) {
  const auto& cat = hw::catalogue();
  ASSERT_GE(cat.gpus.size(), 10u);
  ASSERT_GE(cat.links.size(), 10u);
  for (const auto& g : cat.gpus) {
    EXPECT_FALSE(g.source.empty()) << g.id;
    EXPECT_TRUE(g.bf16_tflops || g.fp16_tflops) << g.id;
    EXPECT_GT(g.hbm_gbps, 0) << g.id;
    EXPECT_GT(g.memory_bytes, 8LL << 30) << g.id;
    EXPECT_NE(hw::find_link(g.default_link), nullptr) << g.id << " names " << g.default_link;
  }
  for (const auto& l : cat.links) EXPECT_FALSE(l.source.empty()) << l.id;
  for (const char* name : {"matmul_efficiency", "attention_efficiency", "memory_efficiency", "kernel_launch_us",
                           "cuda_context_bytes", "nccl_buffer_bytes", "allocator_slack_fraction"}) {
    ASSERT_TRUE(cat.constants.count(name)) << name;
    EXPECT_FALSE(cat.constants.at(name).source.empty()) << name;
  }
}

// A source that cites a document names a section heading that exists there, in quotes:
// `(docs/BENCHMARKS.md, "All-reduce bus bandwidth")` for a current figure, `(docs/history/
// benchmarks-2026-12.md, "Native trials: kernel sampling (run 1")` for one whose evidence is in the
// dated journal. A heading matches when it begins with the quoted words. Figures are cited inside the
// repository.
TEST(HardwareCatalogue, SourcesCiteDocumentSectionsThatExist) {
  std::map<std::string, std::vector<std::string>> headings;  // by the path below docs/
  const auto headings_of = [&](const std::string& doc) -> const std::vector<std::string>& {
    auto [it, added] = headings.try_emplace(doc);
    if (added) {
      std::ifstream in(std::string(TUNEBENCH_DOCS_DIR) + "/" + doc);
      for (std::string line; std::getline(in, line);)
        if (line.rfind("#", 0) == 0) it->second.push_back(line.substr(line.find_first_not_of("# ")));
    }
    return it->second;
  };
  const auto& cat = hw::catalogue();
  std::vector<std::pair<std::string, std::string>> sources;  // (entry, source)
  for (const auto& g : cat.gpus) sources.emplace_back(g.id, g.source);
  for (const auto& l : cat.links) sources.emplace_back(l.id, l.source);
  for (const auto& [name, c] : cat.constants) sources.emplace_back(name, c.source);
  int cited = 0, cited_now = 0;
  static const std::regex cite(R"re(docs/([A-Za-z0-9_./-]+\.md), "([^"]+)")re");
  for (const auto& [entry, source] : sources) {
    EXPECT_EQ(source.find("../"), std::string::npos) << entry << " cites a file outside the repository: " << source;
    for (std::sregex_iterator it(source.begin(), source.end(), cite), end; it != end; ++it) {
      const std::string doc = (*it)[1].str(), section = (*it)[2].str();
      const auto& in_doc = headings_of(doc);
      ASSERT_FALSE(in_doc.empty()) << entry << " cites docs/" << doc << ", which has no heading (or does not exist)";
      const bool found = std::any_of(in_doc.begin(), in_doc.end(),
                                     [&](const std::string& h) { return h.rfind(section, 0) == 0; });
      EXPECT_TRUE(found) << entry << " cites docs/" << doc << " section \"" << section << "\", which has no such heading";
      ++cited;
      cited_now += doc == "BENCHMARKS.md";
    }
  }
  EXPECT_GE(cited, 5);      // the H200 links and the matmul efficiency at least
  EXPECT_GE(cited_now, 5);  // and those cite the current figures
}

TEST(HardwareCatalogue, FindsGpusByTheNamesNvmlReports) {
  const std::pair<const char*, const char*> cases[] = {
      {"NVIDIA H200", "h200"},
      {"NVIDIA H200 NVL", "h200-nvl"},
      {"NVIDIA H100 80GB HBM3", "h100-sxm"},
      {"NVIDIA H100 PCIe", "h100-pcie"},
      {"NVIDIA H100 NVL", "h100-nvl"},
      {"NVIDIA A100-SXM4-80GB", "a100-80"},
      {"NVIDIA A100-SXM4-40GB", "a100-40"},
      {"NVIDIA A100 80GB PCIe", "a100-80-pcie"},
      {"NVIDIA A100-PCIE-40GB", "a100-40-pcie"},
      {"NVIDIA L40S", "l40s"},
      {"NVIDIA L4", "l4"},
      {"NVIDIA GeForce RTX 4090", "rtx4090"},
      {"NVIDIA GeForce RTX 3090", "rtx3090"},
      {"NVIDIA RTX A6000", "rtxa6000"},
      {"NVIDIA RTX 6000 Ada Generation", "rtx6000ada"},
      {"rtx4090", "rtx4090"},
      {"H200", "h200"},
  };
  for (const auto& [name, id] : cases) {
    const auto* g = hw::find_gpu(name);
    ASSERT_NE(g, nullptr) << name;
    EXPECT_EQ(g->id, id) << name;
  }
  EXPECT_EQ(hw::find_gpu("cpu"), nullptr);
  EXPECT_EQ(hw::find_gpu(""), nullptr);
  EXPECT_EQ(hw::find_gpu("NVIDIA GeForce GTX 1080"), nullptr);  // unknown is unknown, never a guess
}

// MFU's peak (the worker's summary, core/analysis) is the catalogue's dense bf16 figure: one table.
TEST(HardwareCatalogue, MfuPeakIsTheDenseBf16FigureOfTheNamedGpu) {
  EXPECT_DOUBLE_EQ(*hw::mfu_peak_tflops("NVIDIA H200"), 989.4);
  EXPECT_DOUBLE_EQ(*hw::mfu_peak_tflops("NVIDIA H100 80GB HBM3"), 989.4);
  // The PCIe board clocks lower than the SXM part (the engine's old table said 989 for it).
  EXPECT_DOUBLE_EQ(*hw::mfu_peak_tflops("NVIDIA H100 PCIe"), 756.5);
  EXPECT_DOUBLE_EQ(*hw::mfu_peak_tflops("NVIDIA H100 NVL"), 835.5);
  EXPECT_DOUBLE_EQ(*hw::mfu_peak_tflops("NVIDIA A100-SXM4-80GB"), 312.0);
  EXPECT_DOUBLE_EQ(*hw::mfu_peak_tflops("NVIDIA GeForce RTX 4090"), 165.2);
  for (const auto& g : hw::catalogue().gpus) {
    EXPECT_EQ(hw::mfu_peak_tflops(g.name), g.bf16_tflops) << g.id;  // V100: none (no bf16 tensor cores)
    EXPECT_EQ(hw::mfu_peak_tflops(g.id), g.bf16_tflops) << g.id;
  }
  EXPECT_FALSE(hw::mfu_peak_tflops("cpu"));
  EXPECT_FALSE(hw::mfu_peak_tflops("NVIDIA GeForce GTX 1080"));  // unknown: no MFU, never a guess
}

TEST(HardwareCatalogue, BadEntriesAreNamedInTheError) {
  const std::string bad = R"({"gpus": [{"id": "x1", "name": "X", "match": ["x1"], "memory_bytes": 1,
      "hbm_gbps": 0, "sms": 1, "source": "s"}], "links": [], "constants": {}})";
  try {
    hw::parse_catalogue(bad, "test.json");
    FAIL() << "accepted a GPU without bandwidth";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("gpu entry x1"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("test.json"), std::string::npos) << e.what();
  }
  EXPECT_THROW(hw::parse_catalogue("{not json", "t"), std::runtime_error);
  EXPECT_THROW(hw::load_catalogue("/nonexistent/catalogue.json"), std::runtime_error);
}

TEST(HardwareCatalogue, ImpliedLinkFollowsTheNcclVariables) {
  const auto* h200 = hw::find_gpu("h200");
  const auto* rtx = hw::find_gpu("rtx4090");
  ASSERT_TRUE(h200 && rtx);
  EXPECT_EQ(hw::implied_link(*h200, {})->id, "nvlink4");
  EXPECT_EQ(hw::implied_link(*h200, {{"NCCL_P2P_DISABLE", "1"}})->id, "pcie5-nop2p");
  EXPECT_EQ(hw::implied_link(*h200, {{"NCCL_P2P_DISABLE", "1"}, {"NCCL_SHM_DISABLE", "1"}})->id, "host-sockets");
  EXPECT_EQ(hw::implied_link(*h200, {{"NCCL_P2P_DISABLE", "0"}})->id, "nvlink4");
  EXPECT_EQ(hw::implied_link(*rtx, {})->id, "pcie4-nop2p");
}
