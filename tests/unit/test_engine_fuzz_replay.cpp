// Replays the fuzzing seed corpora (tests/fuzz/corpus/<harness>/: real files and the inputs that
// once crashed a reader) through the same harness functions the libFuzzer build runs, so every
// reader of outside bytes is exercised in the normal build, without clang.
#include <QtTest>
#include <algorithm>
#include <filesystem>

#include "engine/io/atomic_file.h"
#include "tests/fuzz/harnesses.h"
#include "tests/support/test_support.h"

namespace fs = std::filesystem;

namespace {

std::vector<std::string> inputs_of(const std::string& harness) {
  std::vector<std::string> files;
  const std::string dir = gllm::test::fixture("../fuzz/corpus/" + harness);
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (e.is_regular_file()) files.push_back(e.path().string());
  std::sort(files.begin(), files.end());
  return files;
}

// Runs every input of a harness; truncations of each (every prefix length on a coarse grid) too,
// since cut files are the commonest damage.
template <class Fn>
int replay(const std::string& harness, Fn&& fn) {
  int n = 0;
  for (const auto& f : inputs_of(harness)) {
    const std::string bytes = gllm::read_file(f);
    const auto* p = reinterpret_cast<const uint8_t*>(bytes.data());
    fn(p, bytes.size());
    const size_t step = std::max<size_t>(1, bytes.size() / 64);
    for (size_t cut = 0; cut < bytes.size(); cut += step) fn(p, cut);
    ++n;
  }
  return n;
}

}  // namespace

class TestEngineFuzzReplay : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void safetensors() { QVERIFY(replay("safetensors", gllm::fuzz::safetensors) > 0); }
  void runConfig() {
    const std::string presets = gllm::presets_dir();
    QVERIFY(replay("run_config",
                   [&](const uint8_t* d, size_t n) { gllm::fuzz::run_config(d, n, presets); }) > 0);
  }
  void runFolder() { QVERIFY(replay("run_folder", gllm::fuzz::run_folder) > 0); }
  void tokenCache() { QVERIFY(replay("token_cache", gllm::fuzz::token_cache) > 0); }
  void profiles() { QVERIFY(replay("profiles", gllm::fuzz::profiles) > 0); }
  void cleanupTestCase() {
    std::error_code ec;
    fs::remove_all(gllm::fuzz::scratch_dir(), ec);
  }
};

QTEST_APPLESS_MAIN(TestEngineFuzzReplay)
#include "test_engine_fuzz_replay.moc"
