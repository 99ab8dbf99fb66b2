#include "ui/windows/launch_preview.h"

#include <QCoreApplication>
#include <QDir>
#include <QHostInfo>
#include <QDialogButtonBox>
#include <QFontDatabase>
#include <QLabel>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QVBoxLayout>

#include "core/launch/launch_plan.h"
#include "ui/runner/worker_launch.h"

namespace tunebench::ui {

QString launch_preview(const config::TrialConfig& config, const QString& workerProgram, const QString& trialId) {
  // The runner's own plan (core/launch), with placeholders for what is picked at launch.
  launch::LaunchContext ctx;
  ctx.trial_id = trialId.toStdString();
  ctx.worker = (workerProgram.isEmpty() ? find_worker_program(QCoreApplication::applicationDirPath()) : workerProgram)
                   .toStdString();
  ctx.config_path = "$TMP/trial.json";
  ctx.events_socket = "$TMP/events.sock";
  ctx.master_port = 0;
  ctx.nonce = "RANDOM";
  ctx.home = QDir::homePath().toStdString();
  ctx.tcp_events = (config.event_host.empty() ? QHostInfo::localHostName().toStdString() : config.event_host) + ":PORT";
  ctx.token = "<token>";
  launch::LaunchPlan plan;
  try {
    plan = launch::plan_launch(config, ctx);
  } catch (const std::exception& e) {
    return QStringLiteral("This configuration cannot be launched: %1\n").arg(QString::fromUtf8(e.what()));
  }
  QString text = QStringLiteral("Where: %1. Every process gets Tunebench's own environment plus the variables "
                                "shown; MASTER_PORT (0 here) and RANDOM are picked at launch, $TMP is the trial's "
                                "temporary folder.\n")
                     .arg(QString::fromStdString(std::string(config::to_string(config.launcher))));
  for (const auto& [path, content] : plan.files)
    text += QStringLiteral("\nWrites %1 (%2 bytes)").arg(QString::fromStdString(path)).arg(content.size());
  for (const auto& p : plan.processes) {
    text += QStringLiteral("\nEnvironment of %1 (%2):\n")
                .arg(QString::fromStdString(p.label()), QString::fromStdString(p.where));
    for (const auto& [k, v] : p.env)
      text += QStringLiteral("  %1=%2\n").arg(QString::fromStdString(k), QString::fromStdString(launch::shell_quote(v)));
    text += QStringLiteral("Command:\n  %1\n").arg(QString::fromStdString(launch::shell_join(p.argv)));
  }
  text += QStringLiteral("\n$TMP/trial.json holds this configuration:\n%1\n")
              .arg(QString::fromStdString(config::to_json(config).dump(2)));
  return text;
}

LaunchPreviewDialog::LaunchPreviewDialog(const QString& preview, const QString& origin, QWidget* parent) : QDialog(parent) {
  setObjectName(QStringLiteral("launchPreviewDialog"));
  setWindowTitle(QStringLiteral("Run a trial from another session?"));
  auto* layout = new QVBoxLayout(this);
  auto* intro = new QLabel(QStringLiteral("This trial's configuration comes from <b>%1</b>, a session file that may "
                                          "come from someone else. Tunebench will run exactly this:")
                               .arg(origin.toHtmlEscaped()));
  intro->setWordWrap(true);
  layout->addWidget(intro);
  auto* text = new QPlainTextEdit(preview);
  text->setObjectName(QStringLiteral("launchPreviewText"));
  text->setReadOnly(true);
  text->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
  text->setMinimumSize(720, 420);
  layout->addWidget(text);
  auto* buttons = new QDialogButtonBox(QDialogButtonBox::Cancel);
  buttons->addButton(QStringLiteral("Run it"), QDialogButtonBox::AcceptRole);
  buttons->button(QDialogButtonBox::Cancel)->setDefault(true);  // running must be a deliberate choice
  connect(buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
  connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
  layout->addWidget(buttons);
}

}  // namespace tunebench::ui
