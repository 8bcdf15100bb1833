// gllm-workbench: the Qt 6 desktop workbench. `--screenshot FILE.png [--panel NAME]` renders the
// main window offscreen (≥ 1280×800); `--plot RUN --out DIR` writes a run's curves as PNG/SVG/CSV.
#include <QApplication>
#include <QCommandLineParser>
#include <QDir>
#include <QFileInfo>
#include <QTextStream>

#include "engine/config/run_config.h"
#include "engine/engine_info.h"
#include "engine/io/error.h"
#include "engine/runtime/runtime.h"
#include "widgets/main_window.h"
#include "widgets/monitor_panel.h"

namespace {

// Headless plots of one run's curves (loss, BPB, tokens/s, peak memory) against steps and tokens.
int plotRun(const QString& run, const QString& outDir) {
  QTextStream err(stderr);
  if (!QDir().mkpath(outDir)) {
    err << "gllm-workbench: cannot create " << outDir << "; check the path is writable\n";
    return 1;
  }
  gllm::gui::MonitorPanel monitor;
  monitor.resize(1400, 900);
  const QString name = QFileInfo(run).fileName();
  monitor.setRunFolder(name, QFileInfo(run).absoluteFilePath());
  const QString loadErr =
      monitor.loadMetricsFile(name, QDir(run).filePath(QStringLiteral("metrics.jsonl")));
  if (!loadErr.isEmpty()) {
    err << "gllm-workbench: " << loadErr << "\n";
    return 1;
  }
  QStringList written;
  const struct {
    gllm::gui::MonitorPanel::XAxis axis;
    const char* file;
  } views[] = {{gllm::gui::MonitorPanel::XAxis::Step, "curves-by-step"},
               {gllm::gui::MonitorPanel::XAxis::Tokens, "curves-by-tokens"}};
  for (const auto& v : views) {
    monitor.setXAxis(v.axis);
    monitor.redrawNow();
    // No event loop runs here: let the charts lay out (and delete any replaced axis) before
    // grabbing.
    QCoreApplication::sendPostedEvents(nullptr, QEvent::DeferredDelete);
    QCoreApplication::processEvents();
    for (const QString& ext : {QStringLiteral("png"), QStringLiteral("svg")}) {
      const QString path = QDir(outDir).filePath(QString::fromLatin1(v.file) + "." + ext);
      const QString e = ext == "png" ? monitor.exportPng(path) : monitor.exportSvg(path);
      if (!e.isEmpty()) {
        err << "gllm-workbench: " << e << "\n";
        return 1;
      }
      written << path;
    }
  }
  const QString csv = QDir(outDir).filePath(QStringLiteral("curves.csv"));
  const QString e = monitor.exportCsv(csv);
  if (!e.isEmpty()) {
    err << "gllm-workbench: " << e << "\n";
    return 1;
  }
  written << csv;
  for (const QString& w : written) QTextStream(stdout) << "wrote " << w << "\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  gllm::configure_allocator();  // before any thread takes an allocator arena
  // A screenshot needs no display: pick the offscreen platform before QApplication exists.
  bool screenshot = false;
  for (int i = 1; i < argc; ++i)
    if (QByteArray(argv[i]) == "--screenshot" || QByteArray(argv[i]).startsWith("--screenshot=") ||
        QByteArray(argv[i]) == "--plot" || QByteArray(argv[i]).startsWith("--plot="))
      screenshot = true;
  if (screenshot && !qEnvironmentVariableIsSet("QT_QPA_PLATFORM"))
    qputenv("QT_QPA_PLATFORM", "offscreen");
  if (screenshot) qputenv("GLLM_WORKBENCH_NO_SETTINGS", "1");

  QApplication app(argc, argv);
  QApplication::setApplicationName(QStringLiteral("gllm-workbench"));
  QApplication::setOrganizationName(QStringLiteral("gllm"));
  QApplication::setApplicationVersion(QString::fromStdString(gllm::engine_version()));

  QCommandLineParser parser;
  parser.setApplicationDescription(
      QStringLiteral("GLLM Workbench: grades, cone certificates, runs and audits"));
  parser.addHelpOption();
  parser.addVersionOption();
  QCommandLineOption shotOpt(
      QStringLiteral("screenshot"),
      QStringLiteral("Render the main window offscreen to FILE.png and exit."),
      QStringLiteral("FILE.png"));
  QCommandLineOption panelOpt(
      QStringLiteral("panel"),
      QStringLiteral("Panel to raise (with --screenshot): grades, cone, monitor, ..."),
      QStringLiteral("NAME"));
  QCommandLineOption sizeOpt(
      QStringLiteral("size"),
      QStringLiteral("Window size for --screenshot, WxH (1280x800 to 7680x4320)."),
      QStringLiteral("WxH"), QStringLiteral("1440x900"));
  QCommandLineOption plotOpt(
      QStringLiteral("plot"),
      QStringLiteral("Write the curves of run folder RUN as PNG, SVG and CSV (to --out) and exit."),
      QStringLiteral("RUN"));
  QCommandLineOption outOpt(QStringLiteral("out"),
                            QStringLiteral("Folder for --plot output (default RUN/plots)."),
                            QStringLiteral("DIR"));
  QCommandLineOption profilesOpt(
      QStringLiteral("profiles"),
      QStringLiteral("A `gllm profiles` file for the cone panel (default: the newest "
                     "profiles*.json in the data cache)."),
      QStringLiteral("FILE"));
  parser.addOption(profilesOpt);
  parser.addOption(plotOpt);
  parser.addOption(outOpt);
  parser.addOption(shotOpt);
  parser.addOption(panelOpt);
  parser.addOption(sizeOpt);
  parser.addPositionalArgument(QStringLiteral("RUN"),
                               QStringLiteral("Run folders to open (metrics, newest checkpoint)."),
                               QStringLiteral("[RUN...]"));
  parser.process(app);

  gllm::gui::MainWindow::applyStyle();
  if (parser.isSet(plotOpt)) {
    const QString run = parser.value(plotOpt);
    return plotRun(run, parser.isSet(outOpt) ? parser.value(outOpt)
                                             : QDir(run).filePath(QStringLiteral("plots")));
  }
  try {
    gllm::gui::MainWindow window;
    QObject::connect(&window, &gllm::gui::MainWindow::runOpenFailed,
                     [](const QString& run, const QString& err) {
                       QTextStream(stderr) << "gllm-workbench: " << run << ": " << err << "\n";
                     });
    if (parser.isSet(profilesOpt)) {
      const QString err = window.loadProfiles(parser.value(profilesOpt));
      if (!err.isEmpty()) {
        QTextStream(stderr) << "gllm-workbench: --profiles: " << err << "\n";
        return 1;
      }
    }
    for (const QString& run : parser.positionalArguments()) {
      const QString err = window.openRun(run);
      if (!err.isEmpty()) QTextStream(stderr) << "gllm-workbench: " << run << ": " << err << "\n";
    }
    if (parser.isSet(shotOpt)) {
      QSize size(1440, 900);
      if (parser.isSet(sizeOpt)) {
        // WxH within [1280, 7680] x [800, 4320]: a larger image would need gigabytes.
        const QStringList wh = parser.value(sizeOpt).split('x');
        bool okW = false, okH = false;
        const int w = wh.size() == 2 ? wh[0].toInt(&okW) : 0;
        const int h = wh.size() == 2 ? wh[1].toInt(&okH) : 0;
        if (!okW || !okH || w < 1280 || w > 7680 || h < 800 || h > 4320) {
          QTextStream(stderr) << "gllm-workbench: --size " << parser.value(sizeOpt)
                              << " is not WxH with W in [1280, 7680] and H in [800, 4320]; give "
                                 "for example --size 1440x900\n";
          return 1;
        }
        size = QSize(w, h);
      }
      const QString err =
          window.saveScreenshot(parser.value(shotOpt), parser.value(panelOpt), size);
      if (!err.isEmpty()) {
        QTextStream(stderr) << "gllm-workbench: " << err << "\n";
        return 1;
      }
      QTextStream(stdout) << "wrote " << parser.value(shotOpt) << "\n";
      return 0;
    }
    if (parser.isSet(panelOpt) && !window.showPanel(parser.value(panelOpt))) {
      QTextStream(stderr) << "gllm-workbench: unknown panel '" << parser.value(panelOpt)
                          << "'; choose one of: " << window.panelNames().join(QStringLiteral(", "))
                          << "\n";
      return 1;
    }
    window.fitToScreen();  // most of the screen's available area, unless a saved size exists
    window.show();
    return app.exec();
  } catch (const gllm::Error& e) {
    QTextStream(stderr) << "gllm-workbench: " << e.what() << "\n";
    return 1;
  }
}
