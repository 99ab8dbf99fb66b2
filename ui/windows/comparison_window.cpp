#include "ui/windows/comparison_window.h"

#include <algorithm>

#include <QApplication>
#include <QClipboard>
#include <QComboBox>
#include <QEvent>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QScrollBar>
#include <QShortcut>
#include <QSplitter>
#include <QTabWidget>
#include <QTableView>
#include <QVBoxLayout>

#include "ui/models/config_diff_model.h"
#include "ui/models/metrics_model.h"
#include "ui/models/status_colors.h"
#include "ui/models/sweep_table_model.h"
#include "ui/plots/breakdown_plot.h"
#include "ui/plots/curves_plot.h"
#include "ui/plots/step_compare_plot.h"
#include "ui/plots/sweep_plot.h"
#include "ui/windows/diagnosis_view.h"

namespace tunebench::ui {

namespace {
QTableView* make_table(QAbstractItemModel* model, const QString& name) {
  auto* view = new QTableView;
  view->setObjectName(name);
  view->setModel(model);
  view->setAlternatingRowColors(true);
  view->setSelectionMode(QAbstractItemView::ContiguousSelection);
  view->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  view->verticalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  view->setWordWrap(false);
  return view;
}

QWidget* titled(const QString& title, QWidget* body) {
  auto* w = new QWidget;
  auto* l = new QVBoxLayout(w);
  l->setContentsMargins(0, 0, 0, 0);
  l->setSpacing(2);
  auto* label = new QLabel(QStringLiteral("<b>%1</b>").arg(title.toHtmlEscaped()));
  label->setWordWrap(true);  // a long title wraps rather than widening its pane over the tables
  l->addWidget(label);
  l->addWidget(body, 1);
  return w;
}
}  // namespace

ComparisonWindow::ComparisonWindow(QWidget* parent) : QWidget(parent, Qt::Window) {
  setObjectName(QStringLiteral("comparisonWindow"));
  setWindowTitle(QStringLiteral("Tunebench — comparison"));
  setAttribute(Qt::WA_DeleteOnClose, false);  // the owner decides; tests keep it on the stack
  // A window of its own closes as one does: Esc and Ctrl+W (issue 44).
  for (const QKeySequence& key : {QKeySequence(Qt::Key_Escape), QKeySequence(QKeySequence::Close)}) {
    auto* closeKey = new QShortcut(key, this);
    closeKey->setContext(Qt::WindowShortcut);
    connect(closeKey, &QShortcut::activated, this, &QWidget::close);
  }
  m_diffModel = new ConfigDiffModel(this);
  m_metricsModel = new MetricsModel(this);
  m_sweepModel = new SweepTableModel(this);

  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(8, 8, 8, 8);
  auto* top = new QHBoxLayout;
  m_title = new QLabel;
  m_title->setObjectName(QStringLiteral("comparisonTitle"));
  QFont bold = m_title->font();
  bold.setBold(true);
  bold.setPointSizeF(bold.pointSizeF() * 1.15);
  m_title->setFont(bold);
  auto* copy = new QPushButton(QStringLiteral("Copy report as text"));
  copy->setObjectName(QStringLiteral("copyReport"));
  copy->setToolTip(QStringLiteral("The same text as `tunebench-cli report`, for a forum post"));
  connect(copy, &QPushButton::clicked, this,
          [this] { QApplication::clipboard()->setText(QString::fromStdString(analysis::render_text(m_report))); });
  m_exportReport = new QPushButton(QStringLiteral("Export report…"));
  m_exportReport->setObjectName(QStringLiteral("exportReport"));
  m_exportReport->setToolTip(QStringLiteral(
      "This comparison as one HTML file for people without Tunebench (plots, diagnosis and the trials themselves), "
      "or a Markdown summary for a forum post"));
  m_exportReport->setEnabled(false);
  connect(m_exportReport, &QPushButton::clicked, this, &ComparisonWindow::exportReportRequested);
  top->addWidget(m_title, 1);
  top->addWidget(m_exportReport);
  top->addWidget(copy);
  layout->addLayout(top);

  // The one sentence the forum question needs; it stays above every tab.
  m_throughput = new QLabel;
  m_throughput->setObjectName(QStringLiteral("throughputStatement"));
  m_throughput->setWordWrap(true);
  m_throughput->setTextInteractionFlags(Qt::TextSelectableByMouse);
  styleThroughput();
  layout->addWidget(m_throughput);

  m_tabs = new QTabWidget;
  m_tabs->setObjectName(QStringLiteral("comparisonTabs"));
  m_tabs->addTab(buildComparisonTab(), QStringLiteral("Comparison"));
  m_diagnosis = new DiagnosisView;
  connect(m_diagnosis, &DiagnosisView::followUpRequested, this, &ComparisonWindow::followUpRequested);
  m_tabs->addTab(m_diagnosis, QStringLiteral("Diagnosis"));
  m_curves = new CurvesPlot;
  m_tabs->addTab(m_curves, QStringLiteral("Curves"));
  m_sweepTab = buildSweepTab();
  layout->addWidget(m_tabs, 1);
  resize(1500, 950);
}

ComparisonWindow::~ComparisonWindow() = default;

void ComparisonWindow::styleThroughput() {
  // A note box in the theme's colours (light blue on light themes, dark blue on dark ones).
  m_throughput->setStyleSheet(QStringLiteral("QLabel { background: %1; color: %2; border: 1px solid %3; "
                                             "border-radius: 4px; padding: 6px 8px; font-size: 11pt; }")
                                  .arg(note_background().name(), note_foreground().name(), note_border().name()));
}

void ComparisonWindow::fitTables() {
  // The diff: header + every row, no scroll bar (it was two rows tall and hid NCCL_P2P_DISABLE).
  m_diffView->resizeColumnsToContents();
  m_diffView->resizeRowsToContents();
  const int rows = m_diffView->verticalHeader()->length();
  const int header = m_diffView->horizontalHeader()->sizeHint().height();
  const int scroll = m_diffView->horizontalHeader()->length() + m_diffView->verticalHeader()->sizeHint().width() + 4 >
                             m_diffView->width()
                         ? m_diffView->horizontalScrollBar()->sizeHint().height()
                         : 0;
  m_diffView->setFixedHeight(std::max(40, rows + header + scroll + 2 * m_diffView->frameWidth() + 2));
  // The metrics: as wide as their columns (no sideways scrolling), the plots get the rest.
  m_metricsView->resizeColumnsToContents();
  m_metricsView->resizeRowsToContents();
  const int needed = m_metricsView->horizontalHeader()->length() + m_metricsView->verticalHeader()->width() +
                     2 * m_metricsView->frameWidth() + m_metricsView->verticalScrollBar()->sizeHint().width() + 8;
  const int total = std::max(width(), 800);
  const int left = std::min(needed, total * 7 / 10);
  m_split->setSizes({left, std::max(200, total - left)});
}

void ComparisonWindow::showEvent(QShowEvent* event) {
  QWidget::showEvent(event);
  fitTables();  // sizes are known only now
}

void ComparisonWindow::resizeEvent(QResizeEvent* event) {
  QWidget::resizeEvent(event);
  fitTables();
}

void ComparisonWindow::changeEvent(QEvent* event) {
  if (event->type() == QEvent::PaletteChange && m_throughput) styleThroughput();
  QWidget::changeEvent(event);
}

QWidget* ComparisonWindow::buildComparisonTab() {
  m_diffView = make_table(m_diffModel, QStringLiteral("configDiffView"));
  m_metricsView = make_table(m_metricsModel, QStringLiteral("metricsView"));
  m_metricsView->verticalHeader()->setVisible(false);
  m_breakdown = new BreakdownPlot;
  m_steps = new StepComparePlot;

  // The diff is a few knobs: exactly as tall as its rows (fitTables), never in a splitter that
  // could squeeze it; the metrics take the rest.
  auto* left = new QWidget;
  auto* leftLayout = new QVBoxLayout(left);
  leftLayout->setContentsMargins(0, 0, 0, 0);
  leftLayout->addWidget(
      titled(QStringLiteral("Configuration: knobs that differ (highlighted: differs from the baseline)"), m_diffView),
      0);
  leftLayout->addWidget(
      titled(QStringLiteral("Metrics: median (IQR) over measured steps; ratio green = better, red = worse"),
             m_metricsView),
      1);
  auto* right = new QSplitter(Qt::Vertical);
  right->addWidget(titled(QStringLiteral("Where the step time goes: the mean step on the critical rank, by phase (the "
                                         "parts of a mean add up; the metrics show medians)"),
                          m_breakdown));
  right->addWidget(titled(QStringLiteral("One representative step of each trial (closest to the median)"), m_steps));
  right->setStretchFactor(0, 1);
  right->setStretchFactor(1, 1);
  m_split = new QSplitter(Qt::Horizontal);
  m_split->setObjectName(QStringLiteral("comparisonSplit"));
  m_split->addWidget(left);
  m_split->addWidget(right);
  m_split->setStretchFactor(0, 5);
  m_split->setStretchFactor(1, 6);
  return m_split;
}

QWidget* ComparisonWindow::buildSweepTab() {
  auto* w = new QWidget;
  auto* l = new QVBoxLayout(w);
  auto* bar = new QHBoxLayout;
  m_sweepMetric = new QComboBox;
  m_sweepMetric->setObjectName(QStringLiteral("sweepMetric"));
  for (int m = SweepTableModel::StepMs; m < SweepTableModel::MetricCount; ++m)
    m_sweepMetric->addItem(SweepTableModel::metricName(SweepTableModel::Metric(m)), m);
  m_sweepMetric->setCurrentIndex(1);  // tokens/s per GPU: the figure that decides a sweep
  connect(m_sweepMetric, &QComboBox::currentIndexChanged, this, &ComparisonWindow::updateSweepPlot);
  bar->addWidget(new QLabel(QStringLiteral("Chart:")));
  bar->addWidget(m_sweepMetric);
  bar->addStretch(1);
  l->addLayout(bar);
  auto* split = new QSplitter(Qt::Vertical);
  split->addWidget(make_table(m_sweepModel, QStringLiteral("sweepTableView")));
  m_sweepPlot = new SweepPlot;
  split->addWidget(m_sweepPlot);
  split->setSizes({220, 600});  // a sweep has few rows; the chart is what one reads
  l->addWidget(split, 1);
  return w;
}

void ComparisonWindow::setTrials(std::vector<protocol::TrialLog> logs, const QStringList& names) {
  m_logs = std::move(logs);
  // The display names label every sentence too (headline, throughput, diagnosis), as they label
  // the titles and columns: a log's own trial id or config name never stands in for them.
  std::vector<std::string> labels;
  for (const QString& n : names) labels.push_back(n.toStdString());
  m_report = analysis::make_report(m_logs, std::nullopt, labels);
  const auto& trials = m_report.comparison.trials;
  // Names and the log drawn for each (pooled) trial: its first repeat's.
  m_names.clear();
  std::vector<const protocol::TrialLog*> drawn;
  std::vector<int64_t> steps;
  std::vector<analysis::MeanBreakdown> breakdowns;
  std::vector<double> medians;
  for (const auto& m : trials) {
    int index = -1;
    for (size_t i = 0; i < m_logs.size() && index < 0; ++i)
      if (m_logs[i].trial == m.trial) index = int(i);
    QString name = index >= 0 ? names.value(index) : QString();
    if (name.isEmpty()) name = QString::fromStdString(m.label);
    if (m.repeat_ids.size() > 1) name += QStringLiteral(" (%1 repeats)").arg(m.repeat_ids.size());
    m_names << name;
    drawn.push_back(index >= 0 ? &m_logs[size_t(index)] : nullptr);
    steps.push_back(m.representative_step);
    breakdowns.push_back(m.breakdown);
    medians.push_back(m.step_ms.median);
  }
  m_title->setText(QStringLiteral("%1 trials compared · baseline: %2")
                       .arg(trials.size())
                       .arg(m_names.value(int(m_report.comparison.baseline))));
  QStringList sentences;
  for (const auto& s : m_report.comparison.throughput_statements)
    sentences << QString::fromStdString(s).toHtmlEscaped();
  m_throughput->setText(sentences.isEmpty()
                            ? QStringLiteral("Only one configuration: nothing to compare its throughput with.")
                            : QStringLiteral("<b>Step time vs throughput</b> — ") +
                                  sentences.join(QStringLiteral("<br>")));
  m_diffModel->setComparison(m_report.comparison, m_names);
  m_metricsModel->setComparison(m_report.comparison, m_names);
  fitTables();
  m_breakdown->setTrials(m_names, breakdowns, medians);
  m_steps->setSteps(m_names, drawn, steps);
  m_diagnosis->setReport(m_report, m_names);
  // Every compared log as its own curve (repeats too: their spread is the noise).
  std::vector<const protocol::TrialLog*> all;
  QStringList allNames;
  for (size_t i = 0; i < m_logs.size(); ++i) {
    all.push_back(&m_logs[i]);
    QString name = names.value(int(i));
    allNames << (name.isEmpty() ? QString::fromStdString(m_logs[i].trial) : name);
  }
  m_curves->setTrials(allNames, all);
  if (!m_sweepKeys.empty()) setSweepKeys(m_sweepKeys);
}

void ComparisonWindow::setSweepKeys(const std::vector<std::string>& keys) {
  m_sweepKeys = keys;
  m_sweepModel->setTable(analysis::sweep_table(m_report.comparison.trials, keys));
  if (m_tabs->indexOf(m_sweepTab) < 0) m_tabs->insertTab(0, m_sweepTab, QStringLiteral("Sweep"));
  m_tabs->setCurrentWidget(m_sweepTab);
  updateSweepPlot();
}

void ComparisonWindow::updateSweepPlot() {
  m_sweepPlot->setTable(m_sweepModel->table(), SweepTableModel::Metric(m_sweepMetric->currentData().toInt()));
}

QString ComparisonWindow::throughputText() const { return m_throughput->text(); }

void ComparisonWindow::setReportable(bool reportable) {
  m_exportReport->setEnabled(reportable);
  if (!reportable)
    m_exportReport->setToolTip(QStringLiteral("Only trials stored in the session can be reported (a replay is not)"));
}

void ComparisonWindow::replotNow() {
  for (LivePlot* plot : {static_cast<LivePlot*>(m_breakdown), static_cast<LivePlot*>(m_steps),
                         static_cast<LivePlot*>(m_sweepPlot), static_cast<LivePlot*>(m_curves)})
    plot->replotIfDirty();
}

}  // namespace tunebench::ui
