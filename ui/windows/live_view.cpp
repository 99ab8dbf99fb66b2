#include "ui/windows/live_view.h"

#include <QCheckBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QSplitter>
#include <QToolButton>
#include <QVBoxLayout>

#include "ui/plots/step_time_plot.h"
#include "ui/plots/telemetry_plot.h"
#include "ui/plots/timeline_plot.h"

namespace tunebench::ui {

namespace {
QString format_seconds(double s) {
  if (s < 60) return QStringLiteral("%1 s").arg(s, 0, 'f', 1);
  return QStringLiteral("%1 min %2 s").arg(int(s) / 60).arg(int(s) % 60);
}
}  // namespace

QString format_progress(const TrialProgress& p) {
  QString text = QStringLiteral("step %1 of %2 · %3 elapsed").arg(p.step).arg(p.steps).arg(format_seconds(p.elapsed_s));
  if (p.eta_s >= 0) text += QStringLiteral(" · about %1 left").arg(format_seconds(p.eta_s));
  return text;
}

LiveView::LiveView(QWidget* parent)
    : QWidget(parent), m_timeline(new TimelinePlot), m_stepTime(new StepTimePlot), m_telemetry(new TelemetryPlot) {
  setObjectName(QStringLiteral("liveView"));
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(4, 4, 4, 4);
  layout->setSpacing(2);

  auto* bar = new QHBoxLayout;
  m_title = new QLabel(QStringLiteral("No trial yet: choose a preset and press Run (Ctrl+R), or replay a log (Ctrl+O)."));
  m_title->setObjectName(QStringLiteral("trialTitle"));
  QFont bold = m_title->font();
  bold.setBold(true);
  m_title->setFont(bold);
  m_progress = new QLabel;
  m_progress->setObjectName(QStringLiteral("trialProgress"));
  m_follow = new QCheckBox(QStringLiteral("Follow latest"));
  m_follow->setObjectName(QStringLiteral("followLatest"));
  m_follow->setChecked(true);
  m_follow->setToolTip(QStringLiteral("Keep the newest steps in view (F). Dragging the timeline turns this off."));
  auto* zoomIn = new QToolButton;
  zoomIn->setText(QStringLiteral("+"));
  zoomIn->setToolTip(QStringLiteral("Zoom in on the timeline (Ctrl++); the mouse wheel zooms too"));
  auto* zoomOut = new QToolButton;
  zoomOut->setText(QStringLiteral("−"));
  zoomOut->setToolTip(QStringLiteral("Zoom out (Ctrl+-)"));
  bar->addWidget(m_title);
  bar->addStretch(1);
  bar->addWidget(m_progress);
  bar->addSpacing(12);
  bar->addWidget(m_follow);
  bar->addWidget(zoomIn);
  bar->addWidget(zoomOut);
  layout->addLayout(bar);

  connect(m_follow, &QCheckBox::toggled, m_timeline, &TimelinePlot::setFollowLatest);
  connect(m_timeline, &TimelinePlot::followLatestChanged, m_follow, &QCheckBox::setChecked);
  connect(zoomIn, &QToolButton::clicked, m_timeline, [this] { m_timeline->zoomBy(0.5); });
  connect(zoomOut, &QToolButton::clicked, m_timeline, [this] { m_timeline->zoomBy(2.0); });

  auto* split = new QSplitter(Qt::Vertical);
  split->setObjectName(QStringLiteral("liveSplitter"));
  split->addWidget(m_timeline);
  auto* lower = new QSplitter(Qt::Horizontal);
  lower->addWidget(m_stepTime);
  lower->addWidget(m_telemetry);
  split->addWidget(lower);
  split->setStretchFactor(0, 3);
  split->setStretchFactor(1, 2);
  layout->addWidget(split, 1);
}

void LiveView::addEvents(const EventBatch& batch) {
  m_timeline->addEvents(batch);
  m_stepTime->addEvents(batch);
  m_telemetry->addEvents(batch);
}

void LiveView::clear(const QString& title) {
  m_timeline->clear();
  m_stepTime->clear();
  m_telemetry->clear();
  m_title->setText(title);
  m_progress->clear();
  m_lastProgress = TrialProgress{};
  m_follow->setChecked(true);
}

void LiveView::setProgress(const TrialProgress& progress) {
  m_lastProgress = progress;
  m_progress->setText(format_progress(progress));
}

void LiveView::setOutcome(const TrialOutcome& outcome) {
  const QString where = QStringLiteral("step %1 of %2").arg(m_lastProgress.step).arg(m_lastProgress.steps);
  switch (outcome.status) {
    case TrialOutcome::Status::Succeeded:
      m_progress->setText(QStringLiteral("done: %1 steps in %2 s").arg(m_lastProgress.step).arg(m_lastProgress.elapsed_s, 0, 'f', 1));
      break;
    case TrialOutcome::Status::Stopped:
      m_progress->setText(QStringLiteral("stopped at %1").arg(where));
      break;
    case TrialOutcome::Status::Failed:
      m_progress->setText(QStringLiteral("<span style='color:#c62828'><b>failed at %1</b>: %2</span>")
                              .arg(where, outcome.reason.section(QStringLiteral(" — "), 0, 0).toHtmlEscaped()));
      break;
  }
}

QString LiveView::progressText() const { return m_progress->text(); }

void LiveView::replotNow() {
  for (LivePlot* plot : {static_cast<LivePlot*>(m_timeline), static_cast<LivePlot*>(m_stepTime), static_cast<LivePlot*>(m_telemetry)})
    plot->replotIfDirty();
}

}  // namespace tunebench::ui
