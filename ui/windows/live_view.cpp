#include "ui/windows/live_view.h"

#include <algorithm>

#include <QAction>
#include <QCheckBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QSortFilterProxyModel>
#include <QSplitter>
#include <QTableView>
#include <QToolButton>
#include <QVBoxLayout>

#include "ui/plots/memory_timeline_plot.h"
#include "ui/plots/range_summary_model.h"
#include "ui/plots/step_time_plot.h"
#include "ui/plots/telemetry_plot.h"
#include "ui/plots/timeline_overview.h"
#include "ui/plots/timeline_plot.h"
#include "ui/plots/timeline_range_summary.h"
#include "ui/windows/hardware_strip.h"
#include "ui/windows/theme.h"
#include "ui/windows/trial_view_data.h"

namespace tunebench::ui {

namespace {
QString format_seconds(double s) {
  if (s < 60) return QStringLiteral("%1 s").arg(s, 0, 'f', 1);
  return QStringLiteral("%1 min %2 s").arg(int(s) / 60).arg(int(s) % 60);
}

QAction* make_action(QObject* parent, const char* name, const QString& text, const QKeySequence& key,
                     const QString& tip) {
  auto* a = new QAction(text, parent);
  a->setObjectName(QLatin1String(name));
  a->setShortcut(key);
  a->setShortcutContext(Qt::WindowShortcut);
  a->setToolTip(key.isEmpty() ? tip : QStringLiteral("%1 (%2)").arg(tip, key.toString(QKeySequence::NativeText)));
  a->setStatusTip(tip);
  return a;
}

QToolButton* tool(QAction* action, const QString& text = {}) {
  auto* b = new QToolButton;
  b->setDefaultAction(action);
  if (!text.isEmpty()) b->setText(text);
  b->setAutoRaise(true);
  return b;
}
}  // namespace

QString format_progress(const TrialProgress& p) {
  QString text =
      QStringLiteral("%1 %2 of %3 · %4 elapsed").arg(p.unit).arg(p.step).arg(p.steps).arg(format_seconds(p.elapsed_s));
  if (p.eta_s >= 0) text += QStringLiteral(" · about %1 left").arg(format_seconds(p.eta_s));
  return text;
}

LiveView::LiveView(QWidget* parent)
    : QWidget(parent),
      m_timeline(new TimelinePlot),
      m_stepTime(new StepTimePlot),
      m_telemetry(new TelemetryPlot),
      m_memory(new MemoryTimelinePlot),
      m_summaryModel(new RangeSummaryModel(this)) {
  setObjectName(QStringLiteral("liveView"));
  m_overview = new TimelineOverview(&m_timeline->data(), &m_timeline->layout());
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(4, 4, 4, 4);
  layout->setSpacing(2);

  auto* header = new QHBoxLayout;
  m_title =
      new QLabel(QStringLiteral("No trial yet: choose a preset and press Run (Ctrl+R), or replay a log (Ctrl+O)."));
  m_title->setObjectName(QStringLiteral("trialTitle"));
  QFont bold = m_title->font();
  bold.setBold(true);
  m_title->setFont(bold);
  m_title->setMinimumWidth(120);
  m_title->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);  // long names elide, never push the tools away
  m_progress = new QLabel;
  m_progress->setObjectName(QStringLiteral("trialProgress"));
  header->addWidget(m_title, 2);
  header->addWidget(m_progress);
  layout->addLayout(header);

  auto* tools = new QWidget;
  tools->setObjectName(QStringLiteral("timelineTools"));
  createTools(tools);
  layout->addWidget(tools);

  auto* timelineBox = new QWidget;
  m_timelineBox = timelineBox;
  auto* timelineLayout = new QVBoxLayout(timelineBox);
  timelineLayout->setContentsMargins(0, 0, 0, 0);
  timelineLayout->setSpacing(1);
  timelineLayout->addWidget(m_timeline, 1);
  timelineLayout->addWidget(m_overview);

