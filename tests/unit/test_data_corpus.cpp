// Corpus readers: Brown Form C structure (documents, paragraphs, sentences, word/tag, genre), the
// detokenizer's exact output and word spans, plain text files/folders, and refusals naming
// file:line.
#include <unistd.h>

#include <QTemporaryDir>
#include <QtTest>
#include <filesystem>
#include <fstream>

#include "engine/data/corpus.h"
#include "engine/io/error.h"
#include "tests/support/test_support.h"

using gllm::test::error_of;

namespace fs = std::filesystem;

namespace {
void write(const std::string& path, const std::string& data) {
  fs::create_directories(fs::path(path).parent_path());
  std::ofstream(path, std::ios::binary) << data;
}
}  // namespace

class TestDataCorpus : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void brownStructure() {
    auto c = gllm::read_brown_corpus(gllm::test::fixture("brown_mini"));
    QCOMPARE(c.kind, std::string("brown"));
    QCOMPARE(c.documents.size(), size_t(8));
    const auto& d = c.documents[0];
    QCOMPARE(d.name, std::string("ca01"));
    QCOMPARE(d.genre, std::string("a"));
    QCOMPARE(c.documents[3].genre, std::string("k"));
    QCOMPARE(d.paragraphs, 3);
    QCOMPARE(d.sentences.size(), size_t(4));
    QCOMPARE(d.sentences[1].paragraph, 1);
    QCOMPARE(d.sentences[2].paragraph, 1);
    QCOMPARE(d.sentences[3].paragraph, 2);
    QCOMPARE(d.sentences[2].line, 7);
    QCOMPARE(d.sentences[0].words[1].word, std::string("Fulton"));
    QCOMPARE(d.sentences[0].words[1].tag, std::string("np-tl"));
    QCOMPARE(d.sentences[0].words[10].tag, std::string("np$"));
    // Counted by hand from the fixture: 25 + 11 + 13 + 13 tokens in ca01.
    size_t w0 = 0;
    for (auto& s : d.sentences) w0 += s.words.size();
    QCOMPARE(w0, size_t(25 + 11 + 13 + 13));
  }

  void detokenizedText() {
    auto c = gllm::read_brown_corpus(gllm::test::fixture("brown_mini"));
    const std::string expect =
        "The Fulton County Grand Jury said Friday an investigation of Atlanta's recent primary "
        "election "
        "produced \"no evidence\" that any irregularities took place.\n"
        "The jury further said it did not find many reports. \"Only a relative handful was "
        "received\", "
        "the jury said.\n"
        "All voters (in the city) were happy; nobody complained.";
    QCOMPARE(c.documents[0].text, expect);
    QCOMPARE(c.documents[3].text,
             std::string("She opened the door slowly. \"Who is there?\" she asked.\n"
                         "Nobody answered, and she wasn't sure why."));
    // Every word's span points at its surface form in the text.
    for (const auto& doc : c.documents)
      for (const auto& s : doc.sentences)
        for (const auto& w : s.words) {
          std::string surf = doc.text.substr(w.begin, w.end - w.begin);
          std::string want = (w.word == "``" || w.word == "''") ? "\"" : w.word;
          QCOMPARE(surf, want);
        }
    QCOMPARE(c.bytes(), [&] {
      size_t n = 0;
      for (auto& d : c.documents) n += d.text.size();
      return n;
    }());
  }

  void hashTracksContent() {
    QTemporaryDir dir;
    std::string root = dir.filePath("b").toStdString();
    fs::copy(gllm::test::fixture("brown_mini"), root);
    auto h1 = gllm::read_brown_corpus(root).hash();
    QCOMPARE(gllm::read_brown_corpus(root).hash(), h1);
    std::ofstream(root + "/cp08", std::ios::app) << "\tOne/cd more/ap ./.\n";
    QVERIFY(gllm::read_brown_corpus(root).hash() != h1);
  }

  void brownRefusals() {
    QTemporaryDir dir;
    std::string root = dir.filePath("b").toStdString();
    write(root + "/ca01", "\n\n\tGood/jj line/nn ./.\n\n\n\tBad\xff/nn here/rb ./.\n");
    std::string m = error_of([&] { gllm::read_brown_corpus(root); });
    QVERIFY2(m.find(root + "/ca01:6") != std::string::npos && m.find("UTF-8") != std::string::npos,
             m.c_str());
    write(root + "/ca01", "\n\n\tGood/jj line/nn ./.\nno_slash here/rb\n");
    m = error_of([&] { gllm::read_brown_corpus(root); });
    QVERIFY2(m.find("ca01:4") != std::string::npos && m.find("word/TAG") != std::string::npos,
             m.c_str());
    write(root + "/ca01", "\n\n\n");
    m = error_of([&] { gllm::read_brown_corpus(root); });
    QVERIFY2(m.find("ca01:1") != std::string::npos && m.find("empty") != std::string::npos,
             m.c_str());
    m = error_of([&] { gllm::read_brown_corpus(dir.filePath("missing").toStdString()); });
    QVERIFY2(m.find("gllm data fetch") != std::string::npos, m.c_str());
  }

  void textFileAndFolder() {
    QTemporaryDir dir;
    std::string f = dir.filePath("one.txt").toStdString();
    write(f, "First  doc,\tline one.\nline two é 日本 🙂\n\n\n Second doc.\n\nThird\r\n");
    auto c = gllm::read_text_corpus(f);
    QCOMPARE(c.documents.size(), size_t(3));
    QCOMPARE(c.documents[0].text, std::string("First  doc,\tline one.\nline two é 日本 🙂"));
    QCOMPARE(c.documents[1].text, std::string(" Second doc."));
    QCOMPARE(c.documents[2].text, std::string("Third\r"));
    QCOMPARE(c.words(), size_t(9 + 2 + 1));
    std::string folder = dir.filePath("f").toStdString();
    write(folder + "/b.txt", "beta text\n\nwith a blank line\n");
    write(folder + "/a/z.md", "alpha\n");
    auto cf = gllm::read_text_corpus(folder);
    QCOMPARE(cf.documents.size(), size_t(2));
    QCOMPARE(cf.documents[0].name, std::string("a/z.md"));
    QCOMPARE(cf.documents[1].text, std::string("beta text\n\nwith a blank line\n"));
  }

  void textRefusals() {
    QTemporaryDir dir;
    std::string f = dir.filePath("bad.txt").toStdString();
    write(f, "ok line\nsecond ok\nthird has \xc3\x28 broken\n");
    std::string m = error_of([&] { gllm::read_text_corpus(f); });
    QVERIFY2(m.find(f + ":3") != std::string::npos && m.find("UTF-8") != std::string::npos,
             m.c_str());
    write(f, "   \n\n\t\n");
    m = error_of([&] { gllm::read_text_corpus(f); });
    QVERIFY2(m.find(f + ":1") != std::string::npos && m.find("empty") != std::string::npos,
             m.c_str());
    std::string folder = dir.filePath("f").toStdString();
    write(folder + "/good.txt", "fine\n");
    write(folder + "/empty.txt", "");
    m = error_of([&] { gllm::read_text_corpus(folder); });
    QVERIFY2(m.find("empty.txt:1") != std::string::npos, m.c_str());
    m = error_of([&] { gllm::read_text_corpus(dir.filePath("nope").toStdString()); });
    QVERIFY2(m.find("not found") != std::string::npos, m.c_str());
    // Unreadable file (permissions) names the file — skipped as root, who can read anything.
    if (geteuid() != 0) {
      write(f, "text\n");
      fs::permissions(f, fs::perms::none);
      m = error_of([&] { gllm::read_text_corpus(f); });
      QVERIFY2(m.find(f) != std::string::npos, m.c_str());
    }
  }

  void utf8Validator() {
    QCOMPARE(gllm::find_invalid_utf8("plain ascii"), std::string_view::npos);
    QCOMPARE(gllm::find_invalid_utf8("é日🙂"), std::string_view::npos);
    QCOMPARE(gllm::find_invalid_utf8("ab\xc0\xaf"), size_t(2));        // overlong '/'
    QCOMPARE(gllm::find_invalid_utf8("a\xed\xa0\x80"), size_t(1));     // surrogate
    QCOMPARE(gllm::find_invalid_utf8("ab\xe6\x97"), size_t(2));        // truncated
    QCOMPARE(gllm::find_invalid_utf8("\xf4\x90\x80\x80"), size_t(0));  // > U+10FFFF
  }
};

QTEST_APPLESS_MAIN(TestDataCorpus)
#include "test_data_corpus.moc"
