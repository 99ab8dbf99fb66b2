// The session a report carries: written with the report, read back with every record and the
// trials' metadata, imported into another session; and refused, with a sentence, when damaged.
#include "core/report/embedded_session.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <sstream>

#include "core/report/base64.h"
#include "core/report/report.h"
#include "core/store/session_store.h"
#include "core/store/store_error.h"
#include "tests/core/report/report_fixtures.h"

namespace tr = tunebench::report;
namespace ts = tunebench::store;
namespace tt = tunebench::store::test;
namespace rt = tunebench::report::test;

namespace {

std::string html_of(const std::vector<ts::LoadedTrial>& trials) {
  std::ostringstream out;
  tr::write_report(trials, tr::ReportFormat::Html, out);
  return out.str();
}

void expect_same_trials(const std::vector<ts::LoadedTrial>& a, const std::vector<ts::LoadedTrial>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    SCOPED_TRACE(a[i].info.name);
    EXPECT_EQ(tt::canonical(a[i].log), tt::canonical(b[i].log));  // every record of every rank
    EXPECT_EQ(a[i].info.name, b[i].info.name);
    EXPECT_EQ(a[i].info.notes, b[i].info.notes);
    EXPECT_EQ(a[i].info.tags, b[i].info.tags);
    EXPECT_EQ(a[i].info.status, b[i].info.status);
    EXPECT_EQ(a[i].info.exit_reason, b[i].info.exit_reason);
    EXPECT_EQ(a[i].info.config, b[i].info.config);
    EXPECT_EQ(a[i].info.start_us, b[i].info.start_us);
    EXPECT_EQ(a[i].info.end_us, b[i].info.end_us);
  }
}

// A report whose data block holds `payload` (base64 text) in place of the real one.
std::string with_block(const std::string& payload) {
  return "<!DOCTYPE html><html><head><meta name=\"generator\" content=\"tunebench-report 1\"></head><body><script "
         "type=\"application/vnd.tunebench.session+sqlite\">" +
         payload + "</script></body></html>";
}

std::string deflated(const std::string& bytes) {
  uLongf size = compressBound(uLong(bytes.size()));
  std::string out(size, '\0');
  compress2(reinterpret_cast<Bytef*>(out.data()), &size, reinterpret_cast<const Bytef*>(bytes.data()), uLong(bytes.size()), 9);
  out.resize(size);
  return out;
}

std::string refusal(const std::string& html, int64_t max = tr::kMaxEmbeddedSessionBytes) {
  try {
    tr::read_embedded_session(html, max);
  } catch (const ts::StoreError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(EmbeddedSession, TheReportGivesBackItsTrialsWithEveryRecord) {
  const auto trials = rt::h200_trials({2, 4, 5});
  const std::string html = html_of(trials);
  const auto back = tr::read_embedded_session(html);
  expect_same_trials(trials, back.trials);
}

TEST(EmbeddedSession, HostileNamesNotesAndTagsComeBackAsTheyWere) {
  tt::TempDir dir;
  const auto trials = rt::load_all(rt::hostile_session(dir));
  ASSERT_EQ(trials.size(), 2u);
  EXPECT_EQ(trials[0].info.name, rt::kHostileName);
  EXPECT_EQ(trials[1].info.name, "A\xEF\xBF\xBD" "B");  // repaired when loaded
  const auto back = tr::read_embedded_session(html_of(trials));
  expect_same_trials(trials, back.trials);
}

TEST(EmbeddedSession, ImportingAReportAddsItsTrialsToASession) {
  tt::TempDir dir;
  const auto trials = rt::h200_trials({2, 4, 5});
  const std::string report = dir.file("no-p2p.html");
  tt::write_bytes(report, html_of(trials));
  EXPECT_TRUE(tr::is_report_file(report));

  auto target = ts::SessionStore::create(dir.file("mine.tbsession"), "mine");
  target.add_trial("already here", nlohmann::json::object());
  const auto result = tr::import_report(target, report);
  ASSERT_EQ(result.trial_ids.size(), 3u);
  std::vector<ts::LoadedTrial> imported;
  for (int64_t id : result.trial_ids) imported.push_back(target.load_trial(id));
  expect_same_trials(trials, imported);
  EXPECT_EQ(imported[0].info.source, "report: no-p2p.html");
  EXPECT_EQ(target.list_trials().size(), 4u);
}

TEST(EmbeddedSession, OtherFilesAreNotReports) {
  tt::TempDir dir;
  tt::write_bytes(dir.file("page.html"), "<!DOCTYPE html><html><body>hello</body></html>");
  EXPECT_FALSE(tr::is_report_file(dir.file("page.html")));
  EXPECT_FALSE(tr::is_report_file(dir.file("missing.html")));
  EXPECT_NE(refusal("<html><body>hello</body></html>").find("carries no Tunebench session"), std::string::npos);
}

TEST(EmbeddedSession, DamagedBlocksAreRefusedWithASentence) {
  EXPECT_NE(refusal(with_block("not base64 at all!")).find("not base64"), std::string::npos);
  EXPECT_NE(refusal(with_block(tr::base64_encode("plain bytes, not zlib"))).find("damaged (zlib)"), std::string::npos);
  const std::string text = "SQLite format 3 is what this is not";
  EXPECT_NE(refusal(with_block(tr::base64_encode(deflated(text)))).find("refused"), std::string::npos);
  const std::string cut = deflated(std::string(100000, 'x'));
  EXPECT_NE(refusal(with_block(tr::base64_encode(cut.substr(0, cut.size() / 2)))).find("cut short"), std::string::npos);
  EXPECT_NE(refusal(with_block(tr::base64_encode(cut + "trailing"))).find("data after its end"), std::string::npos);
  EXPECT_NE(refusal(with_block(tr::base64_encode(cut))).find("refused"), std::string::npos);  // inflates, not a session
  // A small bomb against a small bound: refused while inflating, before the store sees it.
  EXPECT_NE(refusal(with_block(tr::base64_encode(cut)), 50000).find("larger than 50000 bytes"), std::string::npos);
  const std::string open_only = with_block("");
  EXPECT_NE(refusal(open_only.substr(0, open_only.find("</script>"))).find("cut short"), std::string::npos);
}

TEST(EmbeddedSession, AReportWithoutItsTrialsSaysSo) {
  const auto trials = rt::h200_trials({2});
  std::ostringstream out;
  tr::ReportOptions options;
  options.embed_session = false;
  tr::write_report(trials, tr::ReportFormat::Html, out, options);
  EXPECT_NE(refusal(out.str()).find("carries no Tunebench session"), std::string::npos);
}
