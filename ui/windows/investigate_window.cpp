#include "ui/windows/investigate_window.h"

#include <QDialogButtonBox>
#include <QDoubleSpinBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QListWidget>
#include <QProgressBar>
#include <QPushButton>
#include <QSpinBox>
#include <QSplitter>
#include <QTableWidget>
#include <QVBoxLayout>

#include "core/investigate/plan_tags.h"
#include "core/store/plans.h"
#include "core/store/session_store.h"
#include "ui/windows/plan_session.h"
#include "ui/plots/effect_chart.h"

namespace tunebench::ui {
namespace {

QString pct(double ratio) { return QString::asprintf("%+.1f %%", (ratio - 1.0) * 100.0); }

}  // namespace

InvestigateWindow::InvestigateWindow(const QString& sessionPath, qint64 trialId, Launch launch, QWidget* parent)
    : QDialog(parent), m_path(sessionPath), m_trialId(trialId), m_launch(std::move(launch)) {
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
  m_cancel->setToolTip(QStringLiteral("Queue no further trial of this plan (the running one finishes); "
                                      "Start resumes it"));
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
  auto* budgetRow = new QHBoxLayout;
  budgetRow->addWidget(new QLabel(QStringLiteral("Budget:"), this));
  budgetRow->addWidget(m_maxTrials);
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

bool InvestigateWindow::prepare() {
  if (m_prepared) return true;
  try {
    auto s = open_plan_session(m_path);
    m_planId = investigate::open_investigation(s, m_trialId, {});
    m_prepared = true;
    const int finished = refresh();
    const auto plan = investigate::load_investigation(s, m_planId);
    m_status->setText(finished > 0 ? QStringLiteral("Plan %1: %2 trial(s) of it measured. Start resumes it.")
                                         .arg(m_planId)
                                         .arg(finished)
                                   : QStringLiteral("Plan %1: the baseline, %2 variant(s), the baseline again, then "
                                                    "repeats of what is within the noise. Set the budget and Start.")
                                         .arg(m_planId)
                                         .arg(plan.variants.size()));
  } catch (const std::exception& e) {
    m_error = QString::fromStdString(e.what());
    m_status->setText(m_error);
    m_start->setEnabled(false);
    return false;
  }
  return true;
}

bool InvestigateWindow::start() {
  if (m_running) return true;
  if (!prepare()) return false;
  m_error.clear();
  m_budget = budget();
  try {
    auto s = open_plan_session(m_path);
    store::set_plan_state(s, m_planId, "running");
  } catch (const std::exception& e) {
    m_error = QString::fromStdString(e.what());
    m_status->setText(m_error);
    return false;
  }
  m_running = true;
  m_cancel->setEnabled(true);
  m_start->setEnabled(false);
  for (QWidget* w : {static_cast<QWidget*>(m_maxTrials), static_cast<QWidget*>(m_maxMinutes)}) w->setEnabled(false);
  refresh();
  launchNext();
  return m_error.isEmpty();
}

void InvestigateWindow::launchWaiting() {
  if (m_running)
    m_status->setText(m_status->text() + QStringLiteral(" — waiting for your answer in the launch preview"));
}

void InvestigateWindow::launchRefused(const QString& reason) {
  if (!m_running) return;
  finish("paused");
  m_status->setText(QStringLiteral("Not started: %1. Start tries again.").arg(reason));
}

int InvestigateWindow::refresh() {
  auto s = open_plan_session(m_path);
  const auto plan = investigate::load_investigation(s, m_planId);
  const auto attribution = investigate::current_attribution(s, m_planId);
  const auto arms = investigate::finished_arms(s.list_trials(), m_planId);
  int finished = 0;
  for (const auto& [arm, list] : arms) finished += int(list.size());
  m_variants->setRowCount(int(plan.variants.size()));
  for (int i = 0; i < int(plan.variants.size()); ++i) {
    const auto& v = plan.variants[size_t(i)];
    const auto it = arms.find(v.arm);
    QString effect;
    for (const auto& f : attribution.factors)
      if (f.arm == v.arm)
        effect = f.failed ? QStringLiteral("failed") : pct(f.effect.ratio) + (f.effect.beyond_noise ? QString() : QStringLiteral(" (noise)"));
    const QStringList cells = {QString::fromStdString(v.arm), QString::fromStdString(v.title),
                               QString::fromStdString(std::string(investigate::to_string(v.category))),
                               QString::number(it == arms.end() ? 0 : int(it->second.size())), effect};
    for (int c = 0; c < cells.size(); ++c) {
      auto* item = new QTableWidgetItem(cells[c]);
      if (c == 1) item->setToolTip(QString::fromStdString(v.source + ": " + v.why));
      m_variants->setItem(i, c, item);
    }
  }
  m_skipped->clear();
  for (const auto& sk : plan.skipped)
    m_skipped->addItem(QString::fromStdString(sk.title + ": " + sk.reason));
  const int planned = int(plan.variants.size()) + m_budget.baseline_repeats;
  m_progress->setRange(0, std::max(planned, finished));
  m_progress->setValue(finished);
  m_chart->setAttribution(attribution);
  // A verdict about variants needs a measured variant: before that it would read as a result.
  m_verdict->setText(attribution.factors.empty() ? QString() : QString::fromStdString(attribution.verdict));
  return finished;
}

void InvestigateWindow::launchNext() {
  if (!m_running) return;
  std::optional<investigate::NextTrial> next;
  int finished = 0;
  try {
    auto s = open_plan_session(m_path);
    next = investigate::next_trial(s, m_planId, m_budget);
    for (const auto& [arm, list] : investigate::finished_arms(s.list_trials(), m_planId)) finished += int(list.size());
  } catch (const std::exception& e) {
    m_error = QString::fromStdString(e.what());
    m_status->setText(m_error);
    finish("paused");
    return;
  }
  if (!next) {
    finish("done");
    return;
  }
  m_awaitingAfter = finished;
  m_status->setText(QStringLiteral("Running: %1").arg(QString::fromStdString(next->why)));
  m_launch(next->request);
}

void InvestigateWindow::onTrialStored() {
  if (!m_running || m_awaitingAfter < 0) return;
  int finished = 0;
  try {
    finished = refresh();
  } catch (const std::exception& e) {
    m_status->setText(QString::fromStdString(e.what()));
    return;
  }
  if (finished <= m_awaitingAfter) return;  // another trial of the window, not ours
  m_awaitingAfter = -1;
  launchNext();
}

void InvestigateWindow::cancel() {
  if (!m_running) return;
  finish("paused");
  m_status->setText(QStringLiteral("Cancelled: no further trial is queued. Resume continues the plan."));
}

void InvestigateWindow::finish(const char* state) {
  m_running = false;
  m_awaitingAfter = -1;
  m_cancel->setEnabled(false);
  bool complete = false;  // every planned variant measured: nothing left to resume
  try {
    auto s = open_plan_session(m_path);
    const auto a = investigate::current_attribution(s, m_planId);
    complete = a.not_run.empty();
    store::set_plan_result(s, m_planId, investigate::to_json(a));
    store::set_plan_state(s, m_planId, state);
    refresh();
  } catch (const std::exception& e) {
    m_status->setText(QString::fromStdString(e.what()));
  }
  const bool done = std::string(state) == "done";
  m_start->setText(QStringLiteral("Resume"));
  m_start->setEnabled(!(done && complete));
  for (QWidget* w : {static_cast<QWidget*>(m_maxTrials), static_cast<QWidget*>(m_maxMinutes)})
    w->setEnabled(!(done && complete));
  if (done) {
    m_status->setText(complete ? QStringLiteral("Done: every planned trial is measured (plan %1).").arg(m_planId)
                               : QStringLiteral("Done within the budget (plan %1): a larger budget and Resume measure "
                                                "the rest.")
                                     .arg(m_planId));
    emit investigationFinished(m_planId);
  }
}

}  // namespace tunebench::ui
