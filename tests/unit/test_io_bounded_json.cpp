// The bounded readers of outside bytes: JSON size and depth refused before anything recurses,
// error text bounded however large the offending value, safetensors counts checked for overflow.
#include <QTemporaryDir>
#include <QtTest>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>

#include "engine/io/atomic_file.h"
#include "engine/io/error.h"
#include "engine/io/json_read.h"
#include "engine/io/safetensors.h"
#include "tests/support/test_support.h"

using namespace gllm;
using gllm::test::error_of;

namespace {

std::string nested(size_t depth) {
  return std::string(depth, '[') + std::string(depth, ']');
}

// A safetensors image with the given header JSON and `data_bytes` bytes of data.
std::string with_header(const std::string& header, size_t data_bytes) {
  std::string h = header;
  while (h.size() % 8) h.push_back(' ');
  std::string out(8, '\0');
  const uint64_t n = h.size();
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>((n >> (8 * i)) & 0xff);
  return out + h + std::string(data_bytes, '\0');
}

}  // namespace

class TestIoBoundedJson : public QObject {
  Q_OBJECT
  QTemporaryDir tmp_;

 private Q_SLOTS:
  void depthIsRefusedBeforeParsing() {
    // 100,000 levels: nlohmann parses this iteratively, but dumping or copying it recurses.
    const std::string deep = "{\"a\": " + nested(100000) + "}";
    const std::string e = error_of([&] { parse_json(deep, "deep.json", "fix it"); });
    QVERIFY2(e.find("deep.json") != std::string::npos, e.c_str());
    QVERIFY2(e.find("nested deeper than 64") != std::string::npos, e.c_str());
    QVERIFY2(e.find("fix it") != std::string::npos, e.c_str());
    // Brackets inside strings do not count; exactly the limit passes.
    QVERIFY(parse_json("[\"" + std::string(500, '[') + "\"]", "s", "").is_array());
    QVERIFY(parse_json(nested(64), "ok", "").is_array());
    QVERIFY(!error_of([&] { parse_json(nested(65), "x", ""); }).empty());
    QVERIFY(!error_of([&] { parse_json(nested(9), "x", "", JsonLimits{1 << 20, 8}); }).empty());
  }

  void sizeIsRefusedBeforeReading() {
    const std::string path = tmp_.filePath("big.json").toStdString();
    write_file_atomic(path, "[" + std::string(5000, ' ') + "1]");
    const std::string e = error_of([&] { read_json_file(path, "shrink it", JsonLimits{1000, 8}); });
    QVERIFY2(e.find("more than the 1000") != std::string::npos, e.c_str());
    QVERIFY2(e.find("big.json") != std::string::npos, e.c_str());
    QCOMPARE(read_json_file(path, "", JsonLimits{10000, 8}), nlohmann::json::array({1}));
    // A device that never ends is cut at the limit instead of read forever.
    QVERIFY(!error_of([&] { read_file_limited("/dev/zero", 1 << 16, ""); }).empty());
  }

  void errorsDoNotEchoHugeValues() {
    // A 10 MB number that overflows a double, and a 10 MB string where a number belongs.
    const std::string number = "{\"x\": 1" + std::string(10 << 20, '0') + "e400}";
    const std::string e = error_of([&] {
      parse_json(number, "n.json", "", JsonLimits{64u << 20, 8});
    });
    QVERIFY2(!e.empty(), "an overflowing number was accepted");
    QVERIFY2(e.size() < 1000, ("error of " + std::to_string(e.size()) + " bytes").c_str());
    const nlohmann::json s = std::string(10 << 20, 'x');
    QVERIFY(json_brief(s).size() < 200);
  }

  void briefOfDeepValueDoesNotRecurse() {
    // Built in place (nlohmann's destructor is iterative): json_brief must not dump it.
    nlohmann::json deep = nlohmann::json::array();
    nlohmann::json* at = &deep;
    for (int i = 0; i < 200000; ++i) {
      at->push_back(nlohmann::json::array());
      at = &(*at)[0];
    }
    const std::string b = json_brief(deep);
    QVERIFY2(b.find("nested more than 4 deep") != std::string::npos, b.c_str());
    QVERIFY(!error_of([&] { check_json_depth(deep, 16, "value", "flatten it"); }).empty());
    QCOMPARE(json_depth(nlohmann::json::parse("[[1], {\"a\": [[]]}]")), 4);
    QCOMPARE(json_brief(nlohmann::json::parse("[1, 2]")), std::string("[1,2]"));
  }