  // The selected span's summary: per phase, what the span holds (hidden until a span exists).
  m_summaryPanel = new QWidget;
  m_summaryPanel->setObjectName(QStringLiteral("rangeSummaryPanel"));
  auto* summaryLayout = new QVBoxLayout(m_summaryPanel);
  summaryLayout->setContentsMargins(0, 2, 0, 0);
  auto* summaryBar = new QHBoxLayout;
  m_summaryTitle = new QLabel;
  m_summaryTitle->setObjectName(QStringLiteral("rangeSummaryTitle"));
  auto* clearSpan = new QToolButton;
  clearSpan->setText(QStringLiteral("Clear"));
  clearSpan->setToolTip(QStringLiteral("Drop the selected span (Shift+click on the timeline does too)"));
  connect(clearSpan, &QToolButton::clicked, m_timeline, &TimelinePlot::clearSelectedRange);
  summaryBar->addWidget(m_summaryTitle, 1);
  summaryBar->addWidget(clearSpan);
  summaryLayout->addLayout(summaryBar);
  m_summaryView = new QTableView;
  m_summaryView->setObjectName(QStringLiteral("rangeSummaryView"));
  auto* sorted = new QSortFilterProxyModel(this);
  sorted->setSourceModel(m_summaryModel);
  sorted->setSortRole(RangeSummaryModel::SortRole);
  m_summaryView->setModel(sorted);
  m_summaryView->setSortingEnabled(true);
  m_summaryView->sortByColumn(RangeSummaryModel::TotalMs, Qt::DescendingOrder);
  m_summaryView->verticalHeader()->setVisible(false);
  m_summaryView->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  m_summaryView->horizontalHeader()->setStretchLastSection(true);
  m_summaryView->setAlternatingRowColors(true);
  summaryLayout->addWidget(m_summaryView, 1);
  m_summaryPanel->setVisible(false);
  m_summaryPanel->setMaximumHeight(220);
  connect(m_timeline, &TimelinePlot::rangeSelected, this, &LiveView::updateSummary);
  connect(m_timeline, &TimelinePlot::rangeCleared, this, [this] { m_summaryPanel->setVisible(false); });
  connect(m_timeline, &TimelinePlot::layoutChanged, this, [this] {
    if (m_timeline->selectedRange()) updateSummary();
    m_overview->update();
  });

  auto* split = new QSplitter(Qt::Vertical);
  m_split = split;
  split->setObjectName(QStringLiteral("liveSplitter"));
  split->addWidget(timelineBox);
  split->addWidget(m_summaryPanel);
  auto* lower = new QSplitter(Qt::Horizontal);
  lower->setObjectName(QStringLiteral("plotsSplitter"));
  lower->addWidget(m_stepTime);
  lower->addWidget(m_telemetry);
  lower->addWidget(m_memory);
  m_plots = lower;
  lower->setStretchFactor(0, 5);
  lower->setStretchFactor(1, 3);
  lower->setStretchFactor(2, 4);
  fitPlotsWidths();
  // Under the plots: the memory categories beside the prediction, or why there are none.
  m_hardware = new HardwareStrip;
  auto* lowerBox = new QWidget;
  m_plotsBox = lowerBox;
  auto* lowerLayout = new QVBoxLayout(lowerBox);
  lowerLayout->setContentsMargins(0, 0, 0, 0);
  lowerLayout->addWidget(lower, 1);
  lowerLayout->addWidget(m_hardware);
  split->addWidget(lowerBox);
  split->setStretchFactor(0, 3);
  split->setStretchFactor(1, 1);
  split->setStretchFactor(2, 2);
  layout->addWidget(split, 1);

  // Every rank keeps a readable row and label (TimelinePlot::minimumSizeHint): at a laptop's
  // 1280 x 760 the splitter's shares left 8 ranks' 24 lanes 82 px, labels for every other rank.
  connect(m_timeline, &TimelinePlot::leastHeightChanged, this, &LiveView::keepTimelineReadable);
  keepTimelineReadable();

  connect(m_timeline, &TimelinePlot::viewChanged, m_overview, &TimelineOverview::setView);
  connect(m_overview, &TimelineOverview::centreRequested, this, [this](double t) {
    m_timeline->setFollowLatest(false);
    TimelineGeometry g = m_timeline->geometry();
    const double half = g.span_s() / 2;
    g.t0_s = t - half;
    g.t1_s = t + half;
    m_timeline->setGeometry(g);
    m_timeline->markDirty();
  });
  connect(m_overview, &TimelineOverview::zoomRequested, this, [this](double factor, double anchor) {
    m_timeline->setFollowLatest(false);
    m_timeline->setGeometry(m_timeline->geometry().zoomed(factor, anchor));
    m_timeline->markDirty();
  });
}

