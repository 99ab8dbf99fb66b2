#include "ui/windows/launch_preview.h"

#include <QCoreApplication>
#include <QDialogButtonBox>
#include <QFontDatabase>
#include <QLabel>
#include <QPlainTextEdit>
#include <QProcessEnvironment>
#include <QPushButton>
#include <QRegularExpression>
#include <QVBoxLayout>

#include "ui/runner/worker_launch.h"

namespace tunebench::ui {

namespace {
QString shell_quote(const QString& s) {
  static const QRegularExpression plain(QStringLiteral("^[A-Za-z0-9_./:=+$-]+$"));
  if (plain.match(s).hasMatch()) return s;
  QString q = s;
  q.replace(QLatin1Char('\''), QStringLiteral("'\\''"));
  return QLatin1Char('\'') + q + QLatin1Char('\'');
}
}  // namespace

QString launch_preview(const config::TrialConfig& config, const QString& workerProgram, const QString& trialId) {
  const QString program = workerProgram.isEmpty() ? find_worker_program(QCoreApplication::applicationDirPath()) : workerProgram;
  QStringList argv{program};
  argv << worker_arguments(QStringLiteral("$TMP/trial.json"), QStringLiteral("unix:$TMP/events.sock"), trialId);
  QStringList quoted;
  for (const QString& a : argv) quoted << shell_quote(a);
  QString text = QStringLiteral("Program and arguments (every rank):\n  %1\n").arg(quoted.join(QLatin1Char(' ')));
  text += QStringLiteral("\n$TMP/trial.json holds this configuration:\n%1\n")
              .arg(QString::fromStdString(config::to_json(config).dump(2)));
  for (int rank = 0; rank < config.world_size; ++rank) {
    // An empty base shows exactly what the runner adds; $PORT is picked at launch.
    const QProcessEnvironment env = worker_environment(QProcessEnvironment(), config, rank, 0, trialId);
    QStringList keys = env.keys();
    keys.sort();
    text += QStringLiteral("\nEnvironment of rank %1 (set on top of Tunebench's own environment):\n").arg(rank);
    for (const QString& k : keys) {
      const QString v = k == QLatin1String("MASTER_PORT") ? QStringLiteral("$PORT") : env.value(k);
      text += QStringLiteral("  %1=%2\n").arg(k, shell_quote(v));
    }
  }
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
