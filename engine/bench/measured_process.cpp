// A child process timed from the outside: fork/execvp with redirected streams, its stderr read
// line by line with arrival times, and wait4 for its exit status and peak resident memory.
#include "engine/bench/measured_process.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>

#include "engine/io/error.h"

namespace gllm::bench {
namespace {

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

int open_or_throw(const std::string& path, int flags, const std::string& what) {
  const int fd = ::open(path.c_str(), flags | O_CLOEXEC, 0644);
  if (fd < 0) throw Error("cannot open " + path + " for the " + what + ": " + std::strerror(errno));
  return fd;
}

}  // namespace

ChildProcess::ChildProcess(const std::vector<std::string>& argv, const std::string& stdin_path,
                           const std::string& stdout_path, const std::string& stderr_path) {
  if (argv.empty()) throw Error("no program to run");
  const int in = open_or_throw(stdin_path.empty() ? "/dev/null" : stdin_path, O_RDONLY, "input");
  const int out = open_or_throw(stdout_path.empty() ? "/dev/null" : stdout_path,
                                O_WRONLY | O_CREAT | O_TRUNC, "output");
  int err = -1, pipe_fds[2] = {-1, -1};
  if (stderr_path.empty()) {
    if (::pipe2(pipe_fds, O_CLOEXEC) != 0) {
      ::close(in), ::close(out);
      throw Error(std::string("cannot make a pipe: ") + std::strerror(errno));
    }
    err = pipe_fds[1];
  } else {
    err = open_or_throw(stderr_path, O_WRONLY | O_CREAT | O_TRUNC, "error log");
  }
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  start_ = now_s();
  pid_ = ::fork();
  if (pid_ == 0) {
    ::dup2(in, 0), ::dup2(out, 1), ::dup2(err, 2);
    ::execvp(args[0], args.data());
    // Only async-signal-safe calls between fork and exit (the parent may have threads).
    static const char kPrefix[] = "cannot start ";
    (void)!::write(2, kPrefix, sizeof kPrefix - 1);
    (void)!::write(2, args[0], std::strlen(args[0]));
    (void)!::write(2, "\n", 1);
    ::_exit(127);
  }
  const int fork_errno = errno;
  ::close(in), ::close(out), ::close(err);
  if (pid_ < 0) {
    if (pipe_fds[0] >= 0) ::close(pipe_fds[0]);
    throw Error("cannot start " + argv[0] + ": " + std::strerror(fork_errno));
  }
  err_fd_ = pipe_fds[0];
}

ChildProcess::~ChildProcess() {
  if (pid_ > 0) {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }
  if (err_fd_ >= 0) ::close(err_fd_);
}

MeasuredProcess ChildProcess::finish() {
  MeasuredProcess r;
  if (err_fd_ >= 0) {
    std::string partial;
    char buf[4096];
    for (;;) {
      const ssize_t n = ::read(err_fd_, buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      const double t = now_s() - start_;
      partial.append(buf, static_cast<size_t>(n));
      for (size_t nl; (nl = partial.find('\n')) != std::string::npos;) {
        r.stderr_lines.emplace_back(t, partial.substr(0, nl));
        partial.erase(0, nl + 1);
      }
    }
    if (!partial.empty()) r.stderr_lines.emplace_back(now_s() - start_, partial);
    ::close(err_fd_);
    err_fd_ = -1;
  }
  int status = 0;
  struct rusage ru {};
  while (::wait4(pid_, &status, 0, &ru) < 0 && errno == EINTR) {
  }
  pid_ = -1;
  r.wall_s = now_s() - start_;
  r.peak_rss_mib = static_cast<double>(ru.ru_maxrss) / 1024.0;  // KiB on Linux
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return r;
}

MeasuredProcess run_measured(const std::vector<std::string>& argv, const std::string& stdin_path,
                             const std::string& stdout_path) {
  ChildProcess child(argv, stdin_path, stdout_path);
  return child.finish();
}

}  // namespace gllm::bench
