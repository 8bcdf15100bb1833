// The Data panel (issue 40, point 1): a corpus folder prepared in the background with a progress
// bar and news lines, its splits shown from the manifest, handed to the run settings; a stop that
// Prepare continues; shards made elsewhere imported; refusals and a broken input shown in the
// panel, never a crash.
#include <QDir>
#include <QProgressBar>
#include <QTableWidget>
#include <QtTest>
#include <fstream>

#include "engine/data/corpus.h"
#include "engine/dataset/dataset_manifest.h"
#include "tests/support/test_support.h"
#include "tests/support/workbench_env.h"
#include "widgets/data_panel.h"
#include "widgets/main_window.h"
#include "widgets/preset_form.h"

using namespace gllm;
using namespace gllm::gui;

namespace {

const int kTimeoutMs = 120000;

// `n` documents of Zipf-like words (a fixed LCG), one file per document in `dir`.
void writeCorpus(const QString& dir, int n) {
  QDir().mkpath(dir);
  uint64_t state = 0x9e3779b97f4a7c15ull;
  auto next = [&] {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return uint32_t(state >> 33);
  };
  for (int i = 0; i < n; ++i) {
    std::ofstream f(QDir(dir).filePath(QString("doc%1.txt").arg(i)).toStdString());
    const int words = 20 + int(next() % 60);
    for (int w = 0; w < words; ++w)
      f << (w ? " " : "") << "w" << (next() % 500) * (next() % 500) / 500;
    f << "\n";
  }
}

PrepareOptions smallOptions() {
  PrepareOptions o;
  o.vocab = 320;
  o.tokenizer_sample = 40000;
  o.val_tokens = 3000;
  o.heldout_tokens = 3000;
  o.shard_tokens = 4096;
  return o;
}

}  // namespace

class TestWidgetsData : public QObject {
  Q_OBJECT
  QTemporaryDir tmp_;

 private Q_SLOTS:
  void initTestCase() {
    QVERIFY(tmp_.isValid());
    test::isolate_workbench(tmp_);
    writeCorpus(tmp_.filePath("corpus"), 600);
  }

  void preparesAndHandsToRunSettings() {
    MainWindow w;
    auto* data = qobject_cast<DataPanel*>(w.panel(QStringLiteral("data")));
    auto* form = qobject_cast<PresetForm*>(w.panel(QStringLiteral("preset")));
    QVERIFY(data && form);
    // The first input names the default dataset folder in the data cache.
    data->setInputs({tmp_.filePath("corpus")});
    QCOMPARE(data->outputDir(), QDir(tmp_.filePath("data")).filePath("datasets/corpus"));
    PrepareOptions o = smallOptions();
    data->setOptions(o);
    const QString out = tmp_.filePath("ds");
    data->setOutputDir(out);
    QVERIFY(data->prepare().isEmpty());
    QVERIFY(data->busy());
    QTRY_VERIFY_WITH_TIMEOUT(!data->busy(), kTimeoutMs);
    QVERIFY2(data->lastError().isEmpty(), qPrintable(data->lastError()));
    QVERIFY(is_prepared_dataset(out.toStdString()));
    QCOMPARE(data->progressBar()->value(), data->progressBar()->maximum());
    QVERIFY(!data->logLines().isEmpty());  // the prepare's news reached the panel
    // The splits as the manifest says, documents adding up to the corpus.
    QTableWidget* t = data->splitsTable();
    QCOMPARE(t->rowCount(), 3);
    const nlohmann::json m = read_manifest(out.toStdString());
    uint64_t docs = 0;
    for (int r = 0; r < 3; ++r) {
      const std::string split = t->item(r, 0)->text().toStdString();
      const uint64_t n = m["splits"][split]["documents"].get<uint64_t>();
      QCOMPARE(t->item(r, 1)->text().remove(QLocale().groupSeparator()).toULongLong(),
               qulonglong(n));
      docs += n;
    }
    QCOMPARE(docs, uint64_t(600));
    QVERIFY(data->statusText().contains("Prepared"));
    // Use in run settings: the form trains from it.
    data->useInRunSettings();
    QCOMPARE(form->fieldText(QStringLiteral("data.corpus")), QStringLiteral("prepared"));
    QCOMPARE(form->fieldText(QStringLiteral("data.corpus_path")), out);
    QCOMPARE(form->fieldText(QStringLiteral("data.vocab_size")), QStringLiteral("320"));
    QCOMPARE(form->config().data.corpus, std::string("prepared"));
    // The same prepare again writes nothing and says so.
    QVERIFY(data->prepare().isEmpty());
    QTRY_VERIFY_WITH_TIMEOUT(!data->busy(), kTimeoutMs);
    QVERIFY2(data->statusText().contains("already prepared"), qPrintable(data->statusText()));
    // Open dataset… of it reads the manifest on a worker.
    DataPanel other;
    other.openDataset(out);
    QTRY_VERIFY_WITH_TIMEOUT(!other.busy(), kTimeoutMs);
    QCOMPARE(other.splitsTable()->rowCount(), 3);
    QCOMPARE(other.datasetDir(), out);
  }

