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
#include "engine/io/regular_file.h"

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
  // O_EXCL: a link planted under the temporary name is never followed (the name is new).
  fd_ = ::open(tmp_path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
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

namespace {

// Opens `path` for reading only when it is a regular file: O_NONBLOCK makes opening a FIFO return
// at once (no writer needed), fstat then refuses FIFOs, devices, sockets and folders before any
// read can block or run without end. Returns the descriptor (blocking again) and the size.
int open_regular(const std::string& path, uint64_t* size) {
  int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    const int err = errno;
    if (err == EISDIR) throw Error(path + " is a folder, not a file; give the path of a file");
    throw Error("cannot read " + path + ": " + std::strerror(err) + " (check the path)");
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const std::string why = errno_text();
    ::close(fd);
    throw Error("cannot read " + path + ": " + why);
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    throw Error(path + " is " + file_kind(st.st_mode) +
                ", not a regular file; give the path of a file (a pipe or device is never read)");
  }
  const int flags = ::fcntl(fd, F_GETFL);
  if (flags >= 0) ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
  if (size) *size = static_cast<uint64_t>(st.st_size);
  return fd;
}

// Reads up to `max_bytes` + 1 bytes from `fd` (closing it); a file that grows while it is read
// cannot exhaust memory.
std::string read_fd(int fd, const std::string& path, size_t max_bytes, const std::string& tail) {
  std::string text;
  char buf[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      const std::string why = errno_text();
      ::close(fd);
      throw Error("error while reading " + path + ": " + why);
    }
    if (n == 0) break;
    text.append(buf, static_cast<size_t>(n));
    if (text.size() > max_bytes) {
      ::close(fd);
      throw Error(path + " holds more than " + std::to_string(max_bytes) + " bytes" + tail);
    }
  }
  ::close(fd);
  return text;
}

}  // namespace

std::string file_kind(unsigned mode) {
  if (S_ISREG(mode)) return "a regular file";
  if (S_ISDIR(mode)) return "a folder";
  if (S_ISFIFO(mode)) return "a named pipe (FIFO)";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISLNK(mode)) return "a symbolic link";
  return "not a regular file";
}

void check_regular_file(const std::string& path) {
  ::close(open_regular(path, nullptr));
}

std::string read_file(const std::string& path) {
  return read_fd(open_regular(path, nullptr), path, std::string().max_size() / 2, "");
}

std::string read_file_limited(const std::string& path, size_t max_bytes, const std::string& fix) {
  const std::string tail = fix.empty() ? std::string() : "; " + fix;
  uint64_t size = 0;
  const int fd = open_regular(path, &size);
  if (size > max_bytes) {
    ::close(fd);
    throw Error(path + " is " + std::to_string(size) + " bytes, more than the " +
                std::to_string(max_bytes) + " such a file may hold" + tail);
  }
  return read_fd(fd, path, max_bytes, tail);
}

void append_line(const std::string& path, std::string_view line) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC,
                  0644);
  if (fd < 0) {
    const int err = errno;
    if (err == ELOOP)
      throw Error(path +
                  " is a symbolic link; a run's files are never written through a link — "
                  "replace the link with the file it points to");
    struct stat st {};
    if (::lstat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode))  // a FIFO without a reader
      throw Error(path + " is " + file_kind(st.st_mode) +
                  ", not a regular file; move it aside so the file can be written");
    throw Error("cannot open " + path + " for appending: " + std::strerror(err));
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    throw Error(path + " is " + file_kind(st.st_mode) +
                ", not a regular file; move it aside so the file can be written");
  }
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
