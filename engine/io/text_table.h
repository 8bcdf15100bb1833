// Plain-text tables for the CLI, aligned by display width rather than bytes: UTF-8 is decoded,
// combining marks and zero-width characters take no column, East Asian wide characters take two.
#pragma once
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace gllm {

// Columns a terminal gives one code point: 0 (combining marks, zero-width and control characters),
// 2 (East Asian wide and fullwidth characters, emoji) or 1.
int code_point_width(char32_t cp);
// Columns of a UTF-8 string (a malformed byte counts as one column).
size_t display_width(std::string_view utf8);
// `text` followed (Left) or preceded (Right) by spaces up to `width` display columns.
enum class Align { Left, Right };
std::string pad_to(const std::string& text, size_t width, Align align = Align::Left);

// A table of text cells: every column as wide as its widest cell, cells separated by `gap` spaces,
// no trailing spaces. Lines added with add_line() are printed as they are, between rows.
class TextTable {
 public:
  // `align` per column; missing entries are Left.
  explicit TextTable(std::vector<std::string> header, std::vector<Align> align = {},
                     size_t gap = 2);
  // A row; fewer cells than columns leave the rest empty, more are an error (gllm::Error).
  void add_row(std::vector<std::string> cells);
  // A free line (a warning, a note) printed under the rows added so far.
  void add_line(std::string line);
  std::string render() const;  // ends with a newline

 private:
  struct Entry {
    bool free_line = false;
    std::vector<std::string> cells;
  };
  std::vector<std::string> header_;
  std::vector<Align> align_;
  size_t gap_;
  std::vector<Entry> entries_;
};

}  // namespace gllm