void LiveView::createTools(QWidget* bar) {
  auto* row = new QHBoxLayout(bar);
  row->setContentsMargins(0, 0, 0, 0);
  row->setSpacing(4);

  QAction* find =
      make_action(this, "actionFindPhase", QStringLiteral("&Find phase or collective…"), QKeySequence::Find,
                  QStringLiteral("Find a phase or collective on the timeline (all-reduce, bucket 3, data wait)"));
  QAction* next = make_action(this, "actionFindNext", QStringLiteral("Find &next"), QKeySequence::FindNext,
                              QStringLiteral("Show the next match"));
  QAction* previous = make_action(this, "actionFindPrevious", QStringLiteral("Find pre&vious"),
                                  QKeySequence::FindPrevious, QStringLiteral("Show the previous match"));
  QAction* fit = make_action(this, "actionFitTimeline", QStringLiteral("F&it to data"),
                             QKeySequence(Qt::CTRL | Qt::Key_0), QStringLiteral("Show the whole run on the timeline"));
  QAction* zoomIn =
      make_action(this, "actionZoomIn", QStringLiteral("Zoom &in"), QKeySequence(QKeySequence::ZoomIn),
                  QStringLiteral("Zoom the timeline in (the wheel zooms too; Ctrl+drag zooms to a span)"));
  QAction* zoomOut = make_action(this, "actionZoomOut", QStringLiteral("Zoom &out"),
                                 QKeySequence(QKeySequence::ZoomOut), QStringLiteral("Zoom the timeline out"));
  QAction* follow = make_action(this, "actionFollow", QStringLiteral("&Follow latest"), QKeySequence(Qt::Key_F),
                                QStringLiteral("Keep the newest steps in view on the timeline; dragging turns it off"));
  follow->setCheckable(true);
  follow->setChecked(true);  // (text fields take a bare F first: Qt's shortcut override)
  QAction* fold = make_action(
      this, "actionCollapseLanes", QStringLiteral("Fold &lanes of every rank"), QKeySequence(Qt::CTRL | Qt::Key_L),
      QStringLiteral(
          "One row per rank (host, compute and comm as thirds of it); double-click a rank's label to fold it alone"));
  fold->setCheckable(true);
  m_actions = {follow, zoomIn, zoomOut, fit, find, next, previous, fold};

  m_search = new QLineEdit;
  m_search->setObjectName(QStringLiteral("timelineSearch"));
  m_search->setPlaceholderText(QStringLiteral("Find: all-reduce, bucket 3, data wait…"));
  m_search->setClearButtonEnabled(true);
  m_search->setToolTip(find->toolTip());
  m_search->setMaximumWidth(240);
  m_searchCount = new QLabel;
  m_searchCount->setObjectName(QStringLiteral("timelineSearchCount"));
  connect(m_search, &QLineEdit::textChanged, m_timeline, &TimelinePlot::setSearch);
  connect(m_search, &QLineEdit::returnPressed, m_timeline, [this] { m_timeline->stepMatch(+1); });
  connect(find, &QAction::triggered, m_search, [this] {
    m_search->setFocus();
    m_search->selectAll();
  });
  connect(next, &QAction::triggered, m_timeline, [this] { m_timeline->stepMatch(+1); });
  connect(previous, &QAction::triggered, m_timeline, [this] { m_timeline->stepMatch(-1); });
  connect(m_timeline, &TimelinePlot::searchChanged, this, &LiveView::updateSearchLabel);

  m_rankFilter = new QLineEdit;
  m_rankFilter->setObjectName(QStringLiteral("rankFilter"));
  m_rankFilter->setPlaceholderText(QStringLiteral("ranks: all"));
  m_rankFilter->setToolTip(QStringLiteral("Ranks to show, e.g. 0-3,7 (empty: all)"));
  m_rankFilter->setMaximumWidth(110);
  connect(m_rankFilter, &QLineEdit::textChanged, this, &LiveView::applyRankFilter);
  connect(m_timeline, &TimelinePlot::layoutChanged, this, [this, fold] {
    const QSignalBlocker block(fold);
    fold->setChecked(m_timeline->layout().ranks() > 0 &&
                     int(m_timeline->collapsedRanks().size()) >= m_timeline->layout().ranks());
  });
  connect(fold, &QAction::toggled, this, [this](bool on) {
    std::set<int> all;
    if (on)
      for (int r = 0; r < std::max(1, m_timeline->data().ranks()); ++r) all.insert(r);
    m_timeline->setCollapsedRanks(all);
  });

  m_follow = new QCheckBox(QStringLiteral("Follow latest"));
  m_follow->setObjectName(QStringLiteral("followLatest"));
  m_follow->setChecked(true);
  m_follow->setToolTip(follow->toolTip());
  connect(m_follow, &QCheckBox::toggled, m_timeline, &TimelinePlot::setFollowLatest);
  connect(follow, &QAction::toggled, m_timeline, &TimelinePlot::setFollowLatest);
  connect(m_timeline, &TimelinePlot::followLatestChanged, m_follow, &QCheckBox::setChecked);
  connect(m_timeline, &TimelinePlot::followLatestChanged, follow, &QAction::setChecked);
  connect(zoomIn, &QAction::triggered, m_timeline, [this] { m_timeline->zoomBy(0.5); });
  connect(zoomOut, &QAction::triggered, m_timeline, [this] { m_timeline->zoomBy(2.0); });
  connect(fit, &QAction::triggered, m_timeline, &TimelinePlot::fitToData);

  row->addWidget(m_search);
  row->addWidget(tool(previous, QStringLiteral("◀")));
  row->addWidget(tool(next, QStringLiteral("▶")));
  row->addWidget(m_searchCount);
  row->addSpacing(8);
  row->addWidget(m_rankFilter);
  row->addWidget(tool(fold, QStringLiteral("Fold lanes")));
  row->addStretch(1);
  row->addWidget(tool(fit, QStringLiteral("Fit")));
  row->addWidget(tool(zoomOut, QStringLiteral("−")));
  row->addWidget(tool(zoomIn, QStringLiteral("+")));
  row->addWidget(m_follow);
}

