#include "ui/windows/investigate_window.h"

#include <QDialogButtonBox>
#include <QDoubleSpinBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QListWidget>
#include <QPointer>
#include <QProgressBar>
#include <QPushButton>
#include <QSpinBox>
#include <QSplitter>
#include <QTableWidget>
#include <QVBoxLayout>

#include "core/investigate/plan_tags.h"
#include "core/store/plans.h"
#include "core/store/session_store.h"
#include "ui/plots/effect_chart.h"
#include "ui/windows/plan_session.h"

namespace tunebench::ui {
namespace {

QString pct(double ratio) { return QString::asprintf("%+.1f %%", (ratio - 1.0) * 100.0); }

}  // namespace

InvestigateWindow::InvestigateWindow(const QString& sessionPath, qint64 trialId, PlanRun::Hooks hooks,
                                     BackgroundJobs* jobs, QWidget* parent)
    : QDialog(parent),
      m_plan(jobs, this, sessionPath),
      m_run(new PlanRun(std::move(hooks), &m_plan, this)),
      m_path(sessionPath),
      m_trialId(trialId) {
  setObjectName(QStringLiteral("investigateWindow"));
  setWindowTitle(QStringLiteral("Investigate trial %1").arg(trialId));
  m_variants = new QTableWidget(0, 5, this);
  m_variants->setObjectName(QStringLiteral("investigateVariants"));
  m_variants->setHorizontalHeaderLabels({QStringLiteral("Arm"), QStringLiteral("Variant"), QStringLiteral("Factor"),
                                         QStringLiteral("Runs"), QStringLiteral("tokens/s")});
  m_variants->horizontalHeader()->setSectionResizeMode(1, QHeaderView::Stretch);
  m_variants->verticalHeader()->setVisible(false);
  m_variants->setEditTriggers(QAbstractItemView::NoEditTriggers);
  m_skipped = new QListWidget(this);
  m_skipped->setObjectName(QStringLiteral("investigateSkipped"));
  m_progress = new QProgressBar(this);
  m_status = new QLabel(this);
  m_status->setWordWrap(true);
  m_chart = new EffectChart(this);
  m_chart->setMinimumHeight(300);
  m_verdict = new QLabel(this);
  m_verdict->setObjectName(QStringLiteral("investigateVerdict"));
  m_verdict->setWordWrap(true);
  m_verdict->setTextInteractionFlags(Qt::TextSelectableByMouse);
  m_verdict->setAlignment(Qt::AlignTop | Qt::AlignLeft);
  m_verdict->setMinimumHeight(110);
  m_cancel = new QPushButton(QStringLiteral("Cancel"), this);
  m_cancel->setObjectName(QStringLiteral("investigateCancel"));
  m_cancel->setToolTip(QStringLiteral("Stop the plan's running trial and pause the plan; Resume continues it"));
  m_cancel->setEnabled(false);
  connect(m_cancel, &QPushButton::clicked, this, &InvestigateWindow::cancel);
  m_start = new QPushButton(QStringLiteral("Start"), this);
  m_start->setObjectName(QStringLiteral("investigateStart"));
  m_start->setToolTip(QStringLiteral("Run the plan: the baseline, every variant, the baseline again, then repeats of "
                                     "what is within the noise, as far as the budget goes"));
  m_start->setDefault(true);
  connect(m_start, &QPushButton::clicked, this, [this] { start(); });
  // The budget: how many trials and how many minutes of trial time at most (0: no limit).
  m_maxTrials = new QSpinBox(this);
  m_maxTrials->setObjectName(QStringLiteral("investigateBudget"));
  m_maxTrials->setRange(0, 999);
  m_maxTrials->setSpecialValueText(QStringLiteral("no limit"));
  m_maxTrials->setSuffix(QStringLiteral(" trials"));
  m_maxTrials->setToolTip(QStringLiteral("Trials of this plan to run at most (the baseline's runs count)"));
  m_maxMinutes = new QDoubleSpinBox(this);
  m_maxMinutes->setObjectName(QStringLiteral("investigateMinutes"));
  m_maxMinutes->setRange(0, 24 * 60);
  m_maxMinutes->setDecimals(0);
  m_maxMinutes->setSpecialValueText(QStringLiteral("no limit"));
  m_maxMinutes->setSuffix(QStringLiteral(" min"));
  m_maxMinutes->setToolTip(QStringLiteral("Minutes of trial time at most (start to end of the plan's trials)"));
  // Each box says what it bounds (both read "no limit" at 0, so a tooltip alone left them alike).
  auto* budgetRow = new QHBoxLayout;
  budgetRow->addWidget(new QLabel(QStringLiteral("Budget:"), this));
  auto* trialsLabel = new QLabel(QStringLiteral("&Trials at most"), this);
  trialsLabel->setBuddy(m_maxTrials);
  budgetRow->addWidget(trialsLabel);
  budgetRow->addWidget(m_maxTrials);
  auto* minutesLabel = new QLabel(QStringLiteral("&Minutes of trial time at most"), this);
  minutesLabel->setBuddy(m_maxMinutes);
  budgetRow->addWidget(minutesLabel);
  budgetRow->addWidget(m_maxMinutes);
  budgetRow->addStretch(1);
  auto* buttons = new QDialogButtonBox(QDialogButtonBox::Close, this);
  buttons->addButton(m_start, QDialogButtonBox::ActionRole);
  buttons->addButton(m_cancel, QDialogButtonBox::ActionRole);
  connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::close);

