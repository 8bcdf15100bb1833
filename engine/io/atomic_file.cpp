// Crash-safe writes: temporary file in the same folder, fsync, rename over the target, fsync
// folder. POSIX only (the workbench targets Linux); errors carry errno text and the file name.
#include "engine/io/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "engine/io/error.h"

namespace gllm {
namespace {

std::string errno_text() {
  return std::strerror(errno);
}

std::string temp_name_for(const std::string& path) {
  static std::atomic<uint64_t> counter{0};
  std::random_device rd;
  std::ostringstream s;
  s << path << ".tmp." << ::getpid() << "." << counter++ << "." << (rd() & 0xffff);
  return s.str();
}

std::string parent_dir(const std::string& path) {
  std::filesystem::path p(path);
  auto parent = p.parent_path();
  return parent.empty() ? std::string(".") : parent.string();
}

void write_all(int fd, const void* data, size_t bytes, const std::string& path) {
  const char* p = static_cast<const char*>(data);
  while (bytes > 0) {
    ssize_t n = ::write(fd, p, bytes);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw Error("cannot write " + path + ": " + errno_text() +
                  " (check free disk space and permissions)");
    }
    p += n;
    bytes -= static_cast<size_t>(n);
  }
}

}  // namespace

void fsync_directory(const std::string& dir) {
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY);
  if (fd < 0) return;  // best effort: some filesystems refuse directory fds
  ::fsync(fd);
  ::close(fd);
}

void make_directories(const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw Error("cannot create folder " + dir + ": " + ec.message());
}

bool file_exists(const std::string& path) {
  std::error_code ec;
  return std::filesystem::exists(path, ec);
}

AtomicFileWriter::AtomicFileWriter(std::string path) : path_(std::move(path)) {
  tmp_path_ = temp_name_for(path_);
  fd_ = ::open(tmp_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd_ < 0)
    throw Error("cannot create " + tmp_path_ + ": " + errno_text() +
                " (does the folder exist and is it writable?)");
}

AtomicFileWriter::~AtomicFileWriter() {
  if (fd_ >= 0) {
    ::close(fd_);
    ::unlink(tmp_path_.c_str());
  }
}

void AtomicFileWriter::write(const void* data, size_t bytes) {
  if (fd_ < 0) throw Error("internal: write after commit to " + path_);
  write_all(fd_, data, bytes, tmp_path_);
}

void AtomicFileWriter::commit() {
  if (fd_ < 0) throw Error("internal: double commit of " + path_);
  if (::fsync(fd_) != 0) {
    std::string why = errno_text();
    throw Error("cannot fsync " + tmp_path_ + ": " + why);
  }
  ::close(fd_);
  fd_ = -1;
  if (::rename(tmp_path_.c_str(), path_.c_str()) != 0) {
    std::string why = errno_text();
    ::unlink(tmp_path_.c_str());
    throw Error("cannot rename " + tmp_path_ + " to " + path_ + ": " + why);
  }
  fsync_directory(parent_dir(path_));
}

void write_file_atomic(const std::string& path, std::string_view data) {
  AtomicFileWriter w(path);
  w.write(data.data(), data.size());
  w.commit();
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error("cannot read " + path + ": " + errno_text() + " (check the path)");
  std::ostringstream s;
  s << in.rdbuf();
  if (in.bad()) throw Error("error while reading " + path);
  return s.str();
}

std::string read_file_limited(const std::string& path, size_t max_bytes, const std::string& fix) {
  const std::string tail = fix.empty() ? std::string() : "; " + fix;
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
      static_cast<uint64_t>(st.st_size) > max_bytes)
    throw Error(path + " is " + std::to_string(st.st_size) + " bytes, more than the " +
                std::to_string(max_bytes) + " such a file may hold" + tail);
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error("cannot read " + path + ": " + errno_text() + " (check the path)");
  // Reads at most max_bytes + 1 bytes: a device or a file that grows cannot exhaust memory.
  std::string text;
  char buf[1 << 16];
  while (in) {
    in.read(buf, sizeof buf);
    text.append(buf, static_cast<size_t>(in.gcount()));
    if (text.size() > max_bytes)
      throw Error(path + " holds more than " + std::to_string(max_bytes) + " bytes" + tail);
  }
  if (in.bad()) throw Error("error while reading " + path);
  return text;
}

void append_line(const std::string& path, std::string_view line) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) throw Error("cannot open " + path + " for appending: " + errno_text());
  std::string buf(line);
  buf.push_back('\n');
  try {
    write_all(fd, buf.data(), buf.size(), path);
  } catch (...) {
    ::close(fd);
    throw;
  }
  ::close(fd);
}

}  // namespace gllm
