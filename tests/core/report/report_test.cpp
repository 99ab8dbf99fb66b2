// The HTML report and the Markdown summary: their figures are the comparison's own
// (analysis::make_report), hostile text stays text, nothing is fetched, the sizes and line counts
// the issue promises hold for the recorded 7B session.
#include "core/report/report.h"

#include <gtest/gtest.h>

#include <regex>
#include <sstream>

#include "core/analysis/format.h"
#include "core/analysis/report.h"
#include "core/protocol/trial_log.h"
#include "core/report/report_contents.h"
#include "core/store/limits.h"
#include "tests/core/report/report_fixtures.h"

namespace tr = tunebench::report;
namespace ts = tunebench::store;
namespace tt = tunebench::store::test;
namespace rt = tunebench::report::test;
namespace ta = tunebench::analysis;

namespace {

std::string render(const std::vector<ts::LoadedTrial>& trials, tr::ReportFormat format, bool embed = true) {
  std::ostringstream out;
  tr::ReportOptions options;
  options.embed_session = embed;
  tr::write_report(trials, format, out, options);
  return out.str();
}

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

size_t lines(const std::string& text) { return count(text, "\n"); }

}  // namespace

TEST(ReportContents, FiguresAreTheComparisonWindowsOwn) {
  const auto trials = rt::h200_trials({2, 4, 5});
  const auto contents = tr::make_contents(trials, {});
  std::vector<tunebench::protocol::TrialLog> logs;
  std::vector<std::string> names;
  for (const auto& t : trials) {
    logs.push_back(t.log);
    names.push_back(t.info.name);
  }
  // The same function as the comparison window and `tunebench-cli report`, the same numbers.
  EXPECT_EQ(ta::render_json(contents.report), ta::render_json(ta::make_report(logs, std::nullopt, names)));
  ASSERT_EQ(contents.panels.size(), 3u);
  EXPECT_EQ(contents.first_panel, (std::vector<size_t>{0, 1, 2}));
  ASSERT_EQ(contents.setup.size(), 4u);
  EXPECT_EQ(contents.setup[2].values[1], "2 × NVIDIA H200 (139.8 GiB)");
  EXPECT_NE(contents.setup[3].values[2].find("NCCL_P2P_DISABLE=1"), std::string::npos) << contents.setup[3].values[2];
  EXPECT_EQ(contents.setup[3].values[0], "none (one rank)");
}

TEST(ReportContents, TheVerdictNamesTheBestAndTheWorstWithTheirRatios) {
  const auto trials = rt::h200_trials({2, 4, 5});
  const auto c = tr::make_contents(trials, {});
  const auto* tput = tr::metric_row(c.report.comparison, "tokens_per_s_total");
  ASSERT_TRUE(tput);
  const auto& ts = c.report.comparison.trials;
  ASSERT_EQ(c.report.comparison.baseline, 0u);  // the single GPU
  // NVLink DDP is the fastest, the no-P2P DDP the slowest: both named with the window's ratios.
  EXPECT_EQ(c.verdict.rfind(ts[1].label + " delivers the most throughput, " +
                                ta::format_count(tput->values[1]->median) + " tokens/s in total (" +
                                ta::format_ratio(*tput->ratio[1]) + " " + ts[0].label + ")",
                            0),
            0u)
      << c.verdict;
  EXPECT_NE(c.verdict.find(ts[2].label + " reaches only " + ta::format_ratio(*tput->ratio[2])), std::string::npos)
      << c.verdict;
  EXPECT_NE(c.verdict.find("more on exposed all-reduce"), std::string::npos) << c.verdict;
  EXPECT_LT(*tput->ratio[2], 1.0);
}