  auto* top = new QWidget(this);
  auto* topLayout = new QVBoxLayout(top);
  topLayout->setContentsMargins(0, 0, 0, 0);
  topLayout->addWidget(new QLabel(QStringLiteral("Planned variants (the diagnosis's suggestions first)"), top));
  topLayout->addWidget(m_variants, 3);
  topLayout->addWidget(new QLabel(QStringLiteral("Not run, with the reason"), top));
  topLayout->addWidget(m_skipped, 1);
  m_skipped->setMaximumHeight(90);
  auto* split = new QSplitter(Qt::Vertical, this);
  split->addWidget(top);
  split->addWidget(m_chart);
  auto* layout = new QVBoxLayout(this);
  layout->addWidget(split, 1);
  layout->addWidget(m_verdict);
  layout->addWidget(m_progress);
  layout->addWidget(m_status);
  layout->addLayout(budgetRow);
  layout->addWidget(buttons);
  resize(900, 900);

  connect(m_run, &PlanRun::statusChanged, this, [this](const QString& text) {
    m_status->setText(text);
    if (!isRunning()) setIdleControls();  // Resume at once: its first job runs after the end is stored
  });
  connect(m_run, &PlanRun::stepRead, this, [this](const investigate::PlanStep& step) {
    m_complete = step.complete;
    refreshView();
  });
  connect(m_run, &PlanRun::ended, this, &InvestigateWindow::ended);
  connect(m_run, &PlanRun::failed, this, [this](const QString& message) {
    m_error = message;
    emit failed(message);
  });
}

struct InvestigateWindow::View {
  investigate::InvestigationPlan plan;
  investigate::Attribution attribution;
  std::map<std::string, int> runs;  // finished trials per arm
  int finished = 0;
  // The unit of the effects (analysis::work_rate): the measured baseline's, else, before it ran,
  // the investigated trial's (a script counted in samples is investigated in samples/s).
  std::string unit = "tokens";
};

InvestigateWindow::View InvestigateWindow::readView(store::SessionStore& s, qint64 planId) {
  View v;
  v.plan = investigate::load_investigation(s, planId);
  v.attribution = investigate::current_attribution(s, planId);
  for (const auto& [arm, list] : investigate::finished_arms(s.list_trials(), planId)) {
    v.runs[arm] = int(list.size());
    v.finished += int(list.size());
  }
  if (v.attribution.baseline.measured_steps > 0)
    v.unit = analysis::work_rate(v.attribution.baseline).unit;
  else if (v.plan.baseline_trial > 0) {
    try {
      v.unit = analysis::work_rate(analysis::analyze(s.load_trial(v.plan.baseline_trial).log)).unit;
    } catch (const std::exception&) {  // the trial was deleted since: the plan still shows, in tokens
    }
  }
  return v;
}

void InvestigateWindow::setBudget(const investigate::Budget& budget) {
  m_budget = budget;
  m_maxTrials->setValue(budget.max_trials);
  m_maxMinutes->setValue(budget.max_minutes);
}

investigate::Budget InvestigateWindow::budget() const {
  investigate::Budget b = m_budget;
  b.max_trials = m_maxTrials->value();
  b.max_minutes = m_maxMinutes->value();
  return b;
}

bool InvestigateWindow::isRunning() const { return m_starting || m_run->isActive(); }

bool InvestigateWindow::prepare() {
  if (m_prepared || isBusy()) return true;
  m_error.clear();
  const qint64 trial = m_trialId;
  m_status->setText(QStringLiteral("Planning…"));
  m_plan.run<std::pair<qint64, View>>(
      QStringLiteral("Planning the investigation"),
      [trial](store::SessionStore& s) {
        const qint64 plan = investigate::open_investigation(s, trial, {});
        return std::make_pair(plan, readView(s, plan));
      },
      [this](std::pair<qint64, View> r) {
        m_planId = r.first;
        m_prepared = true;
        if (isRunning()) return;  // Start came first: its view is the news
        showView(r.second);
        showPlanned(r.second);
      },
      [this](const QString& message) {
        fail(message);
        m_start->setEnabled(false);
      });
  return true;
}

void InvestigateWindow::showPlanned(const View& view) {
  m_status->setText(view.finished > 0
                        ? QStringLiteral("Plan %1: %2 trial(s) of it measured. Start resumes it.")
                              .arg(m_planId)
                              .arg(view.finished)
                        : QStringLiteral("Plan %1: the baseline, %2 variant(s), the baseline again, then repeats of "
                                         "what is within the noise. Set the budget and Start.")
                              .arg(m_planId)
                              .arg(view.plan.variants.size()));
}

