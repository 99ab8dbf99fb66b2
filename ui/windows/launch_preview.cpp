#include "ui/windows/launch_preview.h"

#include <cstdlib>

#include "core/launch/worker_program.h"

#include <QCoreApplication>
#include <QDialogButtonBox>
#include <QDir>
#include <QFontDatabase>
#include <QHostInfo>
#include <QLabel>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QStringList>
#include <QVBoxLayout>

#include "ui/runner/worker_launch.h"

namespace tunebench::ui {

namespace {

QStringList ssh_host_names(const config::TrialConfig& c) {
  QStringList hosts;
  for (const auto& h : c.ssh_hosts) hosts << QString::fromStdString(h.host);
  return hosts;
}

}  // namespace

QString launch_preview(const config::TrialConfig& config, const QString& workerProgram, const QString& trialId,
                       const std::optional<launch::LinkProbeRange>& linkProbe) {
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
  ctx.link_probe = linkProbe;
  // A script: the interpreter and tunebench_probe's folder as the launch will take them: the
  // interpreter named, else the one the form's search found (the launch asks the same search),
  // else a placeholder while it still looks.
  ctx.python = config.python;
  if (ctx.python.empty()) {
    const auto found = launch::known_python();
    ctx.python = !found ? std::string("<the first python3 that imports torch, found at launch>")
                 : found->path.empty() ? std::string("<no Python with PyTorch found>")
                                       : found->path;
  }
  ctx.probe_path = launch::find_probe(QCoreApplication::applicationDirPath().toStdString());
  if (ctx.probe_path.empty()) ctx.probe_path = "<tunebench_probe not found>";
  if (const char* pp = std::getenv("PYTHONPATH")) ctx.pythonpath = pp;
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
  if (linkProbe)
    text += QStringLiteral("The ranks measure the link (all-reduce from %1 to %2 MiB) instead of training.\n")
                .arg(linkProbe->min_mb)
                .arg(linkProbe->max_mb);
  for (const auto& [path, content] : plan.files) {
    text += QStringLiteral("\nWrites %1 (%2 bytes)").arg(QString::fromStdString(path)).arg(content.size());
    // The batch script is what SLURM runs: shown whole. The config file is the JSON at the end.
    if (path.size() > 7 && path.compare(path.size() - 7, 7, ".sbatch") == 0)
      text += QStringLiteral(":\n%1").arg(QString::fromStdString(content));
  }
  for (const auto& p : plan.processes) {
    const QString label = QString::fromStdString(p.label()), where = QString::fromStdString(p.where);
    text += label.contains(where) ? QStringLiteral("\nEnvironment of %1:\n").arg(label)
                                  : QStringLiteral("\nEnvironment of %1 (%2):\n").arg(label, where);
    for (const auto& [k, v] : p.env)
      text += QStringLiteral("  %1=%2\n").arg(QString::fromStdString(k), QString::fromStdString(launch::shell_quote(v)));
    if (p.kind == launch::LaunchProcess::Kind::SshNode && !p.argv.empty()) {
      // The last argument is `sh -c SCRIPT` as one word: shown as the script itself, readable.
      const std::vector<std::string> head(p.argv.begin(), p.argv.end() - 1);
      text += QStringLiteral("Command:\n  %1 'sh -c SCRIPT'\nwhere SCRIPT, shell-quoted, is the script it runs on "
                             "%2:\n%3")
                  .arg(QString::fromStdString(launch::shell_join(head)), where,
                       QString::fromStdString(launch::ssh_node_script(config, ctx, p.node)));
    } else {
      text += QStringLiteral("Command:\n  %1\n").arg(QString::fromStdString(launch::shell_join(p.argv)));
    }
  }
  text += QStringLiteral("\n$TMP/trial.json holds this configuration:\n%1\n")
              .arg(QString::fromStdString(config::to_json(config).dump(2)));
  return text;
}

QString remote_launch_title(const config::TrialConfig& c) {
  switch (c.launcher) {
    case config::Launcher::Local:
      return {};
    case config::Launcher::Ssh:
      return QStringLiteral("Run on %1 over SSH?").arg(ssh_host_names(c).join(QStringLiteral(", ")));
    case config::Launcher::Slurm: {
      QString where = QStringLiteral("%1 SLURM node(s)").arg(c.slurm_nodes);
      if (!c.slurm_partition.empty()) where += QStringLiteral(" of partition %1").arg(QString::fromStdString(c.slurm_partition));
      return c.slurm_mode == config::SlurmMode::Srun ? QStringLiteral("Run on %1 with srun?").arg(where)
                                                     : QStringLiteral("Submit a batch job to %1?").arg(where);
    }
  }
  return {};
}

QString remote_launch_intro(const config::TrialConfig& c) {
  if (c.launcher == config::Launcher::Ssh)
    return QStringLiteral("This trial runs commands on other machines: <b>%1</b>, through <code>%2</code> with your "
                          "keys. Tunebench will run exactly this:")
        .arg(ssh_host_names(c).join(QStringLiteral(", ")).toHtmlEscaped(),
             QString::fromStdString(c.ssh_command).toHtmlEscaped());
  if (c.launcher == config::Launcher::Slurm)
    return QStringLiteral("This trial runs commands on a SLURM cluster's nodes (%1 node(s), %2). Tunebench will run "
                          "exactly this:")
        .arg(c.slurm_nodes)
        .arg(c.slurm_mode == config::SlurmMode::Srun ? QStringLiteral("srun inside your allocation")
                                                     : QStringLiteral("a generated batch script, sbatch"));
  return {};
}

LaunchPreviewDialog::LaunchPreviewDialog(const QString& preview, const QString& origin, QWidget* parent)
    : QDialog(parent) {
  build(preview, QStringLiteral("Run a trial from another session?"),
        QStringLiteral("This trial's configuration comes from <b>%1</b>, a session file that may come from someone "
                       "else. Tunebench will run exactly this:")
            .arg(origin.toHtmlEscaped()));
}

LaunchPreviewDialog::LaunchPreviewDialog(const QString& preview, const QString& title, const QString& introHtml,
                                         QWidget* parent)
    : QDialog(parent) {
  build(preview, title, introHtml);
}

void LaunchPreviewDialog::build(const QString& preview, const QString& title, const QString& introHtml) {
  setObjectName(QStringLiteral("launchPreviewDialog"));
  setWindowTitle(title);
  auto* layout = new QVBoxLayout(this);
  m_intro = new QLabel(introHtml);
  m_intro->setObjectName(QStringLiteral("launchPreviewIntro"));
  m_intro->setWordWrap(true);
  layout->addWidget(m_intro);
  m_text = new QPlainTextEdit(preview);
  m_text->setObjectName(QStringLiteral("launchPreviewText"));
  m_text->setReadOnly(true);
  m_text->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
  m_text->setMinimumSize(720, 420);
  layout->addWidget(m_text);
  auto* buttons = new QDialogButtonBox(QDialogButtonBox::Cancel);
  buttons->addButton(QStringLiteral("Run it"), QDialogButtonBox::AcceptRole);
  buttons->button(QDialogButtonBox::Cancel)->setDefault(true);  // running must be a deliberate choice
  connect(buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
  connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
  layout->addWidget(buttons);
}

QString LaunchPreviewDialog::introText() const { return m_intro->text(); }

QString LaunchPreviewDialog::previewText() const { return m_text->toPlainText(); }

}  // namespace tunebench::ui
