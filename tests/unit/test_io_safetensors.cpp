// safetensors round trips (dtypes, shapes, metadata, atomic writes) and the validation of damaged
// files: every corruption must be refused with an error naming the file.
#include <QTemporaryDir>
#include <QtTest>
#include <cstring>
#include <nlohmann/json.hpp>

#include "engine/io/atomic_file.h"
#include "engine/io/error.h"
#include "engine/io/safetensors.h"

using namespace gllm;

class TestSafetensors : public QObject {
  Q_OBJECT

  static std::string sample() {
    static const float f[6] = {1.5f, -2.f, 3.25f, 0.f, 1e-3f, -7.f};
    static const int64_t i[3] = {-1, 42, 1LL << 40};
    static const uint16_t b[2] = {float_to_bf16(1.0f), float_to_bf16(-0.5f)};
    std::vector<StTensorIn> t{{"w.weight", StDtype::F32, {2, 3}, f, sizeof f},
                              {"ids", StDtype::I64, {3}, i, sizeof i},
                              {"bf", StDtype::BF16, {2}, b, sizeof b},
                              {"empty", StDtype::F32, {0, 4}, nullptr, 0}};
    return encode_safetensors(t, {{"format", "test"}, {"config", "{\"a\": 1}"}});
  }

 private Q_SLOTS:
  void layoutFollowsTheFormat() {
    std::string s = sample();
    uint64_t n = 0;
    for (int k = 0; k < 8; ++k) n |= uint64_t(uint8_t(s[k])) << (8 * k);
    QCOMPARE(n % 8, uint64_t(0));  // padded header
    auto h = nlohmann::json::parse(s.substr(8, n));
    QCOMPARE(h["w.weight"]["dtype"].get<std::string>(), std::string("F32"));
    QCOMPARE(h["w.weight"]["shape"], nlohmann::json({2, 3}));
    QCOMPARE(h["__metadata__"]["format"].get<std::string>(), std::string("test"));
    // name order: bf, empty, ids, w.weight → offsets 0..4, 4..4, 4..28, 28..52
    QCOMPARE(h["ids"]["data_offsets"], nlohmann::json({4, 28}));
    QCOMPARE(h["w.weight"]["data_offsets"], nlohmann::json({28, 52}));
    QCOMPARE(s.size(), size_t(8 + n + 52));
  }

  void roundTrip() {
    QTemporaryDir dir;
    const std::string path = dir.filePath("m.safetensors").toStdString();
    write_file_atomic(path, sample());
    auto f = SafetensorsFile::open(path);
    QCOMPARE(int(f.tensors().size()), 4);
    QCOMPARE(f.metadata().at("config"), std::string("{\"a\": 1}"));
    auto w = f.to_float("w.weight");
    QCOMPARE(w.size(), size_t(6));
    QCOMPARE(w[2], 3.25f);
    QCOMPARE(w[4], 1e-3f);
    int64_t big;
    std::memcpy(&big, f.data("ids") + 16, 8);
    QCOMPARE(big, int64_t(1) << 40);
    auto bf = f.to_float("bf");
    QCOMPARE(bf[0], 1.0f);
    QCOMPARE(bf[1], -0.5f);
    QCOMPARE(f.info("empty").numel(), int64_t(0));
    QVERIFY(!f.has("nope"));
    QVERIFY_THROWS_EXCEPTION(Error, f.info("nope"));
  }

  void streamingWriterMatchesEncoder() {
    QTemporaryDir dir;
    const std::string path = dir.filePath("w.safetensors").toStdString();
    const double d[2] = {1.0 / 3.0, -2.0};
    std::vector<StTensorIn> t{{"x", StDtype::F64, {2}, d, sizeof d}};
    write_safetensors(path, t, {{"k", "v"}});
    QCOMPARE(read_file(path), encode_safetensors(t, {{"k", "v"}}));
    QCOMPARE(double(SafetensorsFile::open(path).to_float("x")[0]), double(float(1.0 / 3.0)));
  }

  void refusesBadInput() {
    const float f[2] = {1, 2};
    QVERIFY_THROWS_EXCEPTION(
        Error, encode_safetensors({{"x", StDtype::F32, {3}, f, sizeof f}}));  // size mismatch
    QVERIFY_THROWS_EXCEPTION(
        Error, encode_safetensors({{"x", StDtype::F32, {2}, f, sizeof f},
                                   {"x", StDtype::F32, {2}, f, sizeof f}}));  // duplicate
    QVERIFY_THROWS_EXCEPTION(
        Error, encode_safetensors({{"__metadata__", StDtype::F32, {2}, f, sizeof f}}));
  }

  void truncatedFilesAreRefused() {
    const std::string s = sample();
    for (size_t cut : {size_t(0), size_t(5), size_t(20), s.size() - 1}) {
      try {
        SafetensorsFile::parse(s.substr(0, cut), "cut.safetensors");
        QFAIL(qPrintable(QString("truncation at %1 accepted").arg(cut)));
      } catch (const Error& e) {
        QVERIFY(std::string(e.what()).find("cut.safetensors") != std::string::npos);
      }
    }
  }

