#include "ui/windows/diagnosis_view.h"

#include "ui/models/status_colors.h"

#include <QFrame>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QScrollArea>
#include <QTextDocument>
#include <QVBoxLayout>

#include "core/analysis/diagnosis_text.h"
#include "core/analysis/format.h"

namespace tunebench::ui {

namespace {
QString q(const std::string& s) { return QString::fromStdString(s); }
QString esc(const std::string& s) { return QString::fromStdString(s).toHtmlEscaped(); }
}  // namespace

DiagnosisView::DiagnosisView(QWidget* parent) : QWidget(parent) {
  setObjectName(QStringLiteral("diagnosisView"));
  auto* outer = new QVBoxLayout(this);
  outer->setContentsMargins(0, 0, 0, 0);
  auto* scroll = new QScrollArea;
  scroll->setWidgetResizable(true);
  scroll->setFrameShape(QFrame::NoFrame);
  outer->addWidget(scroll);
  m_content = new QWidget;
  m_layout = new QVBoxLayout(m_content);
  m_layout->setContentsMargins(10, 8, 10, 8);
  m_layout->setSpacing(6);
  scroll->setWidget(m_content);
}

void DiagnosisView::addSectionTitle(const QString& text) {
  auto* label = new QLabel(QStringLiteral("<h3 style='margin:6px 0 0 0'>%1</h3>").arg(text.toHtmlEscaped()));
  m_layout->addWidget(label);
}

void DiagnosisView::addParagraph(const QString& html, const QString& objectName) {
  auto* label = new QLabel(html);
  label->setTextFormat(Qt::RichText);  // escaped text without tags would otherwise show "&gt;"
  label->setWordWrap(true);
  label->setTextInteractionFlags(Qt::TextSelectableByMouse);
  if (!objectName.isEmpty()) label->setObjectName(objectName);
  m_layout->addWidget(label);
}

void DiagnosisView::setReport(const analysis::Report& report, const QStringList& trialNames) {
  // Rebuild from scratch: a report is small and this runs once per comparison.
  while (QLayoutItem* item = m_layout->takeAt(0)) {
    delete item->widget();
    delete item;
  }
  m_entries.clear();
  m_buttons.clear();
  m_names = trialNames;
  m_configs.clear();
  for (const auto& m : report.comparison.trials) m_configs.push_back(m.config);
  m_section = 0;
  const auto& trials = report.comparison.trials;
  const size_t base = report.comparison.baseline;

  // The pairs first: that is the forum question ("why is B slower than A?").
  size_t pairIndex = 0;
  for (size_t t = 0; t < trials.size(); ++t) {
    if (t == base || pairIndex >= report.pairs.size()) continue;
    const analysis::PairDiagnosis& p = report.pairs[pairIndex++];
    addSectionTitle(
        QStringLiteral("Why %1 differs from %2").arg(trialNames.value(int(t)), trialNames.value(int(base))));
    addParagraph(QStringLiteral("<b>%1</b>").arg(esc(p.headline)), QStringLiteral("pairHeadline"));
    addParagraph(esc(p.throughput), QStringLiteral("pairThroughput"));
    if (trials[t].comm_floor_ms)
      addParagraph(
          QStringLiteral("<b>Communication floor</b>: %1 per step — the gradient bytes on the bus at the measured bus "
                         "bandwidth with nothing overlapped.")
              .arg(q(analysis::format_ms(*trials[t].comm_floor_ms))),
          QStringLiteral("commFloor"));
    if (p.feasibility) {
      const auto& f = *p.feasibility;
      const QString answer = f.can_beat_single
                                 ? QStringLiteral("<span style='color:%1'><b>Yes</b></span>").arg(good_color().name())
                                 : QStringLiteral("<span style='color:%1'><b>No</b></span>").arg(bad_color().name());
      // GPUs, or CPU ranks (Gloo processes): named as the analysis names them.
      const QString many = q(analysis::device_noun(trials[t], true));
      const QString one = q(analysis::device_noun(trials[t]));
      addParagraph(
          QStringLiteral("<b>Can %1 %2 beat one %3 on this interconnect?</b> %4 — %5 Speed-up over one %3: "
                         "%6 with nothing overlapped, %7 at best, %8 measured.")
              .arg(f.world_size)
              .arg(many, one, answer, esc(f.statement), q(analysis::format_ratio(f.speedup_no_overlap)),
                   q(analysis::format_ratio(f.speedup_full_overlap)), q(analysis::format_ratio(f.speedup_measured))),
          QStringLiteral("canBeatSingle"));
    }
    addSamplingNote(trials[t]);
    for (size_t i = 0; i < p.findings.size(); ++i) addFinding(int(t), int(i) + 1, p.findings[i]);
    ++m_section;
  }
  // Then each trial on its own (the baseline's findings are not in any pair).
  for (size_t t = 0; t < report.diagnoses.size(); ++t) {
    if (t != base && !report.pairs.empty()) continue;  // already shown above as part of its pair
    const analysis::Diagnosis& d = report.diagnoses[t];
    addSectionTitle(QStringLiteral("Diagnosis of %1").arg(trialNames.value(int(t))));
    if (t < trials.size()) addSamplingNote(trials[t]);
    for (size_t i = 0; i < d.findings.size(); ++i) addFinding(int(t), int(i) + 1, d.findings[i]);
    if (d.findings.empty()) addParagraph(esc(d.verdict));
    ++m_section;
  }
  m_layout->addStretch(1);
}

// A trial whose kernel-sampled steps do not represent its run (trial_metrics.h, SampleUse) says so
// above its findings, in the analysis's words: they rest on the unsampled timeline.
void DiagnosisView::addSamplingNote(const analysis::TrialMetrics& m) {
  if (m.sample_use != analysis::SampleUse::NotRepresentative) return;
  for (const auto& n : m.notes)
    if (n.rfind("kernel samples not representative", 0) == 0) addParagraph(esc(n), QStringLiteral("samplingNote"));
}

void DiagnosisView::addFinding(int trial, int rank, const analysis::Finding& finding) {
  m_entries.push_back({trial, m_section, finding});
  const int entry = int(m_entries.size()) - 1;
  auto* frame = new QFrame;
  frame->setObjectName(QStringLiteral("finding"));
  frame->setFrameShape(QFrame::StyledPanel);
  auto* box = new QVBoxLayout(frame);
  box->setContentsMargins(8, 6, 8, 6);
  box->setSpacing(3);
  const QString impact = finding.blocking        ? QStringLiteral("blocking")
                         : finding.impact_ms > 0 ? QStringLiteral("%1, %2 of the step")
                                                       .arg(q(analysis::format_ms(finding.impact_ms)),
                                                            q(analysis::format_pct(finding.share)))
                                                 : QStringLiteral("context");
  auto* title = new QLabel(QStringLiteral("<b>%1. [%2]</b> %3 <span style='color:gray'>(%4)</span>")
                               .arg(rank)
                               .arg(q(std::string(analysis::to_string(finding.kind))), esc(finding.title), impact));
  title->setTextFormat(Qt::RichText);
  title->setWordWrap(true);
  title->setTextInteractionFlags(Qt::TextSelectableByMouse);
  box->addWidget(title);
  if (!finding.detail.empty()) {
    auto* detail = new QLabel(esc(finding.detail));
    detail->setTextFormat(Qt::RichText);
    detail->setWordWrap(true);
    detail->setTextInteractionFlags(Qt::TextSelectableByMouse);
    box->addWidget(detail);
  }
  const bool haveConfig = size_t(trial) < m_configs.size() && m_configs[size_t(trial)].has_value();
  for (size_t s = 0; s < finding.suggestions.size(); ++s) {
    const analysis::Suggestion& sug = finding.suggestions[s];
    auto* row = new QHBoxLayout;
    auto* button = new QPushButton(QStringLiteral("Queue: %1").arg(q(sug.title)));
    button->setObjectName(QStringLiteral("suggestionButton"));
    button->setProperty("trial", trial);
    button->setProperty("finding", entry);
    button->setProperty("suggestion", int(s));
    button->setEnabled(haveConfig);
    button->setToolTip(haveConfig ? QStringLiteral("Queue a copy of %1 with %2").arg(m_names.value(trial), q(sug.title))
                                  : QStringLiteral("This trial's log carries no configuration to start from"));
    connect(button, &QPushButton::clicked, this, [this, button] { onSuggestionClicked(button); });
    auto* why = new QLabel(esc(sug.why));
    why->setTextFormat(Qt::RichText);
    why->setWordWrap(true);
    row->addWidget(button, 0, Qt::AlignTop);
    row->addWidget(why, 1);
    box->addLayout(row);
    m_buttons << button;
  }
  m_layout->addWidget(frame);
}

void DiagnosisView::onSuggestionClicked(QPushButton* button) {
  const int trial = button->property("trial").toInt();
  const auto& entry = m_entries.at(size_t(button->property("finding").toInt()));
  const analysis::Suggestion& sug = entry.finding.suggestions.at(size_t(button->property("suggestion").toInt()));
  if (size_t(trial) >= m_configs.size() || !m_configs[size_t(trial)]) return;
  std::vector<config::Problem> problems;
  const config::TrialConfig next = analysis::apply(sug, *m_configs[size_t(trial)], &problems);
  if (!problems.empty()) {
    emit followUpRefused(QStringLiteral("%1 was not queued: %2").arg(q(sug.title), q(config::describe(problems))));
    return;
  }
  emit followUpRequested(next, q(sug.title));
}

QString DiagnosisView::text() const {
  QStringList parts;
  for (QLabel* label : m_content->findChildren<QLabel*>()) {
    QTextDocument doc;
    doc.setHtml(label->text());
    parts << doc.toPlainText();
  }
  return parts.join(QLatin1Char('\n'));
}

}  // namespace tunebench::ui
