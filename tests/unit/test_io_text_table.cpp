// Display width of UTF-8 against Qt's Unicode tables (combining and enclosing marks and format
// characters take no column), wide characters, and tables aligned by display columns, not bytes.
#include <QString>
#include <QtTest>
#include <sstream>

#include "engine/io/error.h"
#include "engine/io/text_table.h"

namespace {

// Columns from Qt's Unicode database: 0 for marks that do not space and for format characters.
int qt_width(char32_t cp) {
  switch (QChar::category(cp)) {
    case QChar::Mark_NonSpacing:
    case QChar::Mark_Enclosing:
    case QChar::Other_Format:
      return 0;
    default:
      return 1;
  }
}

std::string utf8(char32_t cp) {
  return QString::fromUcs4(&cp, 1).toStdString();
}

// The display column where each cell of a rendered line starts: after two spaces of gap.
std::vector<size_t> cell_starts(const std::string& line) {
  std::vector<size_t> starts{0};
  size_t col = 0, spaces = 0;
  for (size_t i = 0; i < line.size();) {
    size_t j = i + 1;
    while (j < line.size() && (static_cast<unsigned char>(line[j]) & 0xC0) == 0x80) ++j;
    const std::string ch = line.substr(i, j - i);
    if (ch == " ") {
      ++spaces;
    } else {
      if (spaces >= 2 && spaces < col)
        starts.push_back(col);  // not the padding before the first cell
      spaces = 0;
    }
    col += gllm::display_width(ch);
    i = j;
  }
  return starts;
}

}  // namespace

class TestIoTextTable : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  // Every assigned code point of the Latin, Greek, Cyrillic, combining-mark and symbol blocks the
  // CLI prints agrees with Qt's general categories.
  void widthsAgreeWithQt() {
    const std::pair<char32_t, char32_t> blocks[] = {{0x20, 0x7E},     {0xA0, 0x52F},
                                                    {0x1AB0, 0x1AFF}, {0x1DC0, 0x1DFF},
                                                    {0x2000, 0x2BFF}, {0xFE20, 0xFE2F}};
    int checked = 0, marks = 0;
    for (auto [lo, hi] : blocks)
      for (char32_t cp = lo; cp <= hi; ++cp) {
        if (QChar::category(cp) == QChar::Other_NotAssigned || (cp >= 0x2E80 && cp <= 0x2FFF))
          continue;
        if (cp == 0xAD) continue;  // soft hyphen: a format character that terminals draw
        if ((cp >= 0x231A && cp <= 0x2BFF) && gllm::code_point_width(cp) == 2)
          continue;  // emoji: wide
        QVERIFY2(static_cast<int>(gllm::display_width(utf8(cp))) == qt_width(cp),
                 qPrintable(QString("U+%1: width %2, Qt says %3")
                                .arg(static_cast<uint>(cp), 4, 16, QChar('0'))
                                .arg(gllm::display_width(utf8(cp)))
                                .arg(qt_width(cp))));
        ++checked;
        marks += qt_width(cp) == 0;
      }
    QVERIFY(checked > 1500);
    QVERIFY(marks > 200);  // the combining blocks were really among them
  }

  void stringsOfSeveralBytesPerColumn() {
    QCOMPARE(gllm::display_width("gain"), size_t(4));
    QCOMPARE(gllm::display_width("⟨q,α̂−τ̂⟩"), size_t(7));  // α + U+0302, τ + U+0302
    QCOMPARE(std::string("⟨q,α̂−τ̂⟩").size(), size_t(19));
    QCOMPARE(gllm::display_width("Λ(q)"), size_t(4));
    QCOMPARE(gllm::display_width("e\xCC\x81\xCC\xA3"),
             size_t(1));                               // two combining marks on one letter
    QCOMPARE(gllm::display_width("表格"), size_t(4));  // East Asian wide
    QCOMPARE(gllm::display_width("😀x"), size_t(3));
    QCOMPARE(gllm::display_width("a\xFF"
                                 "b"),
             size_t(3));  // a malformed byte takes one column
    QCOMPARE(gllm::pad_to("α̂", 3), std::string("α̂  "));
    QCOMPARE(gllm::pad_to("τ", 3, gllm::Align::Right), std::string("  τ"));
  }

  // Columns line up in display columns whatever the bytes per character.
  void tableAlignsByDisplayWidth() {
    gllm::TextTable t({"rank", "arm", "⟨q,α̂−τ̂⟩", "Λ(q)", "gain"},
                      {gllm::Align::Right, gllm::Align::Left, gllm::Align::Right,
                       gllm::Align::Right, gllm::Align::Right});
    t.add_row({"1", "educated", "0.15", "0.8765", "1.14"});
    t.add_row({"2", "α̂-ordered", "-0.012", "1.2", "0.83"});
    t.add_line("- oracle: unavailable");
    t.add_row({"3", "表", "1", "1", "1"});
    std::istringstream in(t.render());
    std::vector<std::vector<size_t>> starts;
    std::vector<size_t> widths;
    for (std::string line; std::getline(in, line);) {
      if (line.rfind("- ", 0) == 0) continue;
      starts.push_back(cell_starts(line));
      widths.push_back(gllm::display_width(line));
      QVERIFY2(line.back() != ' ', line.c_str());
    }
    QCOMPARE(starts.size(), size_t(4));
    // Left-aligned "arm" starts at the same column on every line; right-aligned columns end at the
    // same column (every line is as wide as the header, the last column being right-aligned).
    for (const auto& s : starts) {
      QCOMPARE(s.size(), size_t(5));
      QCOMPARE(s[1], starts[0][1]);
    }
    for (size_t w : widths) QCOMPARE(w, widths[0]);
    QVERIFY_THROWS_EXCEPTION(gllm::Error, t.add_row({"1", "2", "3", "4", "5", "6"}));
  }
};

QTEST_APPLESS_MAIN(TestIoTextTable)
#include "test_io_text_table.moc"