  // Issue 40, point 2: the Brown corpus is a prepared dataset like any other, its POS tags kept
  // (the panel says so) for the profiles and the probe; it hands on to Run settings as any does.
  void preparesBrownWithItsTags() {
    MainWindow w;
    auto* data = qobject_cast<DataPanel*>(w.panel(QStringLiteral("data")));
    auto* form = qobject_cast<PresetForm*>(w.panel(QStringLiteral("preset")));
    QVERIFY(data && form);
    PrepareOptions o = smallOptions();
    o.inputs = {test::fixture("brown_mini")};
    o.format = "brown";
    o.val_tokens = o.heldout_tokens = 50;  // a document each of the fixture's eight
    o.out_dir = tmp_.filePath("brown-ds").toStdString();
    data->setOptions(o);
    QVERIFY(data->prepare().isEmpty());
    QTRY_VERIFY_WITH_TIMEOUT(!data->busy(), kTimeoutMs);
    QVERIFY2(data->lastError().isEmpty(), qPrintable(data->lastError()));
    const nlohmann::json m = read_manifest(o.out_dir);
    const uint64_t words = m["annotations"]["brown_pos_tags"]["words"].get<uint64_t>();
    QCOMPARE(words, uint64_t(read_brown_corpus(test::fixture("brown_mini")).words()));
    const QString note = QStringLiteral("POS tags kept (%1 words of 8 documents)")
                             .arg(QLocale().toString(qulonglong(words)));
    QVERIFY2(data->statusText().contains(note), qPrintable(data->statusText()));
    data->useInRunSettings();
    QCOMPARE(form->fieldText(QStringLiteral("data.corpus")), QStringLiteral("prepared"));
    // Opening it later says the same.
    DataPanel other;
    other.openDataset(QString::fromStdString(o.out_dir));
    QTRY_VERIFY_WITH_TIMEOUT(!other.busy(), kTimeoutMs);
    QVERIFY2(other.statusText().contains(note), qPrintable(other.statusText()));
  }

