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

InvestigateWindow::InvestigateWindow(const QString& sessionPath, qint64 trialId, Launch launch, BackgroundJobs* jobs,
                                     QWidget* parent)
    : QDialog(parent),
      m_plan(jobs, this, sessionPath),
      m_path(sessionPath),
      m_trialId(trialId),
      m_launch(std::move(launch)) {
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

struct InvestigateWindow::View {
  investigate::InvestigationPlan plan;
  investigate::Attribution attribution;
  std::map<std::string, int> runs;  // finished trials per arm
  int finished = 0;
  std::optional<investigate::NextTrial> next;  // read when asked for
};

InvestigateWindow::View InvestigateWindow::readView(store::SessionStore& s, qint64 planId,
                                                    const investigate::Budget& budget, bool withNext) {
  View v;
  v.plan = investigate::load_investigation(s, planId);
  v.attribution = investigate::current_attribution(s, planId);
  for (const auto& [arm, list] : investigate::finished_arms(s.list_trials(), planId)) {
    v.runs[arm] = int(list.size());
    v.finished += int(list.size());
  }
  if (withNext) v.next = investigate::next_trial(s, planId, budget);
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

bool InvestigateWindow::prepare() {
  if (m_prepared || isBusy()) return true;
  m_error.clear();
  const qint64 trial = m_trialId;
  const investigate::Budget budget = this->budget();
  m_status->setText(QStringLiteral("Planning…"));
  m_plan.run<std::pair<qint64, View>>(
      QStringLiteral("Planning the investigation"),
      [trial, budget](store::SessionStore& s) {
        const qint64 plan = investigate::open_investigation(s, trial, {});
        return std::make_pair(plan, readView(s, plan, budget, false));
      },
      [this](std::pair<qint64, View> r) {
        m_planId = r.first;
        m_prepared = true;
        if (m_running) return;  // Start came first: its view is the news
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
  if (m_running || m_starting) return false;
  m_error.clear();
  m_budget = budget();
  m_starting = true;
  m_cancelStarting = false;
  m_cancel->setEnabled(true);
  m_start->setEnabled(false);
  for (QWidget* w : {static_cast<QWidget*>(m_maxTrials), static_cast<QWidget*>(m_maxMinutes)}) w->setEnabled(false);
  // The plan prepared, or the trial's newest (planned now if it has none): jobs run in order, so
  // one still being prepared is the one found.
  const qint64 trial = m_trialId;
  const qint64 prepared = m_prepared ? m_planId : 0;
  const investigate::Budget budget = m_budget;
  m_status->setText(QStringLiteral("Starting…"));
  m_plan.run<std::pair<qint64, View>>(
      QStringLiteral("Starting the investigation"),
      [trial, prepared, budget](store::SessionStore& s) {
        const qint64 plan = prepared > 0 ? prepared : investigate::open_investigation(s, trial, {});
        store::set_plan_state(s, plan, "running");
        return std::make_pair(plan, readView(s, plan, budget, true));
      },
      [this](std::pair<qint64, View> r) {
        m_starting = false;
        m_planId = r.first;
        m_prepared = true;
        m_running = true;
        m_cancel->setEnabled(true);
        showView(r.second);
        if (m_cancelStarting) {
          cancel();
          return;
        }
        launchNext(r.second);
      },
      [this](const QString& message) {
        m_starting = false;
        m_cancel->setEnabled(false);
        fail(message);
      });
  return true;
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
  // A verdict about variants needs a measured variant: before that it would read as a result.
  m_verdict->setText(attribution.factors.empty() ? QString() : QString::fromStdString(attribution.verdict));
}

void InvestigateWindow::launchNext(const View& view) {
  if (!m_running) return;
  if (!view.next) {
    finish("done");
    return;
  }
  m_awaitingAfter = view.finished;
  m_status->setText(QStringLiteral("Running: %1").arg(QString::fromStdString(view.next->why)));
  m_launch(view.next->request);
}

void InvestigateWindow::onTrialStored() {
  if (!m_running || m_awaitingAfter < 0) return;
  const int awaited = m_awaitingAfter;
  const qint64 plan = m_planId;
  const investigate::Budget budget = m_budget;
  m_plan.run<View>(
      QStringLiteral("Reading the investigation"),
      [plan, budget, awaited](store::SessionStore& s) {
        View v = readView(s, plan, budget, false);
        if (v.finished > awaited) v.next = investigate::next_trial(s, plan, budget);
        return v;
      },
      [this, awaited](View v) {
        showView(v);
        // Another trial of the window, not ours; or an earlier answer already queued the next.
        if (v.finished <= awaited || !m_running || m_awaitingAfter != awaited) return;
        m_awaitingAfter = -1;
        launchNext(v);
      },
      [this](const QString& message) { fail(message); });
}

void InvestigateWindow::cancel() {
  if (m_starting) {
    m_cancelStarting = true;  // paused once Start has read the plan
    return;
  }
  if (!m_running) return;
  finish("paused");
  m_status->setText(QStringLiteral("Cancelled: no further trial is queued. Resume continues the plan."));
}

void InvestigateWindow::finish(const char* state) {
  m_running = false;
  m_awaitingAfter = -1;
  m_cancel->setEnabled(false);
  m_start->setText(QStringLiteral("Resume"));
  const std::string final = state;
  const qint64 plan = m_planId;
  const investigate::Budget budget = m_budget;
  // Until the plan is stored, nothing can be resumed; then Resume, unless every planned variant is
  // measured.
  m_start->setEnabled(false);
  m_plan.run<std::pair<bool, View>>(
      QStringLiteral("Storing the investigation"),
      [plan, budget, final](store::SessionStore& s) {
        const auto a = investigate::current_attribution(s, plan);
        store::set_plan_result(s, plan, investigate::to_json(a));
        store::set_plan_state(s, plan, final);
        return std::make_pair(a.not_run.empty(), readView(s, plan, budget, false));
      },
      [this, final](std::pair<bool, View> r) {
        const bool complete = r.first;  // every planned variant measured: nothing left to resume
        const bool done = final == "done";
        showView(r.second);
        if (m_running || m_starting) return;  // resumed meanwhile
        m_start->setEnabled(!(done && complete));
        for (QWidget* w : {static_cast<QWidget*>(m_maxTrials), static_cast<QWidget*>(m_maxMinutes)})
          w->setEnabled(!(done && complete));
        if (!done) return;
        m_status->setText(complete ? QStringLiteral("Done: every planned trial is measured (plan %1).").arg(m_planId)
                                   : QStringLiteral("Done within the budget (plan %1): a larger budget and Resume "
                                                    "measure the rest.")
                                         .arg(m_planId));
        emit investigationFinished(m_planId);
      },
      [this](const QString& message) { fail(message); });
}

void InvestigateWindow::fail(const QString& message) {
  m_error = message;
  m_status->setText(message);
  if (m_running) {
    finish("paused");  // the plan cannot go on: stop queuing, stored as paused if it can be
  } else if (!m_starting) {
    // Nothing runs: Start may try again on a plan that was read.
    m_start->setEnabled(m_prepared);
    for (QWidget* w : {static_cast<QWidget*>(m_maxTrials), static_cast<QWidget*>(m_maxMinutes)}) w->setEnabled(true);
  }
  emit failed(message);
}

}  // namespace tunebench::ui
