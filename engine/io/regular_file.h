// What kind of file a path is, for readers of outside bytes: only regular files are read, and a
// FIFO, device, socket or folder is refused at once (never opened in a way that blocks).
#pragma once
#include <string>

namespace gllm {

// Throws gllm::Error naming the path and what it is unless `path` is a regular file that can be
// opened for reading; a FIFO is refused without blocking.
void check_regular_file(const std::string& path);
// "a named pipe (FIFO)", "a folder", "a character device", … for a stat st_mode.
std::string file_kind(unsigned mode);

}  // namespace gllm
