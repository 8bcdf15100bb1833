// Reads a rank's launch environment (gllm --nproc, torchrun, SLURM srun), and starts and watches
// the child ranks of `--nproc`: fork/execve of /proc/self/exe, a log per rank, exit-status reports.
#include "engine/dist/launcher.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <mutex>

#include "engine/io/atomic_file.h"
#include "engine/io/error.h"
#include "engine/io/paths.h"

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

std::string env_str(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::string(v) : std::string();
}

bool env_set(const char* name) {
  return !env_str(name).empty();
}

// A whole number in [lo, hi] from the environment; `fallback` when unset (required: an error).
int env_int(const char* name, int fallback, int lo, int hi, const std::string& why_required = "") {
  const std::string v = env_str(name);
  if (v.empty()) {
    if (!why_required.empty())
      throw Error(std::string(name) + " is not set, but " + why_required +
                  "; set it (or unset the others)");
    return fallback;
  }
  size_t i = 0;
  long long x = 0;
  for (; i < v.size() && std::isdigit(static_cast<unsigned char>(v[i])) && x <= hi; ++i)
    x = 10 * x + (v[i] - '0');
  if (i != v.size() || x < lo || x > hi)
    throw Error(std::string(name) + "=\"" + v + "\" is not a whole number in [" +
                std::to_string(lo) + ", " + std::to_string(hi) + "]; fix or unset it");
  return static_cast<int>(x);
}

constexpr int kMaxWorld = 1 << 16;

}  // namespace

std::string first_slurm_host(const std::string& nodelist) {
  // Hosts are separated by commas outside brackets; a bracket holds ranges "003-005" or single
  // numbers "010" whose first entry, zero padding kept, completes the host name.
  std::string host;
  for (size_t i = 0; i < nodelist.size(); ++i) {
    const char ch = nodelist[i];
    if (ch == ',') break;
    if (ch != '[') {
      host += ch;
      continue;
    }
    size_t end = nodelist.find(']', i);
    if (end == std::string::npos)
      throw Error("SLURM node list \"" + nodelist + "\" has an unclosed '['");
    std::string first = nodelist.substr(i + 1, end - i - 1);
    first = first.substr(0, first.find_first_of(",-"));
    if (first.empty()) throw Error("SLURM node list \"" + nodelist + "\" has an empty range");
    host += first;
    i = end;
  }
  while (!host.empty() && std::isspace(static_cast<unsigned char>(host.back()))) host.pop_back();
  return host;
}

LaunchEnv launch_env() {
  LaunchEnv e;
  if (env_set("GLLM_DIST_WORLD_SIZE")) {  // `gllm train --nproc`, or set by hand
    e.source = "gllm";
    e.world_size = env_int("GLLM_DIST_WORLD_SIZE", 1, 1, kMaxWorld);
    e.rank = env_int("GLLM_DIST_RANK", 0, 0, e.world_size - 1);
    e.local_rank = env_int("GLLM_DIST_LOCAL_RANK", e.rank, 0, kMaxWorld);
    e.store_file = env_str("GLLM_DIST_STORE_FILE");
    if (env_set("GLLM_DIST_MASTER_ADDR")) e.master_addr = env_str("GLLM_DIST_MASTER_ADDR");
    e.master_port = env_int("GLLM_DIST_MASTER_PORT", e.master_port, 1, 65535);
  } else if (env_set("WORLD_SIZE")) {  // torchrun (torch.distributed.run) and its env:// convention
    e.source = "torchrun";
    const std::string why = "WORLD_SIZE is (a torchrun-style launch)";
    e.world_size = env_int("WORLD_SIZE", 1, 1, kMaxWorld);
    e.rank = env_int("RANK", 0, 0, e.world_size - 1, why);
    e.local_rank = env_int("LOCAL_RANK", e.rank, 0, kMaxWorld);
    if (e.world_size > 1) {
      if (!env_set("MASTER_ADDR"))
        throw Error(
            "MASTER_ADDR is not set, but WORLD_SIZE is (a torchrun-style launch); set it to rank "
            "0's host");
      e.master_addr = env_str("MASTER_ADDR");
      e.master_port = env_int("MASTER_PORT", 0, 1, 65535, why);
    }
    const std::string agent = env_str("TORCHELASTIC_USE_AGENT_STORE");
    if (agent == "True" || agent == "true" || agent == "1") {
      e.agent_store = true;
      e.store_prefix =
          "/worker/attempt_" + std::to_string(env_int("TORCHELASTIC_RESTART_COUNT", 0, 0, 1 << 30));
    }
  } else if (env_set("SLURM_STEP_ID") && env_set("SLURM_PROCID")) {  // a task of an srun step
    // Only inside srun: a batch script also sees SLURM_NTASKS and SLURM_PROCID=0, but runs once.
    e.source = "slurm";
    const std::string why = "SLURM_PROCID is (an srun launch)";
    e.world_size = env_int("SLURM_NTASKS", 1, 1, kMaxWorld, why);
    e.rank = env_int("SLURM_PROCID", 0, 0, e.world_size - 1);
    e.local_rank = env_int("SLURM_LOCALID", 0, 0, kMaxWorld);
    if (env_set("MASTER_ADDR")) {
      e.master_addr = env_str("MASTER_ADDR");
    } else if (env_set("SLURM_STEP_NODELIST") || env_set("SLURM_NODELIST")) {
      e.master_addr =
          first_slurm_host(env_set("SLURM_STEP_NODELIST") ? env_str("SLURM_STEP_NODELIST")
                                                          : env_str("SLURM_NODELIST"));
    } else if (env_set("SLURM_LAUNCH_NODE_IPADDR")) {
      e.master_addr = env_str("SLURM_LAUNCH_NODE_IPADDR");
    }
    e.master_port = env_int("MASTER_PORT", e.master_port, 1, 65535);
  }
  return e;
}

