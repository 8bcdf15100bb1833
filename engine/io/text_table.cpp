// Display width of UTF-8 text (combining marks zero, East Asian wide two) and the CLI's table
// printer built on it; the ranges follow Unicode's general categories Mn/Me/Cf and
// East_Asian_Width.
#include "engine/io/text_table.h"

#include <algorithm>

#include "engine/io/error.h"

namespace gllm {
namespace {

struct Range {
  char32_t lo, hi;
};

bool in(const Range* ranges, size_t n, char32_t cp) {
  const Range* end = ranges + n;
  const Range* it =
      std::upper_bound(ranges, end, cp, [](char32_t c, const Range& r) { return c < r.lo; });
  return it != ranges && cp <= (it - 1)->hi;
}

// Nonspacing and enclosing marks (Mn, Me) of the scripts and symbol blocks the CLI prints, and the
// zero-width format characters (Cf) and variation selectors. Sorted, disjoint.
constexpr Range kZeroWidth[] = {
    {0x0300, 0x036F},   {0x0483, 0x0489}, {0x0591, 0x05BD}, {0x05BF, 0x05BF},   {0x05C1, 0x05C2},
    {0x05C4, 0x05C5},   {0x05C7, 0x05C7}, {0x0610, 0x061A}, {0x061C, 0x061C},   {0x064B, 0x065F},
    {0x0670, 0x0670},   {0x06D6, 0x06DC}, {0x06DF, 0x06E4}, {0x06E7, 0x06E8},   {0x06EA, 0x06ED},
    {0x180B, 0x180F},   {0x1AB0, 0x1AFF}, {0x1DC0, 0x1DFF}, {0x200B, 0x200F},   {0x202A, 0x202E},
    {0x2060, 0x2064},   {0x2066, 0x206F}, {0x20D0, 0x20FF}, {0x302A, 0x302D},   {0x3099, 0x309A},
    {0xFE00, 0xFE0F},   {0xFE20, 0xFE2F}, {0xFEFF, 0xFEFF}, {0xE0001, 0xE0001}, {0xE0020, 0xE007F},
    {0xE0100, 0xE01EF},
};

// East Asian Wide (W) and Fullwidth (F) characters, emoji included.
constexpr Range kWide[] = {
    {0x1100, 0x115F},   {0x231A, 0x231B},   {0x2329, 0x232A},   {0x23E9, 0x23EC},
    {0x23F0, 0x23F0},   {0x23F3, 0x23F3},   {0x25FD, 0x25FE},   {0x2614, 0x2615},
    {0x2648, 0x2653},   {0x267F, 0x267F},   {0x2693, 0x2693},   {0x26A1, 0x26A1},
    {0x26AA, 0x26AB},   {0x26BD, 0x26BE},   {0x26C4, 0x26C5},   {0x26CE, 0x26CE},
    {0x26D4, 0x26D4},   {0x26EA, 0x26EA},   {0x26F2, 0x26F3},   {0x26F5, 0x26F5},
    {0x26FA, 0x26FA},   {0x26FD, 0x26FD},   {0x2705, 0x2705},   {0x270A, 0x270B},
    {0x2728, 0x2728},   {0x274C, 0x274C},   {0x274E, 0x274E},   {0x2753, 0x2755},
    {0x2757, 0x2757},   {0x2795, 0x2797},   {0x27B0, 0x27B0},   {0x27BF, 0x27BF},
    {0x2B1B, 0x2B1C},   {0x2B50, 0x2B50},   {0x2B55, 0x2B55},   {0x2E80, 0x3029},
    {0x302E, 0x303E},   {0x3041, 0x3098},   {0x309B, 0x33FF},   {0x3400, 0x4DBF},
    {0x4E00, 0x9FFF},   {0xA000, 0xA4CF},   {0xA960, 0xA97F},   {0xAC00, 0xD7A3},
    {0xF900, 0xFAFF},   {0xFE10, 0xFE19},   {0xFE30, 0xFE6F},   {0xFF00, 0xFF60},
    {0xFFE0, 0xFFE6},   {0x16FE0, 0x16FE4}, {0x17000, 0x18CFF}, {0x1B000, 0x1B2FF},
    {0x1F004, 0x1F004}, {0x1F0CF, 0x1F0CF}, {0x1F18E, 0x1F18E}, {0x1F191, 0x1F19A},
    {0x1F200, 0x1F202}, {0x1F210, 0x1F23B}, {0x1F240, 0x1F248}, {0x1F250, 0x1F251},
    {0x1F260, 0x1F265}, {0x1F300, 0x1F320}, {0x1F32D, 0x1F335}, {0x1F337, 0x1F37C},
    {0x1F37E, 0x1F393}, {0x1F3A0, 0x1F3CA}, {0x1F3CF, 0x1F3D3}, {0x1F3E0, 0x1F3F0},
    {0x1F3F4, 0x1F3F4}, {0x1F3F8, 0x1F43E}, {0x1F440, 0x1F440}, {0x1F442, 0x1F4FC},
    {0x1F4FF, 0x1F53D}, {0x1F54B, 0x1F54E}, {0x1F550, 0x1F567}, {0x1F57A, 0x1F57A},
    {0x1F595, 0x1F596}, {0x1F5A4, 0x1F5A4}, {0x1F5FB, 0x1F64F}, {0x1F680, 0x1F6C5},
    {0x1F6CC, 0x1F6CC}, {0x1F6D0, 0x1F6D2}, {0x1F6D5, 0x1F6D7}, {0x1F6EB, 0x1F6EC},
    {0x1F6F4, 0x1F6FC}, {0x1F7E0, 0x1F7EB}, {0x1F90C, 0x1F93A}, {0x1F93C, 0x1F945},
    {0x1F947, 0x1F9FF}, {0x1FA70, 0x1FAFF}, {0x20000, 0x2FFFD}, {0x30000, 0x3FFFD},
};

// Decodes one code point at s[i] and advances i; a malformed sequence yields U+FFFD for one byte.
char32_t next_code_point(std::string_view s, size_t& i) {
  const unsigned char b0 = static_cast<unsigned char>(s[i]);
  int len = b0 < 0x80 ? 1 : (b0 >> 5) == 0x6 ? 2 : (b0 >> 4) == 0xE ? 3 : (b0 >> 3) == 0x1E ? 4 : 0;
  if (len == 0 || i + len > s.size()) {
    ++i;
    return 0xFFFD;
  }
  char32_t cp = len == 1 ? b0 : len == 2 ? (b0 & 0x1F) : len == 3 ? (b0 & 0x0F) : (b0 & 0x07);
  for (int k = 1; k < len; ++k) {
    const unsigned char b = static_cast<unsigned char>(s[i + k]);
    if ((b >> 6) != 0x2) {
      ++i;
      return 0xFFFD;
    }
    cp = (cp << 6) | (b & 0x3F);
  }
  i += len;
  return cp;
}

}  // namespace

int code_point_width(char32_t cp) {
  if (cp < 0x20 || (cp >= 0x7F && cp < 0xA0)) return 0;  // control characters
  if (cp == 0xAD) return 1;                              // soft hyphen: terminals show it
  if (in(kZeroWidth, sizeof kZeroWidth / sizeof kZeroWidth[0], cp)) return 0;
  if (in(kWide, sizeof kWide / sizeof kWide[0], cp)) return 2;
  return 1;
}

size_t display_width(std::string_view utf8) {
  size_t w = 0;
  for (size_t i = 0; i < utf8.size();)
    w += static_cast<size_t>(code_point_width(next_code_point(utf8, i)));
  return w;
}

std::string pad_to(const std::string& text, size_t width, Align align) {
  const size_t w = display_width(text);
  if (w >= width) return text;
  const std::string spaces(width - w, ' ');
  return align == Align::Left ? text + spaces : spaces + text;
}

TextTable::TextTable(std::vector<std::string> header, std::vector<Align> align, size_t gap)
    : header_(std::move(header)), align_(std::move(align)), gap_(gap) {
  align_.resize(header_.size(), Align::Left);
}

void TextTable::add_row(std::vector<std::string> cells) {
  if (cells.size() > header_.size())
    throw Error("table row has " + std::to_string(cells.size()) + " cells but the table has " +
                std::to_string(header_.size()) + " columns");
  cells.resize(header_.size());
  entries_.push_back({false, std::move(cells)});
}

void TextTable::add_line(std::string line) {
  entries_.push_back({true, {std::move(line)}});
}

std::string TextTable::render() const {
  std::vector<size_t> width(header_.size(), 0);
  for (size_t c = 0; c < header_.size(); ++c) width[c] = display_width(header_[c]);
  for (const auto& e : entries_)
    if (!e.free_line)
      for (size_t c = 0; c < e.cells.size(); ++c)
        width[c] = std::max(width[c], display_width(e.cells[c]));
  auto line_of = [&](const std::vector<std::string>& cells) {
    std::string out;
    for (size_t c = 0; c < cells.size(); ++c) {
      if (c) out += std::string(gap_, ' ');
      out += pad_to(cells[c], width[c], align_[c]);
    }
    while (!out.empty() && out.back() == ' ') out.pop_back();
    return out + "\n";
  };
  std::string out = line_of(header_);
  for (const auto& e : entries_) out += e.free_line ? e.cells[0] + "\n" : line_of(e.cells);
  return out;
}

}  // namespace gllm