TEST(HtmlReport, ReadsInTheOrderAReaderNeedsWithAnSvgPerPlot) {
  const auto trials = rt::h200_trials({2, 4, 5});
  const std::string html = render(trials, tr::ReportFormat::Html);
  const auto c = tr::make_contents(trials, {});
  size_t last = 0;
  for (const char* id : {"id=\"verdict\"", "id=\"setup\"", "id=\"metrics\"", "id=\"breakdown\"", "id=\"steps\"",
                         "id=\"timeline\"", "id=\"telemetry\"", "id=\"diagnosis\"", "id=\"environment\"",
                         "id=\"reproduce\""}) {
    const size_t at = html.find(id);
    ASSERT_NE(at, std::string::npos) << id;
    EXPECT_GT(at, last) << id << " out of order";
    last = at;
  }
  // Plots: a breakdown bar per trial, the step chart, a timeline per trial, three telemetry charts.
  EXPECT_EQ(count(html, "<svg class=\"hbar\""), 3u);
  EXPECT_EQ(count(html, "<svg class=\"lanes\""), 3u);
  EXPECT_EQ(count(html, "<svg class=\"chart\""), 4u);
  // Medians with units and the collectives named on the timeline.
  const auto& step = c.report.comparison.metrics.front();
  ASSERT_EQ(step.key, "step_ms");
  EXPECT_NE(html.find(ta::format_metric_value(step.values[2]->median, "ms") + " ms"), std::string::npos);
  EXPECT_NE(html.find(">all-reduce</text>"), std::string::npos);
  EXPECT_NE(html.find("warm-up"), std::string::npos);
  // The command line that reproduces the no-P2P trial.
  EXPECT_NE(html.find("--nccl-env NCCL_P2P_DISABLE=1"), std::string::npos);
  EXPECT_NE(html.find("torchrun --standalone --nproc-per-node 2"), std::string::npos);
  EXPECT_EQ(ts::valid_utf8(html), html);
}

TEST(HtmlReport, FetchesNothingAndRunsNothing) {
  const std::string html = render(rt::h200_trials({2, 4, 5}), tr::ReportFormat::Html);
  for (const char* forbidden : {"http:", "https:", "src=", "url(", "@import", "<iframe", "<object", "<link"})
    EXPECT_EQ(html.find(forbidden), std::string::npos) << forbidden;
  const std::regex href("href=\"([^\"]*)\"");
  for (auto it = std::sregex_iterator(html.begin(), html.end(), href); it != std::sregex_iterator(); ++it)
    EXPECT_EQ((*it)[1].str().front(), '#') << (*it)[1].str();
  EXPECT_NE(html.find("default-src 'none'"), std::string::npos);
  // One script element: the data block, which is not JavaScript.
  EXPECT_EQ(count(html, "<script"), 1u);
  EXPECT_NE(html.find("<script type=\"application/vnd.tunebench.session+sqlite\""), std::string::npos);
}

TEST(HtmlReport, HostileNamesNotesAndTagsStayText) {
  tt::TempDir dir;
  const auto trials = rt::load_all(rt::hostile_session(dir));
  const std::string html = render(trials, tr::ReportFormat::Html);
  EXPECT_EQ(count(html, "<script"), 1u);  // the data block only
  EXPECT_EQ(html.find("<img"), std::string::npos);
  EXPECT_EQ(html.find("<b>bold"), std::string::npos);
  EXPECT_EQ(html.find("alert(\"x\")"), std::string::npos);  // the quote is escaped too
  EXPECT_NE(html.find("&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;co&#39;"), std::string::npos);
  EXPECT_NE(html.find("&lt;/script&gt;&lt;img src=x onerror=alert(1)&gt;"), std::string::npos);
  EXPECT_NE(html.find("a&quot;b"), std::string::npos);
  EXPECT_EQ(ts::valid_utf8(html), html);  // the invalid name and host were repaired
  EXPECT_NE(html.find("A\xEF\xBF\xBD" "B"), std::string::npos);
}

TEST(HtmlReport, FifteenTrialsStayUnderTwoMegabytes) {
  const std::string html = render(rt::all_h200_trials(), tr::ReportFormat::Html);
  EXPECT_LT(html.size(), 2'000'000u);
  EXPECT_EQ(count(html, "<svg class=\"lanes\""), 15u);
}