bool launched_child() {
  try {
    return launch_env().rank > 0;
  } catch (const Error&) {
    return false;  // the malformed variable is reported when the rank joins its group
  }
}

std::string Launcher::log_path(int rank) const {
  return dir_ + "/rank" + std::to_string(rank) + ".log";
}
std::string Launcher::store_path() const {
  return dir_ + "/store";
}

Launcher::Launcher(int nproc, const std::vector<std::string>& child_args,
                   const std::vector<std::pair<std::string, std::string>>& files)
    : nproc_(nproc) {
  if (nproc < 1 || nproc > 1024)
    throw Error("--nproc " + std::to_string(nproc) + " is outside [1, 1024]");
  if (nproc == 1) return;
  std::string tmpl = (std::filesystem::temp_directory_path() / "gllm-dist-XXXXXX").string();
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back('\0');
  if (!::mkdtemp(buf.data()))
    throw Error("could not create a temporary folder for the process store in " + tmpl);
  dir_ = buf.data();
  for (const auto& [name, content] : files) write_file_atomic(dir_ + "/" + name, content);
  const std::string world = std::to_string(nproc);
  ::setenv("GLLM_DIST_WORLD_SIZE", world.c_str(), 1);
  ::setenv("GLLM_DIST_RANK", "0", 1);
  ::setenv("GLLM_DIST_LOCAL_RANK", "0", 1);
  ::setenv("GLLM_DIST_STORE_FILE", store_path().c_str(), 1);

  // Everything the children need is prepared before fork (only async-signal-safe calls after it).
  std::vector<std::string> args{this_program_path()};
  for (std::string a : child_args) {
    for (auto at = a.find("@DIR@"); at != std::string::npos; at = a.find("@DIR@"))
      a.replace(at, 5, dir_);
    args.push_back(a);
  }
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::vector<std::string> base_env;
  for (char** e = environ; *e; ++e)
    if (std::strncmp(*e, "GLLM_DIST_RANK=", 15) != 0 &&
        std::strncmp(*e, "GLLM_DIST_LOCAL_RANK=", 21) != 0)
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
      throw Error("could not start rank " + std::to_string(rank) +
                  " (fork failed: " + std::strerror(errno) + ")");
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
      ::execve(argv[0], argv.data(), envp.data());
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
  auto t_end = std::chrono::steady_clock::now() +
               std::chrono::milliseconds(static_cast<int64_t>(timeout_s * 1000));
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
    if (!(WIFEXITED(st) && WEXITSTATUS(st) == 0))
      report += (report.empty() ? "" : "\n") + describe(static_cast<int>(i) + 1, st);
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
