// The readers of `gllm data prepare`: plain, gzip (zlib) and zstd (libzstd) streams give the same
// documents; JSON Lines fields and bad lines; the UTF-8 rule; truncation, FIFOs, loops, no input.
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#include <QTemporaryDir>
#include <QtTest>
#include <filesystem>
#include <fstream>

#include "engine/dataset/byte_stream.h"
#include "engine/dataset/document_reader.h"
#include "engine/dataset/inputs.h"
#include "engine/dataset/prepare.h"
#include "engine/io/error.h"
#include "tests/support/test_support.h"

using gllm::test::error_of;
namespace fs = std::filesystem;

namespace {

void write(const std::string& path, const std::string& data) {
  fs::create_directories(fs::path(path).parent_path());
  std::ofstream(path, std::ios::binary) << data;
}

std::string gzip_bytes(const std::string& s) {
  z_stream zs{};
  if (deflateInit2(&zs, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) return "";
  std::string out(compressBound(uLong(s.size())) + 64, '\0');
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(s.data()));
  zs.avail_in = uInt(s.size());
  zs.next_out = reinterpret_cast<Bytef*>(&out[0]);
  zs.avail_out = uInt(out.size());
  deflate(&zs, Z_FINISH);
  out.resize(zs.total_out);
  deflateEnd(&zs);
  return out;
}

std::string zstd_bytes(const std::string& s) {
  std::string out(ZSTD_compressBound(s.size()), '\0');
  size_t n = ZSTD_compress(&out[0], out.size(), s.data(), s.size(), 3);
  out.resize(ZSTD_isError(n) ? 0 : n);
  return out;
}

gllm::InputFile input(const std::string& path, bool in_folder = false) {
  gllm::InputFile f;
  f.path = f.name = path;
  f.format = gllm::input_format_for(path, "auto");
  f.in_folder = in_folder;
  return f;
}

std::vector<std::string> docs_of(const gllm::InputFile& f, gllm::DocumentReadOptions o,
                                 gllm::DocumentReadCounts* counts = nullptr) {
  std::vector<std::string> out;
  gllm::DocumentReadCounts c;
  gllm::read_documents(f, o, c, nullptr, [&](std::string& t) { out.push_back(t); });
  if (counts) *counts = c;
  return out;
}

// A text of many paragraphs, large enough that the decoders refill their buffers several times.
std::string paragraphs(int n) {
  std::string s;
  for (int i = 0; i < n; ++i)
    s += "paragraph " + std::to_string(i) + " has words\nand a second line " +
         std::string(size_t(i % 50), 'x') + "\n\n";
  return s;
}

}  // namespace

class TestDatasetReaders : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void gzipAndZstdGiveThePlainDocuments() {
    QTemporaryDir tmp;
    const std::string d = tmp.path().toStdString();
    const std::string text = paragraphs(20000);  // ~1.4 MB: several 1 MiB refills
    write(d + "/c.txt", text);
    write(d + "/c.txt.gz", gzip_bytes(text));
    write(d + "/c.txt.zst", zstd_bytes(text));
    // Two gzip members and two zstd frames back to back are one stream each.
    const std::string half1 = paragraphs(10), half2 = "tail paragraph\n";
    write(d + "/two.txt.gz", gzip_bytes(half1) + gzip_bytes(half2));
    write(d + "/two.txt.zst", zstd_bytes(half1) + zstd_bytes(half2));
    write(d + "/two.txt", half1 + half2);