  void typedReadsNeverThrowTypeErrors() {
    const auto j = nlohmann::json::parse(R"({"n": "five", "big": 18446744073709551615, "s": 3})");
    QCOMPARE(json_int_or(j, "n", -1), int64_t(-1));
    QCOMPARE(json_int_or(j, "big", -1), int64_t(-1));  // does not fit int64
    QCOMPARE(json_string_or(j, "s", "none"), std::string("none"));
    QCOMPARE(json_number_or(nlohmann::json::array(), "x", 2.5), 2.5);
    const std::string e = error_of([&] { json_int_at(j, "n", "summary.json"); });
    QVERIFY2(e.find("summary.json") != std::string::npos && e.find("\"n\"") != std::string::npos,
             e.c_str());
  }

  void safetensorsShapeProductOverflow() {
    // 2^32 · 2^32 · 1024 wraps to 0 in 64 bits: a zero-byte tensor that claims 2^74 elements.
    const std::string f =
        with_header(R"({"w": {"dtype": "F32", "shape": [4294967296, 4294967296, 1024], )"
                    R"("data_offsets": [0, 0]}})",
                    0);
    const std::string e = error_of([&] { SafetensorsFile::parse(f, "wrap.safetensors"); });
    QVERIFY2(e.find("more elements than a file can hold") != std::string::npos, e.c_str());
    // numel · dtype size overflowing size_t is refused the same way.
    const std::string g = with_header(
        R"({"w": {"dtype": "F64", "shape": [4611686018427387904], "data_offsets": [0, 0]}})", 0);
    QVERIFY(!error_of([&] { SafetensorsFile::parse(g, "g"); }).empty());
  }

  void safetensorsSizeDtypeAndOffsets() {
    // Bytes stored must equal shape × dtype size; offsets must lie inside the data section.
    QVERIFY(!error_of([&] {
               SafetensorsFile::parse(with_header(
                   R"({"w": {"dtype": "F32", "shape": [3], "data_offsets": [0, 8]}})", 8));
             }).empty());
    QVERIFY(!error_of([&] {
               SafetensorsFile::parse(with_header(
                   R"({"w": {"dtype": "F32", "shape": [2], "data_offsets": [8, 16]}})", 8));
             }).empty());
    // A header nested deeper than a safetensors header can be is refused as such.
    const std::string e =
        error_of([&] { SafetensorsFile::parse(with_header("{\"w\": " + nested(50000) + "}", 0)); });
    QVERIFY2(e.find("nested deeper") != std::string::npos, e.c_str());
    // Too many dimensions.
    std::string dims;
    for (int i = 0; i < 100; ++i) dims += (i ? ",1" : "1");
    QVERIFY(
        !error_of([&] {
           SafetensorsFile::parse(with_header(
               R"({"w": {"dtype": "U8", "shape": [)" + dims + R"(], "data_offsets": [0, 1]}})", 1));
         }).empty());
  }

  void metadataReadsOnlyTheHeader() {
    const float v[2] = {1, 2};
    const std::string path = tmp_.filePath("m.safetensors").toStdString();
    write_safetensors(path, {{"w", StDtype::F32, {2}, v, sizeof v}},
                      {{"format", "x"}, {"config", "{}"}});
    auto m = read_safetensors_metadata(path);
    QCOMPARE(m.at("format"), std::string("x"));
    // A header length past the end of the file is refused before anything is allocated.
    std::string bytes = read_file(path);
    bytes[7] = 0x7f;
    write_file_atomic(path, bytes);
    QVERIFY(!error_of([&] { read_safetensors_metadata(path); }).empty());
    QVERIFY(
        !error_of([&] { SafetensorsFile::open(tmp_.path().toStdString()); }).empty());  // a folder
  }
};

QTEST_APPLESS_MAIN(TestIoBoundedJson)
#include "test_io_bounded_json.moc"