TEST(MarkdownReport, TheSummaryFitsSixtyLines) {
  for (const auto& trials : {rt::h200_trials({2, 4, 5}), rt::all_h200_trials(), rt::h200_trials({1})}) {
    const std::string md = render(trials, tr::ReportFormat::Markdown);
    SCOPED_TRACE(md);
    EXPECT_LE(lines(md), 60u);
    EXPECT_NE(md.find("**Verdict:** "), std::string::npos);
    EXPECT_NE(md.find("| Trial | Devices | Step time"), std::string::npos);
    EXPECT_NE(md.find("```text"), std::string::npos);
    EXPECT_NE(md.find("tunebench-worker"), std::string::npos);
    EXPECT_EQ(count(md, "```") % 2, 0u);  // fences close
  }
  const std::string all = render(rt::all_h200_trials(), tr::ReportFormat::Markdown);
  EXPECT_NE(all.find("more"), std::string::npos);  // 15 trials are cut to fit, and it says so
}

// A kernel-sampled trial's bar shows the GPU-idle parts, each with its own glyph named in the legend
// (they used to be drawn as '?', and the legend had '? GPU idle: host wait').
TEST(MarkdownReport, GpuIdlePartsHaveTheirOwnGlyphs) {
  ts::LoadedTrial t;
  t.info.id = 1;
  t.info.name = "tiny eager, sampled";
  t.info.status = ts::TrialStatus::Done;
  t.log = tunebench::protocol::read_trial_log_file(std::string(TUNEBENCH_TEST_DATA_DIR) +
                                                   "/idle/h200-tiny-eager-sampled.jsonl");
  const std::string md = render({t}, tr::ReportFormat::Markdown, false);
  SCOPED_TRACE(md);
  const size_t fence = md.find("```text");
  ASSERT_NE(fence, std::string::npos);
  const std::string block = md.substr(fence, md.find("```", fence + 3) - fence);
  EXPECT_EQ(block.find('?'), std::string::npos);
  EXPECT_NE(block.find("- GPU idle: host wait"), std::string::npos);
  // The host-bound tiny step is mostly host wait: its bar is mostly that glyph.
  EXPECT_GT(count(block, "-"), 10u);
}

TEST(MarkdownReport, HostileNamesDoNotBecomeMarkupOrBreakTheTable) {
  tt::TempDir dir;
  const std::string md = render(rt::load_all(rt::hostile_session(dir)), tr::ReportFormat::Markdown);
  // Outside code blocks (whose text a renderer shows as it is) no markup survives.
  std::string prose;
  bool in_code = false;
  std::istringstream lines_in(md);
  for (std::string line; std::getline(lines_in, line);) {
    if (line.rfind("```", 0) == 0) {
      in_code = !in_code;
      continue;
    }
    if (!in_code) prose += line + "\n";
  }
  EXPECT_EQ(prose.find("<script"), std::string::npos) << prose;
  EXPECT_EQ(prose.find("<img"), std::string::npos);
  EXPECT_NE(prose.find("&lt;script&gt;"), std::string::npos);
  // Every table row has as many unescaped cell separators as the header.
  std::istringstream in(md);
  size_t header = 0;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("|", 0) != 0) continue;
    size_t pipes = 0;
    for (size_t i = 0; i < line.size(); ++i) pipes += line[i] == '|' && (i == 0 || line[i - 1] != '\\');
    if (!header) header = pipes;
    EXPECT_EQ(pipes, header) << line;
  }
  EXPECT_EQ(ts::valid_utf8(md), md);
}

