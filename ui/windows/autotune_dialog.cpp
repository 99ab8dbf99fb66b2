#include "ui/windows/autotune_dialog.h"

#include <fstream>

#include <QCheckBox>
#include <QDialogButtonBox>
#include <QDoubleSpinBox>
#include <QFileDialog>
#include <QFontDatabase>
#include <QFormLayout>
#include <QLabel>
#include <QPlainTextEdit>
#include <QPointer>
#include <QPushButton>
#include <QSpinBox>
#include <QVBoxLayout>

#include "core/investigate/plan_tags.h"
#include "core/investigate/planner.h"
#include "core/store/plans.h"
#include "core/store/session_store.h"
#include "ui/windows/plan_session.h"

namespace tunebench::ui {
AutotuneDialog::AutotuneDialog(const config::TrialConfig& base, const QString& sessionPath, PlanRun::Hooks hooks,
                               BackgroundJobs* jobs, QWidget* parent)
    : QDialog(parent),
      m_plan(jobs, this, sessionPath),
      m_run(new PlanRun(std::move(hooks), &m_plan, this)),
      m_base(base),
      m_path(sessionPath) {
  setObjectName(QStringLiteral("autotuneDialog"));
  setWindowTitle(QStringLiteral("Find the fastest configuration"));
  m_budget = new QDoubleSpinBox(this);
  m_budget->setRange(0, 24 * 60);
  m_budget->setValue(10);
  m_budget->setSuffix(QStringLiteral(" min"));
  m_budget->setSpecialValueText(QStringLiteral("no limit"));
  m_budget->setToolTip(
      QStringLiteral("Minutes of trial time (0: until the search ends); the finalists' long trials "
                     "are kept within it"));
  m_short = new QSpinBox(this);
  m_short->setRange(3, 10000);
  m_short->setValue(8);
  m_long = new QSpinBox(this);
  m_long->setRange(3, 10000);
  m_long->setValue(20);
  // The noun of what the trials run on (config::device_noun): "per CPU rank" for a CPU base.
  const bool cuda = investigate::runs_on_cuda(m_base, m_base.device == config::Device::Cpu ? "cpu" : "cuda");
  m_perGpu = new QCheckBox(
      QStringLiteral("tokens/s per %1 (else in total)").arg(QString::fromStdString(config::device_noun(cuda))), this);
  // The second objective (issue 41): of the finalists within X % of the fastest, the one with the
  // most tokens per joule. Energy comes from NVML's counter, so a CPU search has none.
  m_cheapest = new QDoubleSpinBox(this);
  m_cheapest->setObjectName(QStringLiteral("cheapestWithin"));
  m_cheapest->setRange(0, 99);
  m_cheapest->setDecimals(0);
  m_cheapest->setSuffix(QStringLiteral(" % of the fastest"));
  m_cheapest->setSpecialValueText(QStringLiteral("off: the fastest"));
  m_cheapest->setEnabled(cuda);
  m_cheapest->setToolTip(cuda ? QStringLiteral("Of the finalists within this many percent of the fastest, pick the one "
                                               "with the most tokens per joule (NVML's energy counter); off: the fastest")
                              : QStringLiteral("Needs NVML's energy counter: trials on the CPU measure no energy"));
  auto* form = new QFormLayout;
  form->addRow(QStringLiteral("Budget"), m_budget);
  form->addRow(QStringLiteral("Steps of the first trials"), m_short);
  form->addRow(QStringLiteral("Steps of the finalists"), m_long);
  form->addRow(QStringLiteral("Objective"), m_perGpu);
  form->addRow(QStringLiteral("Cheapest in energy within"), m_cheapest);
  m_status = new QLabel(this);
  m_status->setWordWrap(true);
  m_report = new QPlainTextEdit(this);
  m_report->setReadOnly(true);
  m_report->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
  m_report->setObjectName(QStringLiteral("autotuneReport"));
  m_start = new QPushButton(QStringLiteral("Start"), this);
  m_cancel = new QPushButton(QStringLiteral("Cancel"), this);
  m_cancel->setToolTip(QStringLiteral("Stop the search's running trial; the report counts what ran, and Start resumes"));
  m_cancel->setEnabled(false);
  m_save = new QPushButton(QStringLiteral("Save best…"), this);
  m_save->setEnabled(false);
  connect(m_start, &QPushButton::clicked, this, &AutotuneDialog::start);
  connect(m_cancel, &QPushButton::clicked, this, &AutotuneDialog::cancel);
  connect(m_save, &QPushButton::clicked, this, [this] {
    const QString path = QFileDialog::getSaveFileName(this, QStringLiteral("Save the best config"),
                                                      QStringLiteral("best.json"), QStringLiteral("JSON (*.json)"));
    if (!path.isEmpty()) saveBest(path);
  });
  auto* buttons = new QDialogButtonBox(QDialogButtonBox::Close, this);
  for (auto* b : {m_start, m_cancel, m_save}) buttons->addButton(b, QDialogButtonBox::ActionRole);
  connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::close);
  auto* layout = new QVBoxLayout(this);
  layout->addWidget(new QLabel(QStringLiteral("Searches strategy/ZeRO stage, micro-batch, accumulation, checkpointing, "
                                              "buckets, compression, compile, AMP and loader threads around: %1")
                                   .arg(QString::fromStdString(base.name)),
                               this));
  layout->addLayout(form);
  layout->addWidget(m_report, 1);
  layout->addWidget(m_status);
  layout->addWidget(buttons);
  resize(820, 640);

