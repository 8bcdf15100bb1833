// The documented `gllm-workbench --screenshot FILE.png [--panel NAME]` renders offscreen at least
// 1280×800; an unknown panel, a --size out of bounds and a queue file that cannot be read (a FIFO,
// an entry nested 200,000 deep) are refused or reported, never a crash or a hang.
#include <sys/stat.h>

#include <QtTest>

#include "tests/support/test_support.h"
#include "widgets/main_window.h"

using namespace gllm::gui;

class TestScreenshot : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void initTestCase() { qputenv("GLLM_WORKBENCH_NO_SETTINGS", "1"); }
  void mainWindowRendersEveryPanel() {
    QTemporaryDir dir;
    qputenv("GLLM_WORKBENCH_QUEUE", dir.filePath("queue.json").toUtf8());
    MainWindow::applyStyle();
    MainWindow w;
    const QStringList names = w.panelNames();
    for (const char* n : {"grades", "cone", "queue", "monitor", "heatmaps", "inspector", "compare",
                          "attention", "preset"})
      QVERIFY2(names.contains(n), n);
    for (const QString& n : names) QVERIFY(w.panel(n));
    const QString path = dir.filePath("shot.png");
    QVERIFY(w.saveScreenshot(path, "cone").isEmpty());
    QImage img(path);
    QVERIFY(img.width() >= 1280 && img.height() >= 800);
    QVERIFY(w.saveScreenshot(dir.filePath("x.png"), "nope").contains("unknown panel"));
  }
  void cliWritesPng() {
    const QString exe = QString::fromStdString(gllm::test::workbench_path());
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
  void cliRefusesSizesAndUnreadableQueues() {
    const QString exe = QString::fromStdString(gllm::test::workbench_path());
    if (exe.isEmpty() || !QFile::exists(exe)) QSKIP("gllm-workbench not built");
    QTemporaryDir dir;
    for (const char* size : {"100000x100000", "0x0", "-5x-5", "wide"}) {
      QProcess p;
      p.start(exe, {"--screenshot", dir.filePath("s.png"), "--size", size});
      QVERIFY(p.waitForFinished(60000));
      QCOMPARE(p.exitCode(), 1);
      QVERIFY2(QString(p.readAllStandardError()).contains("--size"), size);
      QVERIFY(!QFile::exists(dir.filePath("s.png")));
    }
    // A queue file nested 200,000 deep, then a FIFO as the queue file: the window still renders.
    for (const bool fifo : {false, true}) {
      const QString queue = dir.filePath(fifo ? "fifo.json" : "deep.json");
      if (fifo)
        QCOMPARE(::mkfifo(queue.toUtf8().constData(), 0644), 0);
      else
        gllm::test::write_text(queue.toStdString(), "{\"entries\": [" + std::string(200000, '[') +
                                                        std::string(200000, ']') + "]}");
      QProcess p;
      QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
      env.insert("GLLM_WORKBENCH_QUEUE", queue);
      p.setProcessEnvironment(env);
      p.start(exe, {"--screenshot", dir.filePath("q.png"), "--panel", "queue"});
      QVERIFY(p.waitForFinished(60000));
      QCOMPARE(p.exitCode(), 0);
    }
  }
  void cliWritesRunPlots() {
    // `--plot RUN --out DIR`: what scripts/start.sh writes after a headless run.
    const QString exe = QString::fromStdString(gllm::test::workbench_path());
    if (exe.isEmpty() || !QFile::exists(exe)) QSKIP("gllm-workbench not built");
    QTemporaryDir dir;
    QDir().mkpath(dir.filePath("run"));
    QFile metrics(dir.filePath("run/metrics.jsonl"));
    QVERIFY(metrics.open(QIODevice::WriteOnly));
    for (int step = 1; step <= 20; ++step)
      metrics.write(QStringLiteral("{\"step\":%1,\"tokens\":%2,\"loss\":%3,\"tokens_per_s\":1000,"
                                   "\"peak_mem_mib\":300}\n")
                        .arg(step)
                        .arg(step * 2048)
                        .arg(9.0 - 0.2 * step)
                        .toUtf8());
    metrics.write("{\"step\":20,\"tokens\":40960,\"val_bpb\":2.3}\n");
    metrics.close();
    QProcess p;
    p.start(exe, {"--plot", dir.filePath("run"), "--out", dir.filePath("plots")});
    QVERIFY(p.waitForFinished(60000));
    QVERIFY2(p.exitCode() == 0, p.readAllStandardError().constData());
    for (const char* f : {"curves-by-step.png", "curves-by-tokens.png"}) {
      QImage img(dir.filePath(QStringLiteral("plots/") + f));
      QVERIFY2(!img.isNull() && img.width() > 400, f);
    }
    // The two views really differ (the x axis is redrawn in tokens).
    QVERIFY(QImage(dir.filePath("plots/curves-by-step.png")) !=
            QImage(dir.filePath("plots/curves-by-tokens.png")));
    QFile csv(dir.filePath("plots/curves.csv"));
    QVERIFY(csv.open(QIODevice::ReadOnly));
    QVERIFY(csv.readAll().count('\n') >= 21);  // header + 20 loss points at least
    // A folder without metrics is refused with a message, not a crash.
    QProcess bad;
    bad.start(exe, {"--plot", dir.filePath("nothing-here"), "--out", dir.filePath("p2")});
    QVERIFY(bad.waitForFinished(60000));
    QVERIFY(bad.exitCode() != 0);
    QVERIFY(bad.readAllStandardError().contains("metrics.jsonl"));
  }
};

QTEST_MAIN(TestScreenshot)
#include "test_widgets_screenshot.moc"