// The report colours a ratio only where the window does (analysis::standing): a data wait of 0.0
// against 0.0 ms is noise, not "0.74x better"; the DDP trials' slower step is worse beyond it.
TEST(HtmlReport, ColoursOnlyDifferencesBeyondTheNoise) {
  const auto trials = rt::h200_trials({2, 4, 5});
  const std::string html = render(trials, tr::ReportFormat::Html, false);
  const auto row = [&](const std::string& label) {
    const size_t at = html.find("<tr><th>" + label + "</th>");
    EXPECT_NE(at, std::string::npos) << label;
    return at == std::string::npos ? std::string() : html.substr(at, html.find("</tr>", at) - at);
  };
  const std::string data_wait = row("Data wait");
  EXPECT_EQ(data_wait.find("class=\"better\""), std::string::npos) << data_wait;
  EXPECT_EQ(data_wait.find("class=\"worse\""), std::string::npos) << data_wait;
  EXPECT_NE(row("Step time").find("class=\"worse\""), std::string::npos);
}

// The environment section shows the worker's switches apart from the NCCL variables, and a switch
// set in one trial only is in the configuration diff (a trial ran with it: docs/PROTOCOL.md,
// "Environment switches").
TEST(HtmlReport, EnvironmentSwitchesAreShownWithTheTrialsThatRanWithThem) {
  auto trials = rt::h200_trials({2, 4});
  for (auto& [rank, r] : trials[1].log.ranks)
    if (r.hello) r.hello->env["TUNEBENCH_GEMM"] = "cublas";
  const std::string html = render(trials, tr::ReportFormat::Html, false);
  const size_t env = html.find("id=\"environment\"");
  ASSERT_NE(env, std::string::npos);
  const size_t switches = html.find(">Switches<", env);
  ASSERT_NE(switches, std::string::npos) << "the environment section has a row of switches";
  EXPECT_NE(html.find("TUNEBENCH_GEMM=cublas", switches), std::string::npos);
  const auto c = tr::make_contents(trials, {});
  bool in_diff = false;
  for (const auto& row : c.config_diff)
    if (row.label == "switch TUNEBENCH_GEMM") {
      in_diff = true;
      EXPECT_EQ(row.values, (std::vector<std::string>{"unset", "cublas"}));
    }
  EXPECT_TRUE(in_diff);
}

// The recorded CPU trials (sessions/cpu-tiny.tbsession: one rank, then two over Gloo) in the
// report: what they ran on is named in the CPU's words, never "1 × cpu" or "GPU"; the CPU and
// memory telemetry of their processes is charted and in the figures; the CPU pair's diagnosis
// names the competition for the CPU.
TEST(Report, CpuTrialsAreDescribedInTheCpusWords) {
  const auto trials = rt::load_all(TUNEBENCH_SESSIONS_DIR "/cpu-tiny.tbsession");
  ASSERT_EQ(trials.size(), 2u);
  const auto contents = tr::make_contents(trials, {});
  ASSERT_EQ(contents.setup.size(), 4u);
  EXPECT_EQ(contents.setup[2].label, "Devices");
  EXPECT_EQ(contents.setup[2].values[0].rfind("1 CPU rank", 0), 0u) << contents.setup[2].values[0];
  EXPECT_EQ(contents.setup[2].values[1].rfind("2 CPU ranks", 0), 0u) << contents.setup[2].values[1];
  const std::string md = render(trials, tr::ReportFormat::Markdown, false);
  EXPECT_NE(md.find("| 2 CPU ranks |"), std::string::npos) << md;
  EXPECT_EQ(md.find("× cpu"), std::string::npos) << md;
  const std::string html = render(trials, tr::ReportFormat::Html, false);
  EXPECT_NE(html.find("<b>Process CPU use</b>"), std::string::npos);
  EXPECT_NE(html.find("<b>Process memory (RSS)</b>"), std::string::npos);
  EXPECT_EQ(html.find("No GPU telemetry"), std::string::npos);
  bool cpu_row = false, rss_row = false;
  for (const auto& row : contents.report.comparison.metrics) {
    cpu_row = cpu_row || (row.key == "cpu_use_pct" && row.values[0] && row.values[1]);
    rss_row = rss_row || (row.key == "rss_gib" && row.values[0] && row.values[1]);
  }
  EXPECT_TRUE(cpu_row && rss_row);
}
