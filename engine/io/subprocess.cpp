// posix_spawn-based process runner with captured output, so no argument is ever shell-interpreted.
// The child inherits the environment; stdin is /dev/null.
#include "engine/io/subprocess.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <sstream>

extern char** environ;

namespace gllm {

bool program_available(const std::string& program) {
  const char* path = std::getenv("PATH");
  if (!path) return false;
  std::stringstream ss(path);
  std::string dir;
  while (std::getline(ss, dir, ':')) {
    if (dir.empty()) continue;
    std::string candidate = dir + "/" + program;
    if (::access(candidate.c_str(), X_OK) == 0) return true;
  }
  return false;
}

ProcessResult run_process(const std::vector<std::string>& argv, const std::string& workdir,
                          double timeout_s) {
  ProcessResult result;
  if (argv.empty()) return result;
  int pipefd[2];
  if (::pipe(pipefd) != 0) return result;

  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, pipefd[1], 1);
  posix_spawn_file_actions_adddup2(&actions, pipefd[1], 2);
  posix_spawn_file_actions_addclose(&actions, pipefd[0]);
  posix_spawn_file_actions_addclose(&actions, pipefd[1]);

  // posix_spawn has no portable chdir action in glibc 2.36's public API before addchdir_np;
  // run the program through `env -C` when a working directory is requested.
  std::vector<std::string> wrapped;
  if (!workdir.empty()) {
    wrapped = {"env", "-C", workdir};
    wrapped.insert(wrapped.end(), argv.begin(), argv.end());
    args.clear();
    for (const auto& a : wrapped) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
  }

  pid_t pid = 0;
  int rc = ::posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(pipefd[1]);
  if (rc != 0) {
    ::close(pipefd[0]);
    result.output = std::string("cannot start ") + argv[0] + ": " + std::strerror(rc);
    return result;
  }
  char buf[4096];
  const auto deadline =
      std::chrono::steady_clock::now() +
      std::chrono::milliseconds(static_cast<int64_t>((timeout_s > 0 ? timeout_s : 0) * 1000));
  for (;;) {
    if (timeout_s > 0) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                            deadline - std::chrono::steady_clock::now())
                            .count();
      pollfd pfd{pipefd[0], POLLIN, 0};
      const int ready = left > 0 ? ::poll(&pfd, 1, static_cast<int>(left)) : 0;
      if (ready < 0 && errno == EINTR) continue;
      if (ready == 0) {
        ::kill(pid, SIGKILL);
        result.timed_out = true;
        break;
      }
    }
    const ssize_t n = ::read(pipefd[0], buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    result.output.append(buf, static_cast<size_t>(n));
  }
  ::close(pipefd[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) break;
  }
  if (WIFEXITED(status))
    result.exit_code = WEXITSTATUS(status);
  else
    result.exit_code = 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
  return result;
}

}  // namespace gllm
