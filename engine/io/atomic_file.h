// Crash-safe file writes (temporary file, flush, fsync, rename, fsync of the folder) and reads.
// Used for configs, checkpoints, summaries and anything else a crash must not half-write.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace gllm {

// Writes `data` to `path` atomically: readers see the old file or the new one, never a mix.
void write_file_atomic(const std::string& path, std::string_view data);

// Streaming variant for large files: append chunks, then commit(); a writer destroyed without
// commit() removes its temporary file and leaves `path` untouched.
class AtomicFileWriter {
 public:
  explicit AtomicFileWriter(std::string path);
  ~AtomicFileWriter();
  AtomicFileWriter(const AtomicFileWriter&) = delete;
  AtomicFileWriter& operator=(const AtomicFileWriter&) = delete;
  void write(const void* data, size_t bytes);
  void commit();

 private:
  std::string path_;
  std::string tmp_path_;
  int fd_ = -1;
};

// Reads a whole file; throws gllm::Error naming the file when it cannot. Only regular files are
// read: a FIFO, device, socket or folder is refused at once, without blocking (regular_file.h).
std::string read_file(const std::string& path);
// The same, refusing (before reading) a file larger than `max_bytes`; `fix` ends that error.
std::string read_file_limited(const std::string& path, size_t max_bytes, const std::string& fix);

// Appends one line and flushes it to the OS (used for metrics.jsonl). A symbolic link or a file
// that is not regular is refused, never written through.
void append_line(const std::string& path, std::string_view line);

// fsync a directory so a rename inside it survives a crash.
void fsync_directory(const std::string& dir);

// Creates a directory and its parents; throws gllm::Error on failure.
void make_directories(const std::string& dir);

bool file_exists(const std::string& path);

}  // namespace gllm