  // Issue 40, point 3: shards made elsewhere (here: the dataset above's own shards and model)
  // imported through the panel's "llm.c shards" format, in the background, then used.
  void importsShardsMadeElsewhere() {
    const QString from = tmp_.filePath("ds");
    QVERIFY(is_prepared_dataset(from.toStdString()));
    MainWindow w;
    auto* data = qobject_cast<DataPanel*>(w.panel(QStringLiteral("data")));
    auto* form = qobject_cast<PresetForm*>(w.panel(QStringLiteral("preset")));
    QVERIFY(data && form);
    data->setInputs({from});
    PrepareOptions o = smallOptions();
    o.format = "shards";
    data->setOptions(o);
    QVERIFY(data->importing());
    const QString out = tmp_.filePath("ds-imported");
    data->setOutputDir(out);
    QVERIFY2(data->prepare().contains("no tokenizer model"), "an import without its model started");
    data->setTokenizerModel(QDir(from).filePath("tokenizer.model"));
    QVERIFY(data->prepare().isEmpty());
    QTRY_VERIFY_WITH_TIMEOUT(!data->busy(), kTimeoutMs);
    QVERIFY2(data->lastError().isEmpty(), qPrintable(data->lastError()));
    const nlohmann::json a = read_manifest(from.toStdString());
    const nlohmann::json b = read_manifest(out.toStdString());
    auto docs = [](const nlohmann::json& m, const char* s) {
      return m["splits"][s]["documents"].get<uint64_t>();
    };
    // Validation is the val shards; train and held-out share what the train and held-out shards
    // held (held-out shards have no `val` in their name, so they count as train here).
    QCOMPARE(docs(b, "val"), docs(a, "val"));
    QCOMPARE(docs(b, "train") + docs(b, "heldout"), docs(a, "train") + docs(a, "heldout"));
    QVERIFY(b["splits"]["heldout"]["tokens"].get<uint64_t>() >= 3000);
    QCOMPARE(data->splitsTable()->rowCount(), 3);
    QVERIFY2(data->statusText().contains("Imported"), qPrintable(data->statusText()));
    data->useInRunSettings();
    QCOMPARE(form->fieldText(QStringLiteral("data.corpus_path")), out);
    QCOMPARE(form->fieldText(QStringLiteral("data.vocab_size")), QStringLiteral("320"));
  }

  void stopThenContinue() {
    writeCorpus(tmp_.filePath("bigger"), 4000);
    DataPanel data;
    data.setInputs({tmp_.filePath("bigger")});
    PrepareOptions o = smallOptions();
    o.shard_tokens = 1024;
    data.setOptions(o);
    const QString out = tmp_.filePath("ds-stop");
    data.setOutputDir(out);
    QVERIFY(data.prepare().isEmpty());
    data.stop();
    QTRY_VERIFY_WITH_TIMEOUT(!data.busy(), kTimeoutMs);
    if (!data.lastError().isEmpty()) {  // stopped before it finished (the usual case)
      QVERIFY2(data.lastError().contains("continues"), qPrintable(data.lastError()));
      QVERIFY(!is_prepared_dataset(out.toStdString()));
    }
    QVERIFY(data.prepare().isEmpty());
    QTRY_VERIFY_WITH_TIMEOUT(!data.busy(), kTimeoutMs);
    QVERIFY2(data.lastError().isEmpty(), qPrintable(data.lastError()));
    QVERIFY(is_prepared_dataset(out.toStdString()));
    QCOMPARE(data.splitsTable()->rowCount(), 3);
  }

  void refusalsAndBadInputAreShown() {
    DataPanel data;
    QVERIFY(data.prepare().contains("no input"));
    QVERIFY(!data.busy());
    data.setInputs({tmp_.filePath("missing.txt")});
    data.setOptions(smallOptions());
    data.setOutputDir(tmp_.filePath("ds-missing"));
    QVERIFY(data.prepare().isEmpty());
    QTRY_VERIFY_WITH_TIMEOUT(!data.busy(), kTimeoutMs);
    QVERIFY2(data.lastError().contains("missing.txt"), qPrintable(data.lastError()));
    // A folder that is no dataset: Open dataset… says so.
    data.openDataset(tmp_.filePath("corpus"));
    QTRY_VERIFY_WITH_TIMEOUT(!data.busy(), kTimeoutMs);
    QVERIFY2(!data.lastError().isEmpty(), "opening a corpus folder as a dataset was accepted");
  }
};

QTEST_MAIN(TestWidgetsData)
#include "test_widgets_data.moc"
