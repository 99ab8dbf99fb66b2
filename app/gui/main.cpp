// tunebench: the workbench window. Only argument wiring lives here; see ui/windows/main_window.h.
#include <QApplication>
#include <QCommandLineParser>
#include <QFile>
#include <QTimer>

#include <nlohmann/json.hpp>

#include "ui/windows/live_view.h"
#include "ui/windows/main_window.h"
#include "ui/windows/trial_form.h"

int main(int argc, char** argv) {
  QApplication app(argc, argv);
  QApplication::setOrganizationName(QStringLiteral("tunebench"));
  QApplication::setApplicationName(QStringLiteral("tunebench"));
  QApplication::setApplicationVersion(QStringLiteral("0.1.0"));
  QApplication::setDesktopFileName(QStringLiteral("tunebench"));

  QCommandLineParser parser;
  parser.setApplicationDescription(QStringLiteral("Tunebench: run short instrumented training trials and watch every rank's step phases live."));
  parser.addHelpOption();
  parser.addVersionOption();
  const QCommandLineOption worker(QStringLiteral("worker"), QStringLiteral("Worker program (default: $TUNEBENCH_WORKER, else next to this program)."), QStringLiteral("path"));
  const QCommandLineOption preset(QStringLiteral("preset"), QStringLiteral("Start with this trial preset (cpu-tiny, 7b-ddp, ...)."), QStringLiteral("name"));
  const QCommandLineOption configFile(QStringLiteral("config"), QStringLiteral("Load this trial configuration (JSON, as tunebench-worker --print-config writes) into the form."), QStringLiteral("json"));
  const QCommandLineOption run(QStringLiteral("run"), QStringLiteral("Run the trial in the form at start."));
  const QCommandLineOption replay(QStringLiteral("replay"), QStringLiteral("Replay a recorded .jsonl event log at start."), QStringLiteral("file"));
  const QCommandLineOption speed(QStringLiteral("speed"), QStringLiteral("Replay speed; 1 = as recorded, 0 = as fast as possible (default 1)."), QStringLiteral("x"), QStringLiteral("1"));
  const QCommandLineOption fresh(QStringLiteral("no-restore"), QStringLiteral("Neither restore nor save the window layout and last trial."));
  const QCommandLineOption screenshot(QStringLiteral("screenshot"), QStringLiteral("Save a PNG of the window after --screenshot-after ms, then quit."), QStringLiteral("png"));
  const QCommandLineOption after(QStringLiteral("screenshot-after"), QStringLiteral("Delay before the screenshot in ms (default 3000)."), QStringLiteral("ms"), QStringLiteral("3000"));
  const QCommandLineOption session(QStringLiteral("open"), QStringLiteral("Open this session file (created when missing). (Not --session: QGuiApplication takes that one for X11 session management.)"), QStringLiteral("file"));
  const QCommandLineOption size(QStringLiteral("size"), QStringLiteral("Window size WIDTHxHEIGHT."), QStringLiteral("WxH"));
  for (const auto& o : {worker, preset, configFile, run, replay, speed, fresh, session, screenshot, after, size}) parser.addOption(o);
  parser.process(app);

  tunebench::ui::MainWindow::Options options;
  options.workerProgram = parser.value(worker);
  options.useSettings = !parser.isSet(fresh);
  options.sessionPath = parser.value(session);
  tunebench::ui::MainWindow window(options);
  if (parser.isSet(preset) && !window.form()->applyPreset(parser.value(preset)))
    qWarning("unknown preset %s", qPrintable(parser.value(preset)));
  if (parser.isSet(configFile)) {
    QFile f(parser.value(configFile));
    const auto json = f.open(QIODevice::ReadOnly) ? nlohmann::json::parse(f.readAll().toStdString(), nullptr, false) : nlohmann::json();
    const auto parsed = tunebench::config::from_json(json.is_object() ? json : nlohmann::json::object());
    if (!json.is_object() || !parsed.ok()) qWarning("could not load the configuration %s", qPrintable(parser.value(configFile)));
    else window.form()->setConfig(parsed.config);
  }
  if (parser.isSet(size)) {
    const QStringList wh = parser.value(size).split('x');
    if (wh.size() == 2) window.resize(wh[0].toInt(), wh[1].toInt());
  }
  window.show();
  if (parser.isSet(replay)) {
    const QString path = parser.value(replay);
    const double x = parser.value(speed).toDouble();
    QTimer::singleShot(0, &window, [&window, path, x] { window.replayLog(path, x); });
  } else if (parser.isSet(run)) {
    QTimer::singleShot(0, &window, [&window] { window.runTrial(); });
  }
  if (parser.isSet(screenshot)) {
    const QString png = parser.value(screenshot);
    QTimer::singleShot(parser.value(after).toInt(), &window, [&window, png] {
      window.liveView()->replotNow();
      const bool ok = window.grab().save(png);
      if (!ok) qWarning("could not write %s", qPrintable(png));
      window.close();
      QApplication::exit(ok ? 0 : 1);
    });
  }
  return app.exec();
}
