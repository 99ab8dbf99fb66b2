// Screenshots of the comparison window for docs/: the forum example (one RTX 4090 vs DDP on two),
// each tab. Run under Xvfb (docs/UI.md, "Comparison and diagnosis"):
//   tunebench-compare-screenshot OUT_PREFIX [WxH]
// writes OUT_PREFIX.png (comparison), OUT_PREFIX-diagnosis.png and OUT_PREFIX-sweep.png.
#include <QApplication>
#include <QTabWidget>
#include <QTest>

#include "tests/ui/compare/compare_test_util.h"
#include "ui/windows/comparison_window.h"

using namespace tunebench;

int main(int argc, char** argv) {
  QApplication app(argc, argv);
  if (argc < 2) {
    fprintf(stderr, "usage: %s OUT_PREFIX [WxH]\n", argv[0]);
    return 2;
  }
  const QString prefix = QString::fromLocal8Bit(argv[1]);
  QSize size(1600, 1000);
  if (argc > 2) {
    const QStringList wh = QString::fromLocal8Bit(argv[2]).split(QLatin1Char('x'));
    if (wh.size() == 2) size = QSize(wh[0].toInt(), wh[1].toInt());
  }
  auto grab = [&](QWidget& w, const QString& file) {
    w.resize(size);
    w.show();
    QTest::qWait(400);
    static_cast<ui::ComparisonWindow&>(w).replotNow();
    QTest::qWait(200);
    if (!w.grab().save(file)) {
      fprintf(stderr, "could not write %s\n", qPrintable(file));
      return false;
    }
    return true;
  };
  ui::ComparisonWindow window;
  window.setTrials({ui::test::forum_log("forum_single.jsonl"), ui::test::forum_log("forum_ddp.jsonl")});
  bool ok = grab(window, prefix + QStringLiteral(".png"));
  window.tabs()->setCurrentIndex(1);
  ok = grab(window, prefix + QStringLiteral("-diagnosis.png")) && ok;

  const protocol::TrialLog base = ui::test::forum_log("forum_ddp.jsonl");
  ui::ComparisonWindow sweep;
  sweep.setTrials({ui::test::with_knob(base, "bucket_mb", 25.0, "b25"), ui::test::with_knob(base, "bucket_mb", 50.0, "b50"),
                   ui::test::with_knob(base, "bucket_mb", 100.0, "b100")});
  sweep.setSweepKeys({"bucket_mb"});
  ok = grab(sweep, prefix + QStringLiteral("-sweep.png")) && ok;
  return ok ? 0 : 1;
}
