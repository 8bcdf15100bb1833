// SHA-512 and base64 against the FIPS 180-4 example digests and RFC 4648 vectors.
// The corpus integrity check rests on these.
#include <QtTest>

#include "engine/io/sha512.h"

class TestSha512 : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void fipsVectors() {
    auto abc = gllm::sha512("abc");
    QCOMPARE(QString::fromStdString(gllm::to_hex(abc.data(), abc.size())),
             QString("ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a"
                     "2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f"));
    auto two_block = gllm::sha512(
        "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlm"
        "nopqrsmnopqrstnopqrstu");
    QCOMPARE(QString::fromStdString(gllm::to_hex(two_block.data(), two_block.size())),
             QString("8e959b75dae313da8cf4f72814fc143f8f7779c6eb9f7fa17299aeadb6889018"
                     "501d289e4900f7e4331b99dec4b5433ac7d329eeb6dd26545e96e55b874be909"));
    auto empty = gllm::sha512("");
    QCOMPARE(QString::fromStdString(gllm::to_hex(empty.data(), 4)), QString("cf83e135"));
  }
  void streamingEqualsOneShot() {
    std::string data(1000, 'x');
    for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<char>(i * 31 + 7);
    gllm::Sha512 h;
    for (size_t i = 0; i < data.size(); i += 37)
      h.update(data.data() + i, std::min<size_t>(37, data.size() - i));
    QVERIFY(h.finish() == gllm::sha512(data));
  }
  void base64() {
    const uint8_t f[] = {'f', 'o', 'o', 'b', 'a', 'r'};
    QCOMPARE(QString::fromStdString(gllm::base64_encode(f, 1)), QString("Zg=="));
    QCOMPARE(QString::fromStdString(gllm::base64_encode(f, 2)), QString("Zm8="));
    QCOMPARE(QString::fromStdString(gllm::base64_encode(f, 3)), QString("Zm9v"));
    QCOMPARE(QString::fromStdString(gllm::base64_encode(f, 6)), QString("Zm9vYmFy"));
  }
};

QTEST_APPLESS_MAIN(TestSha512)
#include "test_io_sha512.moc"
