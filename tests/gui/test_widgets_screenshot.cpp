// The documented `gllm-workbench --screenshot FILE.png [--panel NAME]` renders offscreen at least
// 1280×800; an unknown panel is refused with the list of panels.
#include <QtTest>

#include "widgets/main_window.h"

using namespace gllm::gui;

class TestScreenshot : public QObject {
  Q_OBJECT
 private slots:
  void initTestCase() { qputenv("GLLM_WORKBENCH_NO_SETTINGS", "1"); }
  void mainWindowRendersEveryPanel() {
    QTemporaryDir dir;
    qputenv("GLLM_WORKBENCH_QUEUE", dir.filePath("queue.json").toUtf8());
    MainWindow::applyStyle();
    MainWindow w;
    const QStringList names = w.panelNames();
    for (const char* n : {"grades", "cone", "queue", "monitor", "heatmaps", "inspector", "compare", "attention", "preset"})
      QVERIFY2(names.contains(n), n);
    for (const QString& n : names) QVERIFY(w.panel(n));
    const QString path = dir.filePath("shot.png");
    QVERIFY(w.saveScreenshot(path, "cone").isEmpty());
    QImage img(path);
    QVERIFY(img.width() >= 1280 && img.height() >= 800);
    QVERIFY(w.saveScreenshot(dir.filePath("x.png"), "nope").contains("unknown panel"));
  }
  void cliWritesPng() {
    const QString exe = QStringLiteral(GLLM_WORKBENCH_PATH);
    if (exe.isEmpty() || !QFile::exists(exe)) QSKIP("gllm-workbench not built");
    QTemporaryDir dir;
    QProcess p;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert("GLLM_WORKBENCH_QUEUE", dir.filePath("queue.json"));
    p.setProcessEnvironment(env);
    p.start(exe, {"--screenshot", dir.filePath("w.png"), "--panel", "monitor"});
    QVERIFY(p.waitForFinished(60000));
    QCOMPARE(p.exitCode(), 0);
    QImage img(dir.filePath("w.png"));
    QVERIFY(img.width() >= 1280 && img.height() >= 800);
  }
};

QTEST_MAIN(TestScreenshot)
#include "test_widgets_screenshot.moc"
