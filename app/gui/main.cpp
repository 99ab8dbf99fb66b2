// tunebench: the workbench window. Only argument wiring lives here; see ui/windows/main_window.h.
#include <cstdio>
#include <functional>
#include <memory>

#include <QApplication>
#include <QCommandLineParser>
#include <QFile>
#include <QFileInfo>
#include <QTimer>

#include <nlohmann/json.hpp>

#include "ui/models/trials_model.h"
#include "ui/runner/background_jobs.h"
#include "ui/windows/live_view.h"
#include "ui/windows/main_window.h"
#include "ui/windows/session_controller.h"
#include "ui/windows/theme.h"
#include "ui/windows/trial_form.h"

namespace {

struct Options {
  QCommandLineOption worker{QStringLiteral("worker"),
                            QStringLiteral("Worker program (default: $TUNEBENCH_WORKER, else next to this program)."),
                            QStringLiteral("path")};
  QCommandLineOption preset{QStringLiteral("preset"),
                            QStringLiteral("Start with this trial preset (cpu-tiny, 7b-ddp, ...)."),
                            QStringLiteral("name")};
  QCommandLineOption configFile{
      QStringLiteral("config"),
      QStringLiteral("Load this trial configuration (JSON, as tunebench-worker --print-config writes) into the form."),
      QStringLiteral("json")};
  QCommandLineOption run{QStringLiteral("run"), QStringLiteral("Run the trial in the form at start.")};
  QCommandLineOption replay{QStringLiteral("replay"), QStringLiteral("Replay a recorded .jsonl event log at start."),
                            QStringLiteral("file")};
  QCommandLineOption speed{QStringLiteral("speed"),
                           QStringLiteral("Replay speed; 1 = as recorded, 0 = as fast as possible (default 1)."),
                           QStringLiteral("x"), QStringLiteral("1")};
  QCommandLineOption fresh{QStringLiteral("no-restore"),
                           QStringLiteral("Neither restore nor save the window layout and last trial.")};
  QCommandLineOption screenshot{QStringLiteral("screenshot"),
                                QStringLiteral("Save a PNG of the window after --screenshot-after, then quit."),
                                QStringLiteral("png")};
  QCommandLineOption after{QStringLiteral("screenshot-after"),
                           QStringLiteral("When to take the screenshot: a delay in ms (default 3000), or "
                                          "'finished': once the trial --run started has ended and is saved."),
                           QStringLiteral("ms|finished"), QStringLiteral("3000")};
  QCommandLineOption session{QStringLiteral("open"),
                             QStringLiteral("Open this session file (created when missing). (Not --session: "
                                            "QGuiApplication takes that one for X11 session management.)"),
                             QStringLiteral("file")};
  QCommandLineOption select{
      QStringLiteral("select"),
      QStringLiteral("Select these rows of the trials table (comma-separated, from 0) once the session is open."),
      QStringLiteral("rows")};
  QCommandLineOption size{QStringLiteral("size"), QStringLiteral("Window size WIDTHxHEIGHT."), QStringLiteral("WxH")};
  QCommandLineOption theme{QStringLiteral("theme"),
                           QStringLiteral("system (follow the desktop, the default), light or dark."),
                           QStringLiteral("name")};

  void addTo(QCommandLineParser& parser) const {
    parser.setApplicationDescription(
        QStringLiteral("Tunebench: run short instrumented training trials and watch every rank's step phases live."));
    parser.addHelpOption();
    parser.addVersionOption();
    for (const auto& o :
         {worker, preset, configFile, run, replay, speed, fresh, session, select, screenshot, after, size, theme})
      parser.addOption(o);
  }
};

void set_names() {
  QCoreApplication::setOrganizationName(QStringLiteral("tunebench"));
  QCoreApplication::setApplicationName(QStringLiteral("tunebench"));
  QCoreApplication::setApplicationVersion(QStringLiteral("0.1.0"));
}

bool asks_for_text_only(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const QByteArray a(argv[i]);
    if (a == "-h" || a == "--help" || a == "--help-all" || a == "-v" || a == "--version" || a == "-?") return true;
  }
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  const Options options;
  // --help and --version need no display: answer them before a QApplication connects to one
  // (without X or Wayland it would abort).
  if (asks_for_text_only(argc, argv)) {
    QCoreApplication core(argc, argv);
    set_names();
    QCommandLineParser parser;
    options.addTo(parser);
    parser.process(core);  // prints and exits
    return 0;
  }

  QApplication app(argc, argv);
  set_names();
  QApplication::setDesktopFileName(QStringLiteral("tunebench"));
  tunebench::ui::remember_system_theme();

  QCommandLineParser parser;
  options.addTo(parser);
  parser.process(app);

