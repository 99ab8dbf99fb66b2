// DiagnosisView: the analysis' answer in words and numbers. For each pair (baseline vs another
// trial): the headline ("ddp x2 step +300 ms over single: exposed all-reduce +200 ms (...)"), the
// step-time-vs-throughput sentence, the communication floor and "can DDP beat one GPU here?";
// then the ranked findings of each trial with their share of the step. Every suggestion has a
// button that makes the follow-up trial with analysis::apply and asks for it to be queued
// (followUpRequested): one click, no form editing.
#pragma once

#include <vector>

#include <QStringList>
#include <QWidget>

#include "core/analysis/report.h"

class QPushButton;
class QVBoxLayout;

namespace tunebench::ui {

class DiagnosisView : public QWidget {
  Q_OBJECT
 public:
  // One ranked finding as shown, with the trial its suggestions apply to.
  struct Entry {
    int trial = 0;       // index into the report's comparison trials
    int section = 0;     // 0..: the pairs first (baseline vs each), then each trial's own diagnosis
    analysis::Finding finding;
  };

  explicit DiagnosisView(QWidget* parent = nullptr);

  void setReport(const analysis::Report& report, const QStringList& trialNames);

  const std::vector<Entry>& entries() const { return m_entries; }
  // The "Queue follow-up" buttons in display order; each has properties "trial" (int),
  // "finding" (index into entries()) and "suggestion" (index into the finding's suggestions).
  QList<QPushButton*> suggestionButtons() const { return m_buttons; }
  // Plain text of everything shown (tests, and what a screen reader would say).
  QString text() const;

 signals:
  // The follow-up trial: the trial's config with the suggestion applied, already validated.
  void followUpRequested(const tunebench::config::TrialConfig& config, const QString& suggestion);
  // apply() reported problems; nothing was queued.
  void followUpRefused(const QString& message);

 private:
  void addSectionTitle(const QString& text);
  void addParagraph(const QString& html, const QString& objectName = {});
  void addFinding(int trial, int rank, const analysis::Finding& finding);
  void addSamplingNote(const analysis::TrialMetrics& m);
  void onSuggestionClicked(QPushButton* button);

  QVBoxLayout* m_layout = nullptr;
  QWidget* m_content = nullptr;
  std::vector<Entry> m_entries;
  std::vector<std::optional<config::TrialConfig>> m_configs;  // per trial
  QStringList m_names;
  QList<QPushButton*> m_buttons;
  int m_section = 0;
};

}  // namespace tunebench::ui
