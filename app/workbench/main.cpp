// gllm-workbench: the Qt 6 desktop workbench. `--screenshot FILE.png [--panel NAME]` renders the
// main window offscreen (≥ 1280×800) and exits, for documentation and tests.
#include <QApplication>
#include <QCommandLineParser>
#include <QTextStream>

#include "engine/config/run_config.h"
#include "engine/engine_info.h"
#include "engine/io/error.h"
#include "widgets/main_window.h"

int main(int argc, char** argv) {
  // A screenshot needs no display: pick the offscreen platform before QApplication exists.
  bool screenshot = false;
  for (int i = 1; i < argc; ++i)
    if (QByteArray(argv[i]) == "--screenshot" || QByteArray(argv[i]).startsWith("--screenshot=")) screenshot = true;
  if (screenshot && !qEnvironmentVariableIsSet("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
  if (screenshot) qputenv("GLLM_WORKBENCH_NO_SETTINGS", "1");

  QApplication app(argc, argv);
  QApplication::setApplicationName(QStringLiteral("gllm-workbench"));
  QApplication::setOrganizationName(QStringLiteral("gllm"));
  QApplication::setApplicationVersion(QString::fromStdString(gllm::engine_version()));

  QCommandLineParser parser;
  parser.setApplicationDescription(QStringLiteral("GLLM Workbench: grades, cone certificates, runs and audits"));
  parser.addHelpOption();
  parser.addVersionOption();
  QCommandLineOption shotOpt(QStringLiteral("screenshot"), QStringLiteral("Render the main window offscreen to FILE.png and exit."),
                             QStringLiteral("FILE.png"));
  QCommandLineOption panelOpt(QStringLiteral("panel"), QStringLiteral("Panel to raise (with --screenshot): grades, cone, monitor, ..."),
                              QStringLiteral("NAME"));
  QCommandLineOption sizeOpt(QStringLiteral("size"), QStringLiteral("Window size for --screenshot, WxH (at least 1280x800)."),
                             QStringLiteral("WxH"), QStringLiteral("1440x900"));
  parser.addOption(shotOpt);
  parser.addOption(panelOpt);
  parser.addOption(sizeOpt);
  parser.addPositionalArgument(QStringLiteral("RUN"), QStringLiteral("Run folders to open (metrics, newest checkpoint)."),
                               QStringLiteral("[RUN...]"));
  parser.process(app);

  gllm::gui::MainWindow::applyStyle();
  try {
    gllm::gui::MainWindow window;
    for (const QString& run : parser.positionalArguments()) {
      const QString err = window.openRun(run);
      if (!err.isEmpty()) QTextStream(stderr) << "gllm-workbench: " << run << ": " << err << "\n";
    }
    if (parser.isSet(shotOpt)) {
      QSize size(1440, 900);
      const QStringList wh = parser.value(sizeOpt).split('x');
      if (wh.size() == 2) size = QSize(wh[0].toInt(), wh[1].toInt());
      const QString err = window.saveScreenshot(parser.value(shotOpt), parser.value(panelOpt), size);
      if (!err.isEmpty()) {
        QTextStream(stderr) << "gllm-workbench: " << err << "\n";
        return 1;
      }
      QTextStream(stdout) << "wrote " << parser.value(shotOpt) << "\n";
      return 0;
    }
    if (parser.isSet(panelOpt) && !window.showPanel(parser.value(panelOpt))) {
      QTextStream(stderr) << "gllm-workbench: unknown panel '" << parser.value(panelOpt) << "'; choose one of: "
                          << window.panelNames().join(QStringLiteral(", ")) << "\n";
      return 1;
    }
    window.resize(1440, 900);
    window.show();
    return app.exec();
  } catch (const gllm::Error& e) {
    QTextStream(stderr) << "gllm-workbench: " << e.what() << "\n";
    return 1;
  }
}