  if (parser.isSet(options.theme))
    tunebench::ui::apply_theme(tunebench::ui::theme_from_string(parser.value(options.theme)));
  tunebench::ui::MainWindow::Options windowOptions;
  windowOptions.workerProgram = parser.value(options.worker);
  windowOptions.useSettings = !parser.isSet(options.fresh);
  windowOptions.sessionPath = parser.value(options.session);
  tunebench::ui::MainWindow window(windowOptions);
  if (parser.isSet(options.theme))
    tunebench::ui::apply_theme(tunebench::ui::theme_from_string(parser.value(options.theme)));
  if (parser.isSet(options.preset) && !window.form()->applyPreset(parser.value(options.preset)))
    qWarning("unknown preset %s", qPrintable(parser.value(options.preset)));
  if (parser.isSet(options.configFile)) {
    QFile f(parser.value(options.configFile));
    const auto json = f.open(QIODevice::ReadOnly) ? nlohmann::json::parse(f.readAll().toStdString(), nullptr, false)
                                                  : nlohmann::json();
    const auto parsed = tunebench::config::from_json(json.is_object() ? json : nlohmann::json::object());
    if (!json.is_object() || !parsed.ok())
      qWarning("could not load the configuration %s", qPrintable(parser.value(options.configFile)));
    else
      window.form()->setConfig(parsed.config);
  }
  if (parser.isSet(options.size)) {
    const QStringList wh = parser.value(options.size).split('x');
    if (wh.size() == 2) window.resize(wh[0].toInt(), wh[1].toInt());
  }
  window.show();
  // --run and --replay wait for --open: the session opens in the background, and a trial started
  // before would be recorded in the throw-away session the window holds meanwhile.
  auto whenOpen = [&window](std::function<void()> then) {
    auto* poll = new QTimer(&window);
    poll->setInterval(20);
    QObject::connect(poll, &QTimer::timeout, &window, [&window, poll, then] {
      if (window.jobs()->isBusy()) return;
      poll->stop();
      poll->deleteLater();
      then();
    });
    poll->start();
  };
  auto refused = std::make_shared<std::function<void()>>();  // set by --screenshot-after finished
  if (parser.isSet(options.replay)) {
    const QString path = parser.value(options.replay);
    const double x = parser.value(options.speed).toDouble();
    whenOpen([&window, path, x] { window.replayLog(path, x); });
  } else if (parser.isSet(options.run)) {
    // A trial the window refuses (problems in the form) never finishes: a screenshot waiting for
    // it is taken at once, and the exit status says it did not run. Nor does a trial run when the
    // --open file was refused: it would land in a throw-away session, not in the user's file.
    const QString wanted = parser.isSet(options.session) ? QFileInfo(parser.value(options.session)).absoluteFilePath()
                                                         : QString();
    whenOpen([&window, refused, wanted] {
      if (!wanted.isEmpty() && QFileInfo(window.session()->path()).absoluteFilePath() != wanted) {
        std::fprintf(stderr, "tunebench: %s was not opened (the window says why); the trial was not run\n",
                     qPrintable(wanted));
        if (*refused) (*refused)();
        return;
      }
      if (!window.runTrial() && *refused) (*refused)();
    });
  }
  if (parser.isSet(options.select)) {
    // Once the session's trials are in the table (opening is a background job).
    const QStringList rows = parser.value(options.select).split(QLatin1Char(','));
    auto* poll = new QTimer(&window);
    poll->setInterval(100);
    QObject::connect(poll, &QTimer::timeout, &window, [&window, rows, poll] {
      if (window.trialsModel()->rowCount() == 0) return;
      poll->stop();
      window.selectRows(rows);
    });
    poll->start();
  }
  if (parser.isSet(options.screenshot)) {
    const QString png = parser.value(options.screenshot);
    auto shoot_and_exit = [&window, png](bool ran) {
      window.liveView()->replotNow();
      const bool ok = window.grab().save(png);
      if (!ok) qWarning("could not write %s", qPrintable(png));
      window.close();
      QApplication::exit(ok && ran ? 0 : 1);
    };
    auto shoot = [shoot_and_exit] { shoot_and_exit(true); };
    const QString when = parser.value(options.after);
    bool isNumber = false;
    const int ms = when.toInt(&isNumber);
    if (when == QLatin1String("finished")) {
      if (!parser.isSet(options.run)) {
        std::fprintf(stderr, "tunebench: --screenshot-after finished needs --run (the trial it waits for)\n");
        return 2;
      }
      // After the trial's end, once its last writes to the session are done (background jobs).
      QObject::connect(&window, &tunebench::ui::MainWindow::trialFinished, &window,
                       [whenOpen, shoot] { whenOpen(shoot); }, Qt::SingleShotConnection);
      *refused = [shoot_and_exit] {
        std::fprintf(stderr, "tunebench: the trial did not start (the reason is in the screenshot)\n");
        shoot_and_exit(false);
      };
    } else if (isNumber && ms >= 0) {
      QTimer::singleShot(ms, &window, shoot);
    } else {
      std::fprintf(stderr, "tunebench: --screenshot-after takes milliseconds or 'finished', not '%s'\n",
                   qPrintable(when));
      return 2;
    }
  }
  return app.exec();
}