    const auto plain = docs_of(input(d + "/c.txt"), {});
    QCOMPARE(plain.size(), size_t(20000));
    QCOMPARE(plain[7], std::string("paragraph 7 has words\nand a second line xxxxxxx"));
    QCOMPARE(docs_of(input(d + "/c.txt.gz"), {}), plain);
    QCOMPARE(docs_of(input(d + "/c.txt.zst"), {}), plain);
    QCOMPARE(docs_of(input(d + "/two.txt.gz"), {}), docs_of(input(d + "/two.txt"), {}));
    QCOMPARE(docs_of(input(d + "/two.txt.zst"), {}), docs_of(input(d + "/two.txt"), {}));
    {
      gllm::ByteStream g(d + "/c.txt.gz"), z(d + "/c.txt.zst"), p(d + "/c.txt");
      QCOMPARE(g.compression(), gllm::Compression::Gzip);
      QCOMPARE(z.compression(), gllm::Compression::Zstd);
      QCOMPARE(p.compression(), gllm::Compression::None);
    }
    // JSON Lines compressed: the format comes from the name before .gz / .zst.
    const std::string jl = "{\"text\":\"one\"}\n{\"text\":\"two\\nlines\"}\n";
    write(d + "/j.jsonl.gz", gzip_bytes(jl));
    write(d + "/j.jsonl.zst", zstd_bytes(jl));
    const std::vector<std::string> want{"one", "two\nlines"};
    QCOMPARE(docs_of(input(d + "/j.jsonl.gz"), {}), want);
    QCOMPARE(docs_of(input(d + "/j.jsonl.zst"), {}), want);
    // A file found in a folder is one document under the auto rule.
    auto whole = docs_of(input(d + "/two.txt.zst", true), {});
    QCOMPARE(whole.size(), size_t(1));
    QCOMPARE(whole[0], half1 + half2);
  }

  void truncatedStreamsAreRefused() {
    QTemporaryDir tmp;
    const std::string d = tmp.path().toStdString();
    const std::string text = paragraphs(3000);
    const std::string gz = gzip_bytes(text), zs = zstd_bytes(text);
    write(d + "/cut.txt.gz", gz.substr(0, gz.size() / 2));
    write(d + "/cut.txt.zst", zs.substr(0, zs.size() / 2));
    write(d + "/tail.txt.gz", gz.substr(0, gz.size() - 4));  // only the length trailer lost
    for (const char* f : {"/cut.txt.gz", "/cut.txt.zst", "/tail.txt.gz"}) {
      const std::string e = error_of([&] { docs_of(input(d + f), {}); });
      QVERIFY2(e.find(d + f) != std::string::npos, e.c_str());
      QVERIFY2(e.find("truncated") != std::string::npos || e.find("corrupt") != std::string::npos,
               e.c_str());
      QVERIFY2(e.find("cut short") != std::string::npos, e.c_str());  // the fix is named
    }
    // A damaged byte in the middle of a gzip stream: corrupt data or a CRC mismatch, named.
    std::string bad = gz;
    bad[bad.size() / 2] = char(bad[bad.size() / 2] ^ 0x55);
    write(d + "/bad.txt.gz", bad);
    const std::string e = error_of([&] { docs_of(input(d + "/bad.txt.gz"), {}); });
    QVERIFY2(e.find("bad.txt.gz") != std::string::npos && e.find("gzip") != std::string::npos,
             e.c_str());
  }

  void jsonlFieldBadLinesAndSkip() {
    QTemporaryDir tmp;
    const std::string f = tmp.path().toStdString() + "/d.jsonl";
    write(f,
          "{\"text\":\"first\",\"body\":\"b1\"}\n"
          "\n"
          "{\"body\":\"no text here\"}\n"
          "this is not json\n"
          "{\"text\":5}\n"
          "[1,2]\n"
          "{\"text\":\"last\"}\n");
    std::string e = error_of([&] { docs_of(input(f), {}); });
    QVERIFY2(e.find(f + ":3:") != std::string::npos, e.c_str());  // file and line
    QVERIFY2(e.find("no field \"text\"") != std::string::npos, e.c_str());
    QVERIFY2(e.find("body") != std::string::npos, e.c_str());  // the keys it has
    QVERIFY2(e.find("--skip-bad-lines") != std::string::npos, e.c_str());

    gllm::DocumentReadOptions o;
    o.field = "body";
    e = error_of([&] { docs_of(input(f), o); });
    QVERIFY2(e.find(f + ":1:") == std::string::npos, e.c_str());  // line 1 has "body"
    QVERIFY2(e.find(f + ":4:") != std::string::npos, e.c_str());  // "not json" comes first
    QVERIFY2(e.find("not JSON") != std::string::npos, e.c_str());

    o = {};
    o.skip_bad_lines = true;
    gllm::DocumentReadCounts c;
    const auto docs = docs_of(input(f), o, &c);
    QCOMPARE(docs, (std::vector<std::string>{"first", "last"}));
    QCOMPARE(c.skipped_lines, uint64_t(4));
    QCOMPARE(c.documents, uint64_t(2));
    QVERIFY2(c.first_skip.find(f + ":3:") == 0, c.first_skip.c_str());
    // A string field of the wrong type is named with its type.
    write(f, "{\"text\":5}\n");
    e = error_of([&] { docs_of(input(f), {}); });
    QVERIFY2(e.find(":1:") != std::string::npos && e.find("number") != std::string::npos,
             e.c_str());
  }

  void invalidUtf8RefusedOrReplaced() {
    QTemporaryDir tmp;
    const std::string d = tmp.path().toStdString();
    // "good\n\n" is 6 bytes, "bad " 4 more: the stray byte is at offset 10, on line 3.
    const std::string text = "good\n\nbad \xff here\nand \xc3 more\n";
    write(d + "/u.txt", text);
    write(d + "/u.txt.gz", gzip_bytes(text));
    for (const char* name : {"/u.txt", "/u.txt.gz"}) {  // offsets are of the decompressed text
      const std::string e = error_of([&] { docs_of(input(d + name), {}); });
      QVERIFY2(e.find(d + name + ":3:") != std::string::npos, e.c_str());
      QVERIFY2(e.find("byte offset 10 ") != std::string::npos, e.c_str());
      QVERIFY2(e.find("--invalid-utf8 replace") != std::string::npos, e.c_str());
    }
    gllm::DocumentReadOptions o;
    o.replace_invalid_utf8 = true;
    gllm::DocumentReadCounts c;
    const auto docs = docs_of(input(d + "/u.txt"), o, &c);
    QCOMPARE(docs.size(), size_t(2));
    QCOMPARE(docs[1], std::string("bad \xEF\xBF\xBD here\nand \xEF\xBF\xBD more"));
    QCOMPARE(c.replaced_bytes, uint64_t(2));
    // JSON Lines: refused with the line, replaced before parsing.
    write(d + "/u.jsonl", "{\"text\":\"ok\"}\n{\"text\":\"x\xfe\"}\n");
    const std::string e = error_of([&] { docs_of(input(d + "/u.jsonl"), {}); });
    QVERIFY2(e.find("u.jsonl:2:") != std::string::npos, e.c_str());
    QVERIFY2(e.find("byte offset 24 ") != std::string::npos, e.c_str());  // 14 + 10
    const auto jd = docs_of(input(d + "/u.jsonl"), o, &c);
    QCOMPARE(jd[1], std::string("x\xEF\xBF\xBD"));
    QCOMPARE(c.replaced_bytes, uint64_t(1));
  }

  void pipesLoopsAndEmptyInputsAreRefused() {
    QTemporaryDir tmp;
    const std::string d = tmp.path().toStdString();
    const std::string fifo = d + "/pipe.txt";
    QCOMPARE(::mkfifo(fifo.c_str(), 0644), 0);
    std::string e = error_of([&] { gllm::expand_inputs({fifo}, "auto", d + "/out"); });
    QVERIFY2(e.find(fifo) != std::string::npos && e.find("not a regular file") != std::string::npos,
             e.c_str());
    e = error_of([&] { gllm::ByteStream s(fifo); });  // refused without blocking on the pipe
    QVERIFY2(e.find(fifo) != std::string::npos, e.c_str());

    write(d + "/tree/a/doc.txt", "text\n");
    fs::create_directory_symlink(d + "/tree", d + "/tree/a/up");
    e = error_of([&] { gllm::expand_inputs({d + "/tree"}, "auto", d + "/out"); });
    QVERIFY2(
        e.find("folder loop") != std::string::npos && e.find("/tree/a/up") != std::string::npos,
        e.c_str());

    fs::create_directories(d + "/empty_dir");
    e = error_of([&] { gllm::expand_inputs({d + "/empty_dir"}, "auto", d + "/out"); });
    QVERIFY2(e.find("no files") != std::string::npos, e.c_str());
    // A folder's hidden entries are not read (a sidecar .json is no JSON Lines corpus).
    write(d + "/hidden/.files.json", "{\n \"a\": 1\n}\n");
    write(d + "/hidden/.git/HEAD", "ref: main\n");
    write(d + "/hidden/doc.txt", "text\n");
    const auto seen = gllm::expand_inputs({d + "/hidden"}, "auto", d + "/out");
    QCOMPARE(seen.size(), size_t(1));
    QVERIFY2(seen[0].path.find("doc.txt") != std::string::npos, seen[0].path.c_str());
    e = error_of([&] { gllm::expand_inputs({d + "/missing.txt"}, "auto", d + "/out"); });
    QVERIFY2(e.find("does not exist") != std::string::npos, e.c_str());

    // Files that hold no document: refused before anything is written, saying what was found.
    write(d + "/empty.txt", "");
    write(d + "/blank.txt", "  \n\n\t\n");
    write(d + "/empty.txt.gz", gzip_bytes(""));
    gllm::PrepareOptions o;
    o.inputs = {d + "/empty.txt", d + "/blank.txt", d + "/empty.txt.gz"};
    o.out_dir = d + "/ds";
    e = error_of([&] { gllm::prepare_dataset(o); });
    QVERIFY2(e.find("no documents") != std::string::npos, e.c_str());
    QVERIFY(!fs::exists(d + "/ds/manifest.json"));
    // The dataset folder itself is not an input.
    write(d + "/ds/x.txt", "words\n");
    o.inputs = {d + "/ds/x.txt"};
    e = error_of([&] { gllm::prepare_dataset(o); });
    QVERIFY2(e.find("inside the dataset folder") != std::string::npos, e.c_str());
  }
};

QTEST_APPLESS_MAIN(TestDatasetReaders)
#include "test_dataset_readers.moc"
