// What would run: the exact worker command line and environment of every rank of a trial, as
// text. Shown before a config taken from someone else's session runs (nothing stored in a session
// is executed unseen), and testable without a dialog.
#pragma once

#include <QDialog>
#include <QString>

#include "core/config/trial_config.h"

namespace tunebench::ui {

// The argv and the environment variables the runner sets, rank by rank. $TMP stands for the
// trial's temporary folder and $PORT for the free port picked at launch; the GUI's own environment
// is passed on too (named, not listed).
QString launch_preview(const config::TrialConfig& config, const QString& workerProgram, const QString& trialId);

class LaunchPreviewDialog : public QDialog {
  Q_OBJECT
 public:
  LaunchPreviewDialog(const QString& preview, const QString& origin, QWidget* parent = nullptr);
};

}  // namespace tunebench::ui