  void corruptedHeadersAreRefused() {
    const std::string good = sample();
    uint64_t n = 0;
    for (int k = 0; k < 8; ++k) n |= uint64_t(uint8_t(good[k])) << (8 * k);
    auto with_header = [&](nlohmann::json h) {
      std::string hs = h.dump();
      std::string out(8, '\0');
      for (int k = 0; k < 8; ++k) out[k] = char((uint64_t(hs.size()) >> (8 * k)) & 0xff);
      return out + hs + good.substr(8 + n);
    };
    auto h = nlohmann::json::parse(good.substr(8, n));
    auto expect_error = [&](nlohmann::json bad, const char* what) {
      try {
        SafetensorsFile::parse(with_header(bad), "bad.safetensors");
        QFAIL(what);
      } catch (const Error& e) {
        QVERIFY2(std::string(e.what()).find("bad.safetensors") != std::string::npos, e.what());
      }
    };
    QVERIFY(SafetensorsFile::parse(with_header(h)).has("ids"));  // re-encoded header still fine
    auto b1 = h;
    b1["ids"]["data_offsets"] = {4, 9999};
    expect_error(b1, "offset past the end");
    auto b2 = h;
    b2["ids"]["shape"] = {4};
    expect_error(b2, "shape/size mismatch");
    auto b3 = h;
    b3["ids"]["dtype"] = "Q7";
    expect_error(b3, "unknown dtype");
    auto b4 = h;
    b4["w.weight"]["data_offsets"] = {20, 44};
    expect_error(b4, "overlap");
    auto b5 = h;
    b5["ids"]["data_offsets"] = {28, 4};
    expect_error(b5, "backwards offsets");
    auto b6 = h;
    b6["__metadata__"]["n"] = 3;
    expect_error(b6, "non-string metadata");
    std::string junk = good;
    junk[8] = '#';
    QVERIFY_THROWS_EXCEPTION(Error, SafetensorsFile::parse(junk, "j"));
    std::string huge = good;
    huge[7] = char(0x7f);  // header length ≈ 9e18
    QVERIFY_THROWS_EXCEPTION(Error, SafetensorsFile::parse(huge, "h"));
  }

  // The format's byte rules for the header (issue 32's inputs): a byte-order mark before '{', NUL
  // padding instead of spaces, and 400,000 zero-size entries are refused by name; space padding,
  // which the format allows, is read.
  void headerBytesFollowTheFormat() {
    const std::string good = sample();
    uint64_t n = 0;
    for (int k = 0; k < 8; ++k) n |= uint64_t(uint8_t(good[k])) << (8 * k);
    const std::string header = good.substr(8, n), data = good.substr(8 + n);
    auto file_with = [&](const std::string& h) {
      std::string out(8, '\0');
      for (int k = 0; k < 8; ++k) out[k] = char((uint64_t(h.size()) >> (8 * k)) & 0xff);
      return out + h + data;
    };
    auto refused = [&](const std::string& h, const char* expect) {
      try {
        SafetensorsFile::parse(file_with(h), "odd.safetensors");
        return std::string("accepted");
      } catch (const Error& e) {
        const std::string m = e.what();
        return m.find(expect) != std::string::npos && m.find("odd.safetensors") == 0 ? std::string()
                                                                                     : m;
      }
    };
    std::string trimmed = header;
    while (trimmed.back() == ' ') trimmed.pop_back();
    QVERIFY(SafetensorsFile::parse(file_with(trimmed + "        ")).has("ids"));
    std::string m = refused("\xEF\xBB\xBF" + trimmed, "byte-order mark");
    QVERIFY2(m.empty(), m.c_str());
    m = refused(trimmed + std::string(8, '\0'), "NUL");
    QVERIFY2(m.empty(), m.c_str());
    m = refused(" " + trimmed, "begin with '{'");
    QVERIFY2(m.empty(), m.c_str());
    // 400,000 entries of shape [0] at offset 0: well inside the header's 100 MiB, refused by count
    std::string many = "{";
    for (int i = 0; i < 400000; ++i)
      many += "\"t" + std::to_string(i) +
              "\":{\"dtype\":\"F32\",\"shape\":[0],\"data_offsets\":[0,0]},";
    many.back() = '}';
    m = refused(many, "more than the 100000 tensors");
    QVERIFY2(m.empty(), m.c_str());
    // the metadata reader applies the same byte rules
    QTemporaryDir dir;
    const std::string path = dir.filePath("bom.safetensors").toStdString();
    gllm::write_file_atomic(path, file_with("\xEF\xBB\xBF" + trimmed));
    QVERIFY_THROWS_EXCEPTION(Error, read_safetensors_metadata(path));
  }

  void halfPrecisionConversions() {
    QCOMPARE(bf16_to_float(float_to_bf16(3.0f)), 3.0f);
    QCOMPARE(float_to_bf16(1.0f + 1.0f / 256), uint16_t(0x3f80));  // ties to even
    QCOMPARE(f16_to_float(0x3c00), 1.0f);
    QCOMPARE(f16_to_float(0xc000), -2.0f);
    QCOMPARE(f16_to_float(0x0001), 5.9604645e-08f);  // smallest subnormal
    QVERIFY(std::isinf(f16_to_float(0x7c00)));
  }
};

QTEST_APPLESS_MAIN(TestSafetensors)
#include "test_io_safetensors.moc"