  // The plan before Start: the space, how long its trials run and the budget (issue 44).
  auto showPlan = [this] {
    if (m_shown) return;  // a search's report is showing
    const investigate::TuneSpec s = spec();
    QString text = QStringLiteral("Before Start: the search around %1\n\n").arg(QString::fromStdString(m_base.name));
    for (const auto& axis : s.space.axes) {
      QStringList values;
      for (const auto& v : axis.values) values << QString::fromStdString(v.label);
      text += QStringLiteral("  %1: %2\n").arg(QString::fromStdString(axis.name), values.join(QStringLiteral(", ")));
    }
    text += QStringLiteral("\n%1 points in the grid. The base and the points predicted fastest run %2 steps first; a "
                           "coordinate search from the best of them, then the best few again at %3 steps. ")
                .arg(s.space.grid_size())
                .arg(s.options.short_steps)
                .arg(s.options.long_steps);
    text += s.options.budget_cost > 0 ? QStringLiteral("At most %1 minutes of trial time.").arg(s.options.budget_cost / 60.0)
                                      : QStringLiteral("No time limit: until the search ends.");
    if (s.options.cheapest_within > 0)
      text += QStringLiteral(" The best is the finalist with the most tokens per joule within %1 % of the fastest.")
                  .arg(s.options.cheapest_within * 100, 0, 'f', 0);
    text += QStringLiteral(" Points that validation refuses are skipped, not run.");
    m_report->setPlainText(text);
  };
  showPlan();
  for (QAbstractSpinBox* box : {static_cast<QAbstractSpinBox*>(m_budget), static_cast<QAbstractSpinBox*>(m_short),
                                static_cast<QAbstractSpinBox*>(m_long), static_cast<QAbstractSpinBox*>(m_cheapest)})
    connect(box, &QAbstractSpinBox::editingFinished, this, showPlan);
  connect(m_perGpu, &QCheckBox::toggled, this, showPlan);
  connect(m_cheapest, &QDoubleSpinBox::valueChanged, this, showPlan);

  connect(m_run, &PlanRun::statusChanged, this, [this](const QString& text) {
    m_status->setText(text);
    m_cancel->setEnabled(isRunning());
    m_start->setEnabled(!isRunning() && !isBusy());
  });
  connect(m_run, &PlanRun::stepRead, this, [this] { refreshReport(); });
  connect(m_run, &PlanRun::ended, this, [this](store::PlanState state) {
    refreshReport();
    m_start->setEnabled(!isRunning());
    if (state == store::PlanState::Done) emit searchFinished(m_planId);
  });
  connect(m_run, &PlanRun::failed, this, [this](const QString& message) {
    m_error = message;
    emit failed(message);
  });
}