void LiveView::keepTimelineReadable() {
  // The overview under it keeps the height it asks for (its size hint, above its minimum).
  const int need = m_timeline->minimumSizeHint().height() +
                   std::max(m_overview->sizeHint().height(), m_overview->minimumHeight()) + 1;
  m_timelineBox->setMinimumHeight(need);  // the splitter keeps it when the window or a handle moves
  QList<int> sizes = m_split->sizes();
  if (sizes.size() != 3 || sizes[0] >= need || sizes[0] == 0) return;
  // The room comes from the plots under it, down to their own least height.
  const int give = std::min(need - sizes[0], std::max(0, sizes[2] - m_plotsBox->minimumSizeHint().height()));
  sizes[0] += give;
  sizes[2] -= give;
  m_split->setSizes(sizes);
}

void LiveView::fitPlotsWidths() {
  const bool plotting = m_memory->hasStep();
  if (m_memoryPlotting == plotting) return;  // the user's own widths stay until what it shows changes
  m_memoryPlotting = plotting;
  // Step time keeps the most room. Memory through a sampled step takes a third when it draws a
  // step, less when it only says why there is none (proportions: the splitter scales them).
  m_plots->setSizes(plotting ? QList<int>{5000, 3000, 4000} : QList<int>{5000, 4000, 2000});
}

void LiveView::applyRankFilter() {
  const int ranks = std::max(1, m_timeline->data().ranks());
  const auto shown = parse_rank_list(m_rankFilter->text().toStdString(), std::max(ranks, 4096));
  m_rankFilter->setProperty("invalid", !shown.has_value());
  m_rankFilter->setStyleSheet(shown ? QString()
                                    : QStringLiteral("QLineEdit { border: 2px solid %1; }").arg(error_color().name()));
  if (!shown) return;
  // Memory through a sampled step follows the first rank shown.
  m_memory->setRank(shown->empty() ? 0 : *shown->begin());
  fitPlotsWidths();
  std::set<int> hidden;
  for (int r = 0; r < 4096 && r < std::max(ranks, 64); ++r)
    if (!shown->count(r)) hidden.insert(r);
  m_timeline->setHiddenRanks(hidden);
}

void LiveView::updateSearchLabel(int matches, int current) {
  if (m_search->text().trimmed().isEmpty())
    m_searchCount->clear();
  else if (matches == 0)
    m_searchCount->setText(QStringLiteral("no match"));
  else if (current < 0)
    m_searchCount->setText(QStringLiteral("%1 matches").arg(matches));
  else
    m_searchCount->setText(QStringLiteral("%1 of %2").arg(current + 1).arg(matches));
}

