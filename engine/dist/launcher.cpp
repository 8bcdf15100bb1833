// Starts and watches the child ranks of a data-parallel run: fork/execve of /proc/self/exe with the
// rank environment, a log file per rank, parent-death signal, and exit-status reports.
#include "engine/dist/launcher.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <mutex>

#include "engine/io/atomic_file.h"
#include "engine/io/error.h"

extern char** environ;

namespace gllm::dist {
namespace {

std::mutex g_mu;  // guards pids_/statuses_ between the monitor and the caller

std::string tail_of(const std::string& path, size_t max_chars) {
  std::string s;
  try {
    s = read_file(path);
  } catch (...) {
    return "(no log)";
  }
  if (s.size() > max_chars) s = "…" + s.substr(s.size() - max_chars);
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s.empty() ? "(empty log)" : s;
}

}  // namespace

bool launched_child() {
  const char* r = std::getenv("GLLM_DIST_RANK");
  return r && std::atoi(r) > 0;
}

std::string Launcher::log_path(int rank) const { return dir_ + "/rank" + std::to_string(rank) + ".log"; }
std::string Launcher::store_path() const { return dir_ + "/store"; }

Launcher::Launcher(int nproc, const std::vector<std::string>& child_args,
                   const std::vector<std::pair<std::string, std::string>>& files)
    : nproc_(nproc) {
  if (nproc < 1 || nproc > 1024) throw Error("--nproc " + std::to_string(nproc) + " is outside [1, 1024]");
  if (nproc == 1) return;
  std::string tmpl = (std::filesystem::temp_directory_path() / "gllm-dist-XXXXXX").string();
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back('\0');
  if (!::mkdtemp(buf.data())) throw Error("could not create a temporary folder for the process store in " + tmpl);
  dir_ = buf.data();
  for (const auto& [name, content] : files) write_file_atomic(dir_ + "/" + name, content);
  const std::string world = std::to_string(nproc);
  ::setenv("GLLM_DIST_WORLD_SIZE", world.c_str(), 1);
  ::setenv("GLLM_DIST_RANK", "0", 1);
  ::setenv("GLLM_DIST_LOCAL_RANK", "0", 1);
  ::setenv("GLLM_DIST_STORE_FILE", store_path().c_str(), 1);

  // Everything the children need is prepared before fork (only async-signal-safe calls after it).
  char exe[4096];
  ssize_t n = ::readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n <= 0) throw Error("cannot find this program's path (/proc/self/exe) to start the other ranks");
  exe[n] = '\0';
  std::vector<std::string> args{exe};
  for (std::string a : child_args) {
    for (auto at = a.find("@DIR@"); at != std::string::npos; at = a.find("@DIR@")) a.replace(at, 5, dir_);
    args.push_back(a);
  }
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::vector<std::string> base_env;
  for (char** e = environ; *e; ++e)
    if (std::strncmp(*e, "GLLM_DIST_RANK=", 15) != 0 && std::strncmp(*e, "GLLM_DIST_LOCAL_RANK=", 21) != 0)
      base_env.emplace_back(*e);
  const pid_t parent = ::getpid();
  pids_.assign(nproc - 1, 0);
  statuses_.assign(nproc - 1, 0);
  for (int rank = 1; rank < nproc; ++rank) {
    std::vector<std::string> env = base_env;
    env.push_back("GLLM_DIST_RANK=" + std::to_string(rank));
    env.push_back("GLLM_DIST_LOCAL_RANK=" + std::to_string(rank));
    std::vector<char*> envp;
    for (auto& e : env) envp.push_back(e.data());
    envp.push_back(nullptr);
    std::string log = log_path(rank);
    pid_t pid = ::fork();
    if (pid < 0) {
      stop_children();
      throw Error("could not start rank " + std::to_string(rank) + " (fork failed: " + std::strerror(errno) + ")");
    }
    if (pid == 0) {
      ::prctl(PR_SET_PDEATHSIG, SIGTERM);
      if (::getppid() != parent) ::_exit(127);
      int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      if (fd >= 0) {
        ::dup2(fd, 1);
        ::dup2(fd, 2);
        ::close(fd);
      }
      int devnull = ::open("/dev/null", O_RDONLY);
      if (devnull >= 0) ::dup2(devnull, 0);
      ::execve(exe, argv.data(), envp.data());
      ::_exit(127);
    }
    pids_[rank - 1] = pid;
  }
  // A child that dies while rank 0 still waits for the group would leave rank 0 waiting for the
  // store timeout; the monitor reports it and ends this process after a grace period.
  monitor_ = std::thread([this] {
    while (!done_.load()) {
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
      std::lock_guard<std::mutex> lk(g_mu);
      for (size_t i = 0; i < pids_.size(); ++i) {
        if (pids_[i] <= 0) continue;
        int st = 0;
        if (::waitpid(pids_[i], &st, WNOHANG) != pids_[i]) continue;
        pids_[i] = 0;
        statuses_[i] = st;
        if (WIFEXITED(st) && WEXITSTATUS(st) == 0) continue;
        std::cerr << "gllm: " << describe(static_cast<int>(i) + 1, st) << "\n";
        // Give rank 0 time to notice through its own collectives and write its summary.
        for (int k = 0; k < 150 && !done_.load(); ++k) {
          g_mu.unlock();
          std::this_thread::sleep_for(std::chrono::milliseconds(200));
          g_mu.lock();
        }
        if (!done_.load()) {
          std::cerr << "gllm: rank 0 did not stop by itself; ending the run\n";
          for (int p : pids_)
            if (p > 0) ::kill(p, SIGTERM);
          std::_Exit(1);
        }
        return;
      }
    }
  });
}