bool InvestigateWindow::start() {
  if (isRunning()) return false;
  m_error.clear();
  m_budget = budget();
  m_cancel->setEnabled(true);
  m_start->setEnabled(false);
  for (QWidget* w : {static_cast<QWidget*>(m_maxTrials), static_cast<QWidget*>(m_maxMinutes)}) w->setEnabled(false);
  if (m_prepared) {
    runPlan(m_planId);
    return true;
  }
  // Not prepared yet: the trial's newest plan (planned now if it has none). Jobs run in order, so
  // one still being prepared is the one found.
  m_starting = true;
  m_cancelStarting = false;
  const qint64 trial = m_trialId;
  m_status->setText(QStringLiteral("Starting…"));
  m_plan.run<qint64>(
      QStringLiteral("Starting the investigation"),
      [trial](store::SessionStore& s) { return investigate::open_investigation(s, trial, {}); },
      [this](qint64 plan) {
        m_starting = false;
        m_planId = plan;
        m_prepared = true;
        if (m_cancelStarting) {
          m_status->setText(QStringLiteral("Cancelled. Start resumes the plan."));
          setIdleControls();
          return;
        }
        runPlan(plan);
      },
      [this](const QString& message) {
        m_starting = false;
        fail(message);
      });
  return true;
}

void InvestigateWindow::runPlan(qint64 planId) {
  m_run->setPlan({planId, investigate::PlanKind::Investigate, m_budget});
  if (!m_run->start()) setIdleControls();
}

void InvestigateWindow::trialEnded(const TrialOutcome& outcome) { m_run->trialEnded(outcome); }

void InvestigateWindow::cancel() {
  if (m_starting) {
    m_cancelStarting = true;  // nothing runs yet: stopped once Start has read the plan
    return;
  }
  m_run->cancel();
}

void InvestigateWindow::showView(const View& view) {
  const auto& plan = view.plan;
  const auto& attribution = view.attribution;
  m_variants->setRowCount(int(plan.variants.size()));
  for (int i = 0; i < int(plan.variants.size()); ++i) {
    const auto& v = plan.variants[size_t(i)];
    const auto it = view.runs.find(v.arm);
    QString effect;
    for (const auto& f : attribution.factors)
      if (f.arm == v.arm)
        effect = f.failed ? QStringLiteral("failed")
                          : pct(f.effect.ratio) + (f.effect.beyond_noise ? QString() : QStringLiteral(" (noise)"));
    const QStringList cells = {QString::fromStdString(v.arm), QString::fromStdString(v.title),
                               QString::fromStdString(std::string(investigate::to_string(v.category))),
                               QString::number(it == view.runs.end() ? 0 : it->second), effect};
    for (int c = 0; c < cells.size(); ++c) {
      auto* item = new QTableWidgetItem(cells[c]);
      if (c == 1) item->setToolTip(QString::fromStdString(v.source + ": " + v.why));
      m_variants->setItem(i, c, item);
    }
  }
  m_skipped->clear();
  for (const auto& sk : plan.skipped) m_skipped->addItem(QString::fromStdString(sk.title + ": " + sk.reason));
  const int planned = int(plan.variants.size()) + m_budget.baseline_repeats;
  m_progress->setRange(0, std::max(planned, view.finished));
  m_progress->setValue(view.finished);
  m_chart->setAttribution(attribution);
  // The effect's unit: tokens/s, or samples/s for a script counted in samples (View::unit).
  const QString unit = QString::fromStdString(view.unit);
  m_variants->horizontalHeaderItem(4)->setText(QStringLiteral("%1/s").arg(unit));
  m_chart->setRateUnit(unit);
  // A verdict about variants needs a measured variant: before that it would read as a result.
  m_verdict->setText(attribution.factors.empty() ? QString() : QString::fromStdString(attribution.verdict));
}

void InvestigateWindow::refreshView() {
  const qint64 plan = m_planId;
  m_plan.run<View>(
      QStringLiteral("Reading the investigation"), [plan](store::SessionStore& s) { return readView(s, plan); },
      [this](View v) { showView(v); }, [this](const QString& message) { fail(message); });
}

void InvestigateWindow::ended(store::PlanState state) {
  refreshView();
  if (state == store::PlanState::Done) emit investigationFinished(m_planId);
}

void InvestigateWindow::setIdleControls() {
  m_cancel->setEnabled(false);
  if (m_prepared) m_start->setText(QStringLiteral("Resume"));
  // Every planned trial measured: nothing is left to resume.
  const bool finished = m_run->state() == store::PlanState::Done && m_complete;
  m_start->setEnabled(!finished);
  for (QWidget* w : {static_cast<QWidget*>(m_maxTrials), static_cast<QWidget*>(m_maxMinutes)}) w->setEnabled(!finished);
}

void InvestigateWindow::fail(const QString& message) {
  m_error = message;
  m_status->setText(message);
  if (!isRunning()) setIdleControls();
  if (!m_prepared) m_start->setEnabled(false);
  emit failed(message);
}

}  // namespace tunebench::ui
