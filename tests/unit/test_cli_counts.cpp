// Counts as researchers write them (345e6, 7e9, 345M, 7B, plain integers) in every count option,
// the errors for fractions, negatives and overflow, and CLI tables aligned by display width.
#include <QTemporaryDir>
#include <QtTest>
#include <nlohmann/json.hpp>
#include <sstream>

#include "engine/io/atomic_file.h"
#include "engine/io/text_table.h"
#include "tests/support/test_support.h"

using gllm::test::run_cli;

namespace {

// `gllm overhead` with N given as `total`; the JSON echoes N.
gllm::test::CommandResult overhead(const std::string& total, const std::string& d = "1024") {
  return run_cli({"overhead", "--d", d, "--layers", "24", "--heads", "16", "--levels", "4",
                  "--vocab", "50257", "--total-params", total, "--json"});
}

int64_t overhead_total(const std::string& total) {
  auto r = overhead(total);
  if (r.exit_code != 0) {
    QTest::qFail(("--total-params " + total + ": " + r.err).c_str(), __FILE__, __LINE__);
    return -1;
  }
  return nlohmann::json::parse(r.out)["total_params"].get<int64_t>();
}

}  // namespace

class TestCliCounts : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void spellings_data() {
    QTest::addColumn<QString>("text");
    QTest::addColumn<qint64>("value");
    QTest::newRow("plain") << "345000000" << qint64(345000000);
    QTest::newRow("README's 345e6") << "345e6" << qint64(345000000);
    QTest::newRow("3.45e8") << "3.45e8" << qint64(345000000);
    QTest::newRow("7e9") << "7e9" << qint64(7000000000);
    QTest::newRow("7E+9") << "7E+9" << qint64(7000000000);
    QTest::newRow("345M") << "345M" << qint64(345000000);
    QTest::newRow("345m") << "345m" << qint64(345000000);
    QTest::newRow("7B") << "7B" << qint64(7000000000);
    QTest::newRow("1.5B") << "1.5B" << qint64(1500000000);
    QTest::newRow("125k") << "125k" << qint64(125000);
    QTest::newRow("2T") << "2T" << qint64(2000000000000);
    QTest::newRow("15000e-3") << "15000e-3" << qint64(15);
    // --total-params is bounded at 10^15 (a count no model reaches); the bound itself reads.
    QTest::newRow("the bound, 1e15") << "1e15" << qint64(1000000000000000LL);
  }
  void spellings() {
    QFETCH(QString, text);
    QFETCH(qint64, value);
    QCOMPARE(overhead_total(text.toStdString()), static_cast<int64_t>(value));
  }

  void rejected_data() {
    QTest::addColumn<QString>("text");
    QTest::addColumn<QString>("says");
    QTest::newRow("fraction") << "1.5"
                              << "not a whole number";
    QTest::newRow("fraction by exponent") << "15e-1"
                                          << "not a whole number";
    QTest::newRow("negative") << "-345M"
                              << "negative";
    QTest::newRow("past the bound") << "1000000000000001"
                                    << "too large";
    QTest::newRow("int64 max") << "9223372036854775807"
                               << "too large";
    QTest::newRow("overflow") << "9223372036854775808"
                              << "too large";
    QTest::newRow("overflow by exponent") << "1e19"
                                          << "too large";
    QTest::newRow("huge exponent") << "1e400"
                                   << "too large";
    QTest::newRow("unknown suffix") << "345X"
                                    << "suffix";
    QTest::newRow("two suffixes") << "3MB"
                                  << "suffix";
    QTest::newRow("no digits") << "e6"
                               << "not a number";
    QTest::newRow("dangling exponent") << "7e"
                                       << "exponent";
    QTest::newRow("empty") << ""
                           << "not a number";
  }
  void rejected() {
    QFETCH(QString, text);
    QFETCH(QString, says);
    auto r = overhead(text.toStdString());
    QVERIFY2(r.exit_code != 0, r.out.c_str());
    QVERIFY2(r.err.find("--total-params") != std::string::npos, r.err.c_str());
    QVERIFY2(r.err.find(says.toStdString()) != std::string::npos, r.err.c_str());
    QVERIFY2(r.err.find("345e6") != std::string::npos,
             r.err.c_str());  // names the accepted spellings
  }

  // The same parser behind the other count options: widths, vocabularies, table sizes, steps.
  void every_count_option() {
    auto a = run_cli({"overhead", "--d", "1.024k", "--layers", "24", "--heads", "16", "--vocab",
                      "50.257k", "--total-params", "345M", "--json"});
    QCOMPARE(a.exit_code, 0);
    auto ja = nlohmann::json::parse(a.out);
    QCOMPARE(ja["projections"].get<int64_t>(), int64_t(1024) * 1024);
    QCOMPARE(ja["output_grades"].get<int64_t>(), int64_t(50257));
    auto p1 = run_cli({"params", "--depth", "6", "--vocab", "8192", "--oe-m", "150855", "--json"});
    auto p2 =
        run_cli({"params", "--depth", "6", "--vocab", "8.192k", "--oe-m", "150.855e3", "--json"});
    QCOMPARE(p1.exit_code, 0);
    QCOMPARE(p2.exit_code, 0);
    QCOMPARE(nlohmann::json::parse(p2.out), nlohmann::json::parse(p1.out));
    QCOMPARE(nlohmann::json::parse(p1.out)["oe_m"].get<int64_t>(), int64_t(150855));
    // Ranges still hold: DEPTH in [1, 64]; a 32-bit option refuses what does not fit.
    auto deep = run_cli({"params", "--depth", "1e3", "--json"});
    QVERIFY(deep.exit_code != 0);
    QVERIFY2(deep.err.find("[1, 64]") != std::string::npos, deep.err.c_str());
    auto steps = run_cli({"train", "tiny-cpu", "--steps", "2.5", "--out", "/nonexistent/never"});
    QVERIFY(steps.exit_code != 0);
    QVERIFY2(steps.err.find("--steps") != std::string::npos &&
                 steps.err.find("whole") != std::string::npos,
             steps.err.c_str());
    auto every =
        run_cli({"train", "tiny-cpu", "--eval-every", "5e9", "--out", "/nonexistent/never"});
    QVERIFY(every.exit_code != 0);
    QVERIFY2(every.err.find("too large") != std::string::npos, every.err.c_str());
  }

  // `gllm overhead` and `gllm ladder` print tables whose columns line up in display columns,
  // though d², K·H·d_k, ⟨q,α̂−τ̂⟩ and Λ(q) take several bytes per character.
  void tables_align_by_display_width() {
    QTemporaryDir dir;
    const std::string prof = dir.filePath("profiles.json").toStdString();
    nlohmann::json pj{{"d", 4},
                      {"levels", 2},
                      {"level_dims", {2, 2}},
                      {"alpha", {0.1, 0.2, 0.3, 0.4}},
                      {"tau", {0.4, 0.3, 0.2, 0.1}},
                      {"pos_grades", {0, 0, 1, 1}}};
    gllm::write_file_atomic(prof, pj.dump());
    auto lad = run_cli({"ladder", "--profiles", prof, "--clip", "2"});
    QVERIFY2(lad.exit_code == 0, lad.err.c_str());
    auto ov = run_cli({"overhead", "--d", "1024", "--layers", "24", "--heads", "16", "--vocab",
                       "50257", "--total-params", "345e6"});
    QVERIFY2(ov.exit_code == 0, ov.err.c_str());
    for (const auto& [text, header, rows] : {std::make_tuple(lad.out, std::string("rank"), 4),
                                             std::make_tuple(ov.out, std::string("part"), 5)}) {
      std::istringstream in(text);
      std::vector<std::string> lines;
      bool on = false;
      for (std::string line; std::getline(in, line);) {
        if (line.rfind(header, 0) == 0)
          on = true;
        else if (on && (line.empty() || line[0] == '-' || line.find("  ") == std::string::npos))
          on = false;
        if (on) lines.push_back(line);
      }
      QVERIFY2(static_cast<int>(lines.size()) >= rows, text.c_str());
      // Each column ends (right-aligned numbers) or starts (left-aligned names) at one display
      // column: the header's second column starts where every row's does.
      auto second_start = [](const std::string& line) {
        size_t at = line.find("  ", line.find_first_not_of(' '));
        while (at < line.size() && line[at] == ' ') ++at;
        return gllm::display_width(line.substr(0, at));
      };
      for (const auto& l : lines) {
        QVERIFY2(second_start(l) == second_start(lines[0]), (l + "\n" + text).c_str());
        if (header == "rank")
          QVERIFY2(gllm::display_width(l) == gllm::display_width(lines[0]),
                   (l + "\n" + text).c_str());
      }
      if (header == "rank") QVERIFY(text.find("⟨q,α̂−τ̂⟩") != std::string::npos);
    }
  }
};

QTEST_APPLESS_MAIN(TestCliCounts)
#include "test_cli_counts.moc"
