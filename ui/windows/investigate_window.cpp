#include "ui/windows/investigate_window.h"

#include <QDialogButtonBox>
#include <QHeaderView>
#include <QLabel>
#include <QListWidget>
#include <QPointer>
#include <QProgressBar>
#include <QPushButton>
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
  m_cancel->setToolTip(
      QStringLiteral("Queue no further trial of this plan (the running one finishes); "
                     "open Investigate again on the trial to resume"));
  connect(m_cancel, &QPushButton::clicked, this, &InvestigateWindow::cancel);
  auto* buttons = new QDialogButtonBox(QDialogButtonBox::Close, this);
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

bool InvestigateWindow::start() {
  if (isBusy() || m_running) return false;
  m_error.clear();
  const qint64 trial = m_trialId;
  const investigate::Budget budget = m_budget;
  m_status->setText(QStringLiteral("Planning…"));
  m_plan.run<std::pair<qint64, View>>(
      QStringLiteral("Planning the investigation"),
      [trial, budget](store::SessionStore& s) {
        const qint64 plan = investigate::open_investigation(s, trial, {});
        store::set_plan_state(s, plan, "running");
        return std::make_pair(plan, readView(s, plan, budget, true));
      },
      [this](std::pair<qint64, View> r) {
        m_planId = r.first;
        m_running = true;
        m_cancel->setEnabled(true);
        showView(r.second);
        launchNext(r.second);
      },
      [this](const QString& message) { fail(message); });
  return true;
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
  m_verdict->setText(QString::fromStdString(attribution.verdict));
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
  if (!m_running) return;
  finish("paused");
  m_status->setText(QStringLiteral("Cancelled: no further trial is queued. Investigate the trial again to resume."));
}

void InvestigateWindow::finish(const char* state) {
  m_running = false;
  m_awaitingAfter = -1;
  m_cancel->setEnabled(false);
  const std::string final = state;
  const qint64 plan = m_planId;
  const investigate::Budget budget = m_budget;
  m_plan.run<View>(
      QStringLiteral("Storing the investigation"),
      [plan, budget, final](store::SessionStore& s) {
        const auto a = investigate::current_attribution(s, plan);
        store::set_plan_result(s, plan, investigate::to_json(a));
        store::set_plan_state(s, plan, final);
        return readView(s, plan, budget, false);
      },
      [this, final](View v) {
        showView(v);
        if (final != "done") return;
        m_status->setText(QStringLiteral("Done: every planned trial is measured (plan %1).").arg(m_planId));
        emit investigationFinished(m_planId);
      },
      [this](const QString& message) { fail(message); });
}

void InvestigateWindow::fail(const QString& message) {
  m_error = message;
  m_status->setText(message);
  if (m_running) finish("paused");  // the plan cannot go on: stop queuing, stored as paused if it can be
  emit failed(message);
}

}  // namespace tunebench::ui
