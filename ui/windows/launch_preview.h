// What would run: the exact processes of a trial's launch plan (core/launch) — every rank's
// command line and environment, the ssh command and the script each host runs, srun's command or
// the generated sbatch script — as text. Shown before a trial starts when it came from someone
// else's session (nothing stored in a session is executed unseen) and before a trial of the user's
// own that runs commands on other machines (SSH, SLURM). Testable without a dialog.
#pragma once

#include <optional>

#include <QDialog>
#include <QString>

#include "core/config/trial_config.h"
#include "core/launch/launch_plan.h"

class QLabel;
class QPlainTextEdit;

namespace tunebench::ui {

// The argv and the environment variables the runner sets, process by process, and the files it
// writes first (the sbatch script in full). $TMP stands for the trial's temporary folder and the
// port and nonce picked at launch are placeholders; the GUI's own environment is passed on too
// (named, not listed). `linkProbe`: the ranks measure the link (their probe arguments shown).
QString launch_preview(const config::TrialConfig& config, const QString& workerProgram, const QString& trialId,
                       const std::optional<launch::LinkProbeRange>& linkProbe = std::nullopt);

// The question a remote launch asks: "Run on gpu1, gpu2 over SSH?", "Run on 2 SLURM node(s) with
// srun?", "Submit a batch job to SLURM (2 node(s))?"; empty for the local launcher.
QString remote_launch_title(const config::TrialConfig& config);
// Its intro (HTML): which machines, and that they run exactly the text below.
QString remote_launch_intro(const config::TrialConfig& config);

class LaunchPreviewDialog : public QDialog {
  Q_OBJECT
 public:
  // A config from another session file (`origin`: its file name).
  LaunchPreviewDialog(const QString& preview, const QString& origin, QWidget* parent = nullptr);
  // Any question: `title` as the window title, `introHtml` above the text.
  LaunchPreviewDialog(const QString& preview, const QString& title, const QString& introHtml, QWidget* parent);

  QString introText() const;
  QString previewText() const;

 private:
  void build(const QString& preview, const QString& title, const QString& introHtml);
  QLabel* m_intro = nullptr;
  QPlainTextEdit* m_text = nullptr;
};

}  // namespace tunebench::ui
