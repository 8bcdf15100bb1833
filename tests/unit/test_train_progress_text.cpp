// The training progress display: a bar redrawn in place on a terminal, and in a log (SLURM's, a
// pipe) one whole line every 5 % with no carriage returns, whatever the run's length or resume.
#include <QtTest>
#include <string>
#include <vector>

#include "engine/train/progress_text.h"

namespace {

// Feeds steps first..total and returns every text the display wrote.
std::vector<std::string> feed(gllm::ProgressText& p, int64_t first, int64_t total) {
  std::vector<std::string> out;
  for (int64_t s = first; s <= total; ++s) {
    gllm::StepRecord r;
    r.step = s;
    r.total_steps = total;
    r.loss = 3.0;
    r.tokens_per_s = 1000;
    r.wall_s = 0.5 * double(s);
    r.peak_mem_mib = 512;
    const std::string t = p.step(r);
    if (!t.empty()) out.push_back(t);
  }
  return out;
}

int64_t stepOf(const std::string& line) {
  return std::stoll(line.substr(5, line.find('/') - 5));  // "step N/T …"
}

}  // namespace

class TestTrainProgressText : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void logGetsALineEveryFivePercent() {
    gllm::ProgressText p(false);
    const auto lines = feed(p, 1, 1000);
    // The first step, then 5 %, 10 %, …, 100 %: 21 lines.
    QCOMPARE(lines.size(), size_t(21));
    QCOMPARE(stepOf(lines.front()), int64_t(1));
    for (size_t i = 1; i < lines.size(); ++i) QCOMPARE(stepOf(lines[i]), int64_t(50 * i));
    for (const auto& l : lines) {
      QVERIFY2(l.find('\r') == std::string::npos, l.c_str());
      QCOMPARE(l.back(), '\n');
      QCOMPARE(std::count(l.begin(), l.end(), '\n'), std::ptrdiff_t(1));
    }
    QVERIFY2(
        lines[10].find("step 500/1000 (50%)  loss 3.0000  1000 tok/s  peak 512 MiB  eta 250s") == 0,
        lines[10].c_str());
    QVERIFY(!p.barShown());
  }

  void shortAndResumedRunsStillReport() {
    gllm::ProgressText shortRun(false);
    const auto few = feed(shortRun, 1, 7);  // every step crosses a 5 % mark
    QCOMPARE(few.size(), size_t(7));
    gllm::ProgressText resumed(false);
    const auto rest = feed(resumed, 601, 1000);  // a resume at 60 %: its first step, then 65 %…
    QCOMPARE(rest.size(), size_t(9));
    QCOMPARE(stepOf(rest.front()), int64_t(601));
    QCOMPARE(stepOf(rest[1]), int64_t(650));
    QCOMPARE(stepOf(rest.back()), int64_t(1000));
    gllm::ProgressText coarse(false, 25);
    QCOMPARE(feed(coarse, 1, 100).size(), size_t(5));
  }

  void terminalRedrawsOneBar() {
    gllm::ProgressText p(true);
    const auto bars = feed(p, 1, 40);
    QCOMPARE(bars.size(), size_t(40));
    for (const auto& b : bars) {
      QCOMPARE(b.front(), '\r');
      QVERIFY(b.find('\n') == std::string::npos);
    }
    QVERIFY(bars.back().find("[##############################] 40/40") == 1);
    QVERIFY(p.barShown());
    p.lineEnded();
    QVERIFY(!p.barShown());
  }
};

QTEST_APPLESS_MAIN(TestTrainProgressText)
#include "test_train_progress_text.moc"
