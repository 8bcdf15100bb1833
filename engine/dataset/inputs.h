// The inputs of a prepare: files and folders expanded into an ordered list of regular files, each
// with its format (text or JSON Lines), how it splits into documents, its size and change time.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace gllm {

// Brown: a Brown Form C file (word/TAG tokens), read as its detokenized text, one document each.
enum class InputFormat { Text, Jsonl, Brown };

// How plain text splits into documents. Auto follows the "text" corpus of engine/data/corpus: a
// file named on the command line splits at blank lines, each file found in a folder is one.
enum class DocumentUnit { Auto, File, Paragraphs };

struct InputFile {
  std::string path;  // as opened
  std::string name;  // as the manifest records it: the argument, or argument/relative path
  InputFormat format = InputFormat::Text;
  bool in_folder = false;  // found by walking a folder (Auto: one document per file)
  uint64_t size = 0;       // bytes on disk (compressed size for .gz/.zst)
  int64_t mtime_ns = 0;
};

// "auto": .jsonl, .ndjson or .json (before a .gz/.zst/.zstd suffix) is JSON Lines, else text;
// "brown": every file is Brown Form C (a folder contributes only its ca01 … cr09).
InputFormat input_format_for(const std::string& path, const std::string& format_option);

// Expands the command line's inputs in order; folders are walked recursively, their files sorted
// by path, hidden entries (a name starting with '.') left out. Refuses (gllm::Error naming the path
// and the fix): a path that does not exist, a FIFO, socket or device, a folder that links back to
// one of its ancestors, no files at all, and an input that lies inside `out_dir` (the dataset being
// written). The same file reached twice is read once. `format_option`: "auto" | "text" | "jsonl" |
// "brown".
std::vector<InputFile> expand_inputs(const std::vector<std::string>& inputs,
                                     const std::string& format_option, const std::string& out_dir);

// Throws gllm::Error when a file's size or change time differs from what `f` recorded (an input
// changed while the dataset was being prepared).
void check_input_unchanged(const InputFile& f);

}  // namespace gllm