std::string Launcher::describe(int rank, int st) const {
  std::string how = WIFEXITED(st)     ? "exited with status " + std::to_string(WEXITSTATUS(st))
                    : WIFSIGNALED(st) ? "was killed by signal " + std::to_string(WTERMSIG(st))
                                      : "stopped";
  return "rank " + std::to_string(rank) + " " + how + "; its log (" + log_path(rank) + ") ends:\n" +
         tail_of(log_path(rank), 1500);
}

std::string Launcher::wait_children(double timeout_s) {
  done_ = true;
  if (monitor_.joinable()) monitor_.join();
  std::string report;
  auto t_end = std::chrono::steady_clock::now() + std::chrono::milliseconds(static_cast<int64_t>(timeout_s * 1000));
  std::lock_guard<std::mutex> lk(g_mu);
  for (size_t i = 0; i < pids_.size(); ++i) {
    if (pids_[i] > 0) {
      int st = 0;
      while (::waitpid(pids_[i], &st, WNOHANG) == 0) {
        if (std::chrono::steady_clock::now() > t_end) {
          ::kill(pids_[i], SIGKILL);
          ::waitpid(pids_[i], &st, 0);
          break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
      }
      pids_[i] = 0;
      statuses_[i] = st;
    }
    int st = statuses_[i];
    if (!(WIFEXITED(st) && WEXITSTATUS(st) == 0)) report += (report.empty() ? "" : "\n") + describe(static_cast<int>(i) + 1, st);
  }
  return report;
}

void Launcher::stop_children() {
  done_ = true;
  if (monitor_.joinable() && monitor_.get_id() != std::this_thread::get_id()) monitor_.join();
  std::lock_guard<std::mutex> lk(g_mu);
  for (int p : pids_)
    if (p > 0) ::kill(p, SIGTERM);
  for (int k = 0; k < 50; ++k) {
    bool alive = false;
    for (size_t i = 0; i < pids_.size(); ++i) {
      if (pids_[i] <= 0) continue;
      int st = 0;
      if (::waitpid(pids_[i], &st, WNOHANG) == pids_[i]) {
        pids_[i] = 0;
        statuses_[i] = st;
      } else {
        alive = true;
      }
    }
    if (!alive) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  for (size_t i = 0; i < pids_.size(); ++i)
    if (pids_[i] > 0) {
      ::kill(pids_[i], SIGKILL);
      ::waitpid(pids_[i], &statuses_[i], 0);
      pids_[i] = 0;
    }
}

Launcher::~Launcher() {
  stop_children();
  if (!dir_.empty()) {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
    ::unsetenv("GLLM_DIST_WORLD_SIZE");
    ::unsetenv("GLLM_DIST_RANK");
    ::unsetenv("GLLM_DIST_LOCAL_RANK");
    ::unsetenv("GLLM_DIST_STORE_FILE");
  }
}

}  // namespace gllm::dist
