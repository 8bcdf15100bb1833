// The run-folder lock: flock on run_dir/run.lock held for a run's life, the owner's record in the
// file (pid, host, start time, purpose), and the probes that tell whether a run is alive.
#include "engine/train/run_lock.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <ctime>
#include <nlohmann/json.hpp>

#include "engine/io/error.h"
#include "engine/io/json_read.h"
#include "engine/io/paths.h"
#include "engine/io/regular_file.h"

namespace gllm {
namespace {

std::string this_host() {
  char buf[256] = {0};
  if (::gethostname(buf, sizeof buf - 1) != 0) return "?";
  return buf;
}

std::string lock_path(const std::string& run_dir) {
  return join_path(run_dir, "run.lock");
}

RunOwner owner_from_text(const std::string& text) {
  RunOwner o;
  try {
    auto j = parse_json(text, "run.lock", "", JsonLimits{1 << 16, 4});
    o.pid = static_cast<long>(json_int_or(j, "pid", 0));
    o.host = json_string_or(j, "host", "");
    o.started = json_string_or(j, "started", "");
    o.purpose = json_string_or(j, "purpose", "");
  } catch (const Error&) {
  }
  return o;
}

std::string read_fd_text(int fd) {
  std::string text;
  char buf[4096];
  off_t at = 0;
  for (int i = 0; i < 16; ++i) {  // at most 64 KiB
    ssize_t n = ::pread(fd, buf, sizeof buf, at);
    if (n <= 0) break;
    text.append(buf, static_cast<size_t>(n));
    at += n;
  }
  return text;
}

}  // namespace

bool process_alive(long pid) {
  return pid > 0 && (::kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM);
}

int run_lock_held(const std::string& run_dir) {
  int fd = ::open(lock_path(run_dir).c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return -1;
  struct stat st {};
  int held = -1;
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
    if (::flock(fd, LOCK_SH | LOCK_NB) == 0) {
      held = 0;
      ::flock(fd, LOCK_UN);
    } else if (errno == EWOULDBLOCK) {
      held = 1;
    }
  }
  ::close(fd);
  return held;
}

std::string RunOwner::describe() const {
  if (pid <= 0) return "another process (it left no owner record)";
  std::string s = "pid " + std::to_string(pid);
  if (!host.empty()) s += " on host " + brief_text(host, 64);
  if (!started.empty()) s += " since " + brief_text(started, 40);
  if (!purpose.empty()) s += " (gllm " + brief_text(purpose, 40) + ")";
  return s;
}

RunLock RunLock::acquire(const std::string& run_dir, const std::string& purpose,
                         RunOwner* previous) {
  const std::string path = lock_path(run_dir);
  // Never through a link (it could name another run's summary) nor into a FIFO or device.
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0644);
  if (fd < 0) {
    const int err = errno;
    if (err == ELOOP)
      throw Error("the run-folder lock " + path +
                  " is a symbolic link; a lock is never written through a link — remove the link "
                  "(rm " +
                  path + ") and try again");
    throw Error("cannot open the run-folder lock " + path + ": " + std::strerror(err) +
                " (is the folder writable?)");
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    throw Error("the run-folder lock " + path + " is " + file_kind(st.st_mode) +
                ", not a regular file; remove it and try again");
  }
  // A reader probing the lock (run_lock_held: a shared lock for an instant) is not an owner:
  // a few short retries keep such a probe from refusing a writer.
  int locked = ::flock(fd, LOCK_EX | LOCK_NB);
  for (int i = 0; locked != 0 && errno == EWOULDBLOCK && i < 5; ++i) {
    ::usleep(20000);
    locked = ::flock(fd, LOCK_EX | LOCK_NB);
  }
  if (locked != 0) {
    const int err = errno;
    const RunOwner owner = owner_from_text(read_fd_text(fd));
    ::close(fd);
    if (err == EWOULDBLOCK)
      throw Error(run_dir + " is in use by " + owner.describe() +
                  ": one process writes a run folder at a time. Wait for it to finish, or cancel "
                  "it (Ctrl-C or the workbench's Cancel) and then resume");
    throw Error("cannot lock " + path + ": " + std::strerror(err));
  }
  if (previous) *previous = owner_from_text(read_fd_text(fd));
  std::time_t now = std::time(nullptr);
  std::tm tm{};
  localtime_r(&now, &tm);
  char when[32];
  std::strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S", &tm);
  const std::string record = json_text({{"pid", static_cast<long>(::getpid())},
                                        {"host", this_host()},
                                        {"started", when},
                                        {"purpose", purpose}},
                                       -1) +
                             "\n";
  // The record is advisory text for the next process's message; the flock is the lock.
  if (::ftruncate(fd, 0) != 0 || ::pwrite(fd, record.data(), record.size(), 0) < 0) {
    const std::string why = std::strerror(errno);
    ::close(fd);
    throw Error("cannot write the run-folder lock " + path + ": " + why +
                " (check free disk space)");
  }
  RunLock lock;
  lock.fd_ = fd;
  return lock;
}

RunLock::RunLock(RunLock&& other) noexcept : fd_(other.fd_) {
  other.fd_ = -1;
}

RunLock& RunLock::operator=(RunLock&& other) noexcept {
  if (this != &other) {
    release();
    fd_ = other.fd_;
    other.fd_ = -1;
  }
  return *this;
}

RunLock::~RunLock() {
  release();
}

void RunLock::release() {
  if (fd_ < 0) return;
  // Best effort: an empty file says "no owner"; the flock itself goes with the close.
  const int truncated = ::ftruncate(fd_, 0);
  (void)truncated;
  ::close(fd_);
  fd_ = -1;
}

RunOwner read_run_owner(const std::string& run_dir, bool* locked) {
  if (locked) *locked = false;
  int fd = ::open(lock_path(run_dir).c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return {};
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return {};
  }
  RunOwner o = owner_from_text(read_fd_text(fd));
  ::close(fd);
  if (locked)
    *locked = o.pid > 0 && (o.host.empty() || o.host == this_host()) && process_alive(o.pid);
  return o;
}

}  // namespace gllm
