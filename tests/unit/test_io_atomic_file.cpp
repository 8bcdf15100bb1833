// Atomic writes: the target is replaced whole, an uncommitted writer leaves no trace, and
// errors name the file.
#include <QTemporaryDir>
#include <QtTest>
#include <filesystem>

#include "engine/io/atomic_file.h"
#include "engine/io/error.h"

class TestAtomicFile : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void replacesWhole() {
    QTemporaryDir dir;
    std::string path = dir.filePath("a.json").toStdString();
    gllm::write_file_atomic(path, "old");
    gllm::write_file_atomic(path, "new contents");
    QCOMPARE(QString::fromStdString(gllm::read_file(path)), QString("new contents"));
    int files = 0;
    for (auto& e : std::filesystem::directory_iterator(dir.path().toStdString())) {
      (void)e;
      ++files;
    }
    QCOMPARE(files, 1);  // no temporary left behind
  }
  void abandonedWriterLeavesTargetUntouched() {
    QTemporaryDir dir;
    std::string path = dir.filePath("b.bin").toStdString();
    gllm::write_file_atomic(path, "keep me");
    {
      gllm::AtomicFileWriter w(path);
      w.write("partial", 7);
      // destroyed without commit(), as when an exception unwinds a checkpoint write
    }
    QCOMPARE(QString::fromStdString(gllm::read_file(path)), QString("keep me"));
    int files = 0;
    for (auto& e : std::filesystem::directory_iterator(dir.path().toStdString())) {
      (void)e;
      ++files;
    }
    QCOMPARE(files, 1);
  }
  void errorsNameTheFile() {
    try {
      gllm::write_file_atomic("/nonexistent-dir/x.json", "x");
      QFAIL("expected an error");
    } catch (const gllm::Error& e) {
      QVERIFY(std::string(e.what()).find("/nonexistent-dir/x.json") != std::string::npos);
    }
    QVERIFY_THROWS_EXCEPTION(gllm::Error, gllm::read_file("/nonexistent-dir/y"));
  }
  void appendLine() {
    QTemporaryDir dir;
    std::string path = dir.filePath("m.jsonl").toStdString();
    gllm::append_line(path, "{\"step\":1}");
    gllm::append_line(path, "{\"step\":2}");
    QCOMPARE(QString::fromStdString(gllm::read_file(path)),
             QString("{\"step\":1}\n{\"step\":2}\n"));
  }
};

QTEST_APPLESS_MAIN(TestAtomicFile)
#include "test_io_atomic_file.moc"