investigate::TuneSpec AutotuneDialog::spec() const {
  investigate::TuneSpec s;
  s.base = m_base;
  s.cuda = investigate::runs_on_cuda(m_base, m_base.device == config::Device::Cpu ? "cpu" : "cuda");
  s.space = investigate::default_space(m_base, s.cuda);
  s.per_gpu = m_perGpu->isChecked();
  s.options.short_steps = m_short->value();
  s.options.long_steps = m_long->value();
  s.options.warmup = std::min<int64_t>(m_base.warmup, m_short->value() - 2);
  s.options.budget_cost = m_budget->value() * 60.0;
  s.options.cheapest_within = m_cheapest->isEnabled() ? m_cheapest->value() / 100.0 : 0.0;
  if (s.cuda) s.device_memory_bytes = m_deviceMemory;
  return s;
}

void AutotuneDialog::setBudgetMinutes(double minutes) { m_budget->setValue(minutes); }
void AutotuneDialog::setSteps(int shortSteps, int longSteps) {
  m_short->setValue(shortSteps);
  m_long->setValue(longSteps);
}
void AutotuneDialog::setPerGpu(bool perGpu) { m_perGpu->setChecked(perGpu); }
void AutotuneDialog::setCheapestWithin(double percent) { m_cheapest->setValue(percent); }

bool AutotuneDialog::start() {
  if (isBusy() || isRunning()) return false;
  m_error.clear();
  m_start->setEnabled(false);
  m_status->setText(QStringLiteral("Scoring the search space…"));
  const investigate::TuneSpec tune = spec();
  m_plan.run<std::pair<qint64, investigate::TuneReport>>(
      QStringLiteral("Opening the search"),
      [tune](store::SessionStore& s) {
        const qint64 plan = investigate::open_tune(s, tune);
        return std::make_pair(plan, investigate::tune_report(s, plan));
      },
      [this](std::pair<qint64, investigate::TuneReport> r) {
        m_planId = r.first;
        showReport(r.second);
        m_run->setPlan({m_planId, investigate::PlanKind::Tune, {}});
        m_cancel->setEnabled(m_run->start());
      },
      [this](const QString& message) {
        fail(message);
      });
  return true;
}

void AutotuneDialog::trialEnded(const TrialOutcome& outcome) { m_run->trialEnded(outcome); }

void AutotuneDialog::cancel() { m_run->cancel(); }

void AutotuneDialog::refreshReport() {
  const qint64 plan = m_planId;
  m_plan.run<investigate::TuneReport>(
      QStringLiteral("Reading the search"), [plan](store::SessionStore& s) { return investigate::tune_report(s, plan); },
      [this](investigate::TuneReport report) { showReport(report); }, [this](const QString& message) { fail(message); });
}

void AutotuneDialog::fail(const QString& message) {
  m_error = message;
  m_status->setText(message);
  if (!isRunning()) {
    m_cancel->setEnabled(false);
    m_start->setEnabled(true);
  }
  emit failed(message);
}

void AutotuneDialog::showReport(const investigate::TuneReport& report) {
  m_shown = report;
  m_report->setPlainText(QString::fromStdString(investigate::render(report)));
  m_save->setEnabled(report.result.best.has_value());
}

QString AutotuneDialog::reportText() const { return m_report->toPlainText(); }

bool AutotuneDialog::saveBest(const QString& path) {
  if (!m_shown || !m_shown->result.best) return false;
  try {
    const auto& report = *m_shown;
    auto best = investigate::config_at(report.spec.base, report.spec.space, report.result.best->point,
                                       report.spec.options.long_steps, report.spec.options.warmup);
    best.name = "autotuned: " + investigate::point_label(report.spec.space, report.result.best->point);
    std::ofstream out(path.toStdString());
    out << config::to_json(best).dump(2) << "\n";
    return bool(out);
  } catch (const std::exception& e) {
    m_status->setText(QString::fromStdString(e.what()));
    return false;
  }
}

}  // namespace tunebench::ui