void LiveView::updateSummary() {
  const auto range = m_timeline->selectedRange();
  if (!range) return;
  const RangeSummary s = summarize_range(m_timeline->data(), range->first, range->second, m_timeline->shownDataRows());
  m_summaryModel->setSummary(s);
  if (!m_summaryPanel->isVisible() && m_split->sizes().size() == 3) {
    // The summary takes its room from the plots below, never from the timeline it describes.
    QList<int> sizes = m_split->sizes();
    const int room = std::min(170, std::max(0, sizes[2] - 120));
    sizes[1] = room;
    sizes[2] -= room;
    m_summaryPanel->setVisible(true);  // first: showing a splitter child redistributes the sizes
    m_split->setSizes(sizes);
  }
  m_summaryTitle->setText(
      QStringLiteral("<b>Selected span</b> %1 s – %2 s (%3 ms) · %4 rank(s) shown · Shift+drag for another span")
          .arg(s.t0_s, 0, 'f', 4)
          .arg(s.t1_s, 0, 'f', 4)
          .arg((s.t1_s - s.t0_s) * 1e3, 0, 'f', 2)
          .arg(s.ranks));
  m_summaryPanel->setVisible(true);
}

void LiveView::addEvents(const EventBatch& batch) {
  m_timeline->addEvents(batch);
  m_stepTime->addEvents(batch);
  m_telemetry->addEvents(batch);
  m_memory->addEvents(batch);
  m_hardware->addEvents(batch);
  fitPlotsWidths();
  m_overview->update();
}

void LiveView::clear(const QString& title) {
  m_timeline->clear();
  m_stepTime->clear();
  m_telemetry->clear();
  m_memory->clear();
  m_hardware->clear();
  m_title->setText(title);
  m_title->setToolTip(title);
  m_progress->clear();
  m_lastProgress = TrialProgress{};
  m_follow->setChecked(true);
  m_timeline->setFollowLatest(true);
  m_summaryPanel->setVisible(false);
  m_overview->update();
}

void LiveView::showTrial(TrialViewData data, bool live) {
  const QString title = data.title;
  clear(title);
  m_timeline->setData(std::move(data.timeline));
  m_stepTime->addEvents(data.events);
  m_telemetry->addEvents(data.events);
  m_memory->addEvents(data.events);
  m_hardware->addEvents(data.events);
  fitPlotsWidths();
  if (!live) {
    m_telemetry->setComplete(true);  // every sample it has is here
    m_memory->setComplete(true);
    // A stored trial: the whole run, as Nsight opens a report.
    m_timeline->setFollowLatest(false);
    m_timeline->fitToData();
    m_progress->setText(QStringLiteral("stored trial"));
  }
  replotNow();
  m_overview->setView(m_timeline->xAxis->range().lower, m_timeline->xAxis->range().upper);
  m_overview->update();
  applyRankFilter();
}

void LiveView::setMachineHasGpu(bool gpu) { m_telemetry->setDefaultMode(!gpu); }

void LiveView::setProgress(const TrialProgress& progress) {
  m_lastProgress = progress;
  m_progress->setText(format_progress(progress));
}

void LiveView::setOutcome(const TrialOutcome& outcome) {
  m_telemetry->setComplete(true);  // the run ended: no sample will come
  m_memory->setComplete(true);
  const QString unit = m_lastProgress.unit;  // "step", or "size" for a link probe
  // A run that never reported (a worker that could not start) has no "step 0 of 0" to be at.
  const QString where = m_lastProgress.steps > 0
                            ? QStringLiteral("%1 %2 of %3").arg(unit).arg(m_lastProgress.step).arg(m_lastProgress.steps)
                            : QStringLiteral("the start, before its first %1").arg(unit);
  switch (outcome.status) {
    case protocol::TrialStatus::Done:
      m_progress->setText(QStringLiteral("done: %1 %2s in %3 s")
                              .arg(m_lastProgress.step)
                              .arg(unit)
                              .arg(m_lastProgress.elapsed_s, 0, 'f', 1));
      break;
    case protocol::TrialStatus::Stopped:
      m_progress->setText(QStringLiteral("stopped at %1").arg(where));
      break;
    case protocol::TrialStatus::Failed:
      m_progress->setText(
          QStringLiteral("<span style='color:%1'><b>failed at %2</b>: %3</span>")
              .arg(error_color().name(), where, outcome.reason.section(QStringLiteral(" — "), 0, 0).toHtmlEscaped()));
      break;
    default:  // an outcome is done, failed or stopped
      break;
  }
}

QString LiveView::title() const { return m_title->text(); }

QString LiveView::progressText() const { return m_progress->text(); }

void LiveView::replotNow() {
  for (LivePlot* plot : {static_cast<LivePlot*>(m_timeline), static_cast<LivePlot*>(m_stepTime),
                         static_cast<LivePlot*>(m_telemetry), static_cast<LivePlot*>(m_memory)})
    plot->replotIfDirty();
  m_overview->update();
}

}  // namespace tunebench::ui
