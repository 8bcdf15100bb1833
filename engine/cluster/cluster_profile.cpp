// Cluster profiles: the schema (unknown keys are errors), SLURM-spelling checks for time limits,
// signals and memory, and the profile files in the user's config folder (atomic writes).
#include "engine/cluster/cluster_profile.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <regex>

#include "engine/io/atomic_file.h"
#include "engine/io/error.h"
#include "engine/io/json_read.h"
#include "engine/io/paths.h"

namespace gllm {

namespace {

// "16G" → MiB; -1 when it is not SLURM's memory spelling (a number with K, M, G or T; M if none).
double mem_mib(const std::string& s) {
  static const std::regex re(R"(^([0-9]+)([KMGTkmgt]?)$)");
  std::smatch m;
  if (!std::regex_match(s, m, re)) return -1;
  double v = std::stod(m[1].str());
  const char u = m[2].str().empty() ? 'M' : static_cast<char>(std::toupper(m[2].str()[0]));
  if (u == 'K') v /= 1024;
  if (u == 'G') v *= 1024;
  if (u == 'T') v *= 1024 * 1024;
  return v;
}

bool one_line(const std::string& s) {
  return s.find('\n') == std::string::npos && s.find('\r') == std::string::npos;
}

void check_text(const std::string& key, const std::string& v, const std::regex& re,
                const std::string& expect) {
  if (!v.empty() && !std::regex_match(v, re))
    throw ConfigError(key, "'" + brief_text(v, 60) + "' is not " + expect);
}

std::vector<std::string> string_list(const nlohmann::json& j, const std::string& key) {
  if (!j.is_array()) throw ConfigError(key, "expected a list of strings, got " + json_brief(j));
  std::vector<std::string> out;
  for (size_t i = 0; i < j.size(); ++i) {
    if (!j[i].is_string())
      throw ConfigError(key + "[" + std::to_string(i) + "]",
                        "expected a string, got " + json_brief(j[i]));
    const std::string v = j[i].get<std::string>();
    if (!one_line(v))
      throw ConfigError(key + "[" + std::to_string(i) + "]", "holds a line break; one line each");
    out.push_back(v);
  }
  return out;
}

}  // namespace

const Schema<ClusterProfile>& ClusterProfile::schema() {
  static const Schema<ClusterProfile> s = [] {
    Schema<ClusterProfile> s;
    s.text("partition", &ClusterProfile::partition, "SLURM partition (--partition)")
        .text("account", &ClusterProfile::account, "Account charged (--account)")
        .text("qos", &ClusterProfile::qos, "Quality of service (--qos)")
        .text("time_limit", &ClusterProfile::time_limit,
              "Time limit per task (--time: MM, HH:MM:SS, D-HH:MM:SS)")
        .integer("nodes", &ClusterProfile::nodes, 1, 4096, "Nodes per task (--nodes)")
        .integer("tasks_per_node", &ClusterProfile::tasks_per_node, 1, 256,
                 "Trainer processes per node (--ntasks-per-node; data-parallel ranks)")
        .integer("gpus_per_node", &ClusterProfile::gpus_per_node, 0, 64,
                 "GPUs per node (--gpus-per-node; 0: none)")
        .integer("cpus_per_task", &ClusterProfile::cpus_per_task, 0, 1024,
                 "CPUs per trainer process (--cpus-per-task; 0: SLURM's default)")
        .text("mem_per_task", &ClusterProfile::mem_per_task,
              "Memory per trainer process (16G, 2000M; empty: SLURM's default)")
        .text("constraint", &ClusterProfile::constraint, "Node features (--constraint)")
        .text("runs_root", &ClusterProfile::runs_root,
              "Shared folder the runs go into (visible from the nodes and this machine)")
        .text("signal", &ClusterProfile::signal,
              "Warning signal before the time limit, SIG@SECONDS (USR1@120): the trainer "
              "checkpoints and the task is requeued")
        .flag("requeue", &ClusterProfile::requeue,
              "Requeue preempted or warned tasks (--requeue); they resume from their checkpoint")
        .integer("max_parallel", &ClusterProfile::max_parallel, 0, 100000,
                 "Array tasks running at once (%N); 0: no limit")
        .text("gllm", &ClusterProfile::gllm,
              "The gllm program on the nodes (empty: this gllm's absolute path)");
    s.check([](const ClusterProfile& p, const std::string&) {
      static const std::regex time_re(
          R"(^([0-9]+|[0-9]+:[0-9]{1,2}|[0-9]+:[0-9]{1,2}:[0-9]{1,2}|[0-9]+-[0-9]{1,2}(:[0-9]{1,2}(:[0-9]{1,2})?)?|UNLIMITED|INFINITE)$)");
      check_text("time_limit", p.time_limit, time_re,
                 "a SLURM time limit (MM, HH:MM:SS or D-HH:MM:SS, e.g. 02:00:00)");
      static const std::regex sig_re(R"(^(USR1|USR2)@[0-9]{1,5}$)");
      if (!std::regex_match(p.signal, sig_re))
        throw ConfigError("signal",
                          "'" + brief_text(p.signal, 60) +
                              "' is not SIG@SECONDS with SIG USR1 or USR2 (e.g. USR1@120): the "
                              "trainer checkpoints on that signal; SLURM's B: (batch shell only) "
                              "would not reach it");
      if (!p.mem_per_task.empty() && mem_mib(p.mem_per_task) <= 0)
        throw ConfigError("mem_per_task", "'" + brief_text(p.mem_per_task, 60) +
                                              "' is not a memory size (a number with K, M, G or "
                                              "T, e.g. 16G)");
      for (const std::string* v :
           {&p.partition, &p.account, &p.qos, &p.constraint, &p.runs_root, &p.gllm})
        if (!one_line(*v)) throw ConfigError("profile", "a value holds a line break");
      static const std::regex word_re(R"(^[A-Za-z0-9_.,:|&\[\]*+=-]*$)");
      check_text("partition", p.partition, word_re, "a partition name (see sinfo)");
      check_text("account", p.account, word_re, "an account name");
      check_text("qos", p.qos, word_re, "a QoS name");
      for (const auto& e : p.extra_sbatch)
        if (e.rfind("--", 0) != 0 && e.rfind("-", 0) != 0)
          throw ConfigError("extra_sbatch", "'" + brief_text(e, 60) +
                                                "' is not an sbatch option (write it as "
                                                "--key=value, without #SBATCH)");
    });
    return s;
  }();
  return s;
}

ClusterProfile ClusterProfile::from_json(const nlohmann::json& j, const std::string& name) {
  ClusterProfile p;
  p.name = name;
  if (!j.is_object()) throw ConfigError("", "expected a JSON object, got " + json_brief(j));
  nlohmann::json rest = j;
  if (rest.contains("extra_sbatch")) {
    p.extra_sbatch = string_list(rest["extra_sbatch"], "extra_sbatch");
    rest.erase("extra_sbatch");
  }
  if (rest.contains("setup")) {
    p.setup = string_list(rest["setup"], "setup");
    rest.erase("setup");
  }
  try {
    schema().from_json(p, rest);
  } catch (const ConfigError& e) {
    if (std::string(e.what()).find("unknown key") != std::string::npos)
      throw ConfigError("", std::string(e.what()) + " (also: extra_sbatch, setup)");
    throw;
  }
  return p;
}

nlohmann::json ClusterProfile::to_json() const {
  nlohmann::json j = schema().to_json(*this);
  j["extra_sbatch"] = extra_sbatch;
  j["setup"] = setup;
  return j;
}

std::string ClusterProfile::mem_per_node() const {
  if (mem_per_task.empty()) return "";
  return std::to_string(static_cast<long long>(std::ceil(mem_mib(mem_per_task) * tasks_per_node))) +
         "M";
}

std::string user_config_dir() {
  if (const char* d = std::getenv("GLLM_CONFIG"); d && *d) return d;
  if (const char* x = std::getenv("XDG_CONFIG_HOME"); x && *x) return join_path(x, "gllm");
  if (const char* h = std::getenv("HOME"); h && *h) return join_path(h, ".config/gllm");
  return ".config/gllm";
}

std::string cluster_profiles_dir() {
  return join_path(user_config_dir(), "clusters");
}

void check_profile_name(const std::string& name) {
  static const std::regex re(R"(^[A-Za-z0-9_-][A-Za-z0-9_.-]{0,63}$)");
  if (!std::regex_match(name, re))
    throw Error("cluster profile name '" + brief_text(name, 60) +
                "' is not a name: use letters, digits, '-', '_' and '.' (at most 64, not "
                "starting with '.')");
}

ClusterProfile load_cluster_profile(const std::string& name) {
  check_profile_name(name);
  const std::string path = join_path(cluster_profiles_dir(), name + ".json");
  if (!file_exists(path)) {
    std::string known;
    for (const auto& n : list_cluster_profiles()) known += (known.empty() ? "" : ", ") + n;
    throw Error("no cluster profile '" + name + "' (" + path + "); create it with `gllm cluster " +
                "set " + name + " --partition P …`" +
                (known.empty() ? std::string() : "; known profiles: " + known));
  }
  try {
    return ClusterProfile::from_json(read_json_file(path,
                                                    "fix the file or write it again with "
                                                    "`gllm cluster set " +
                                                        name + "`",
                                                    JsonLimits{1u << 20, 8}),
                                     name);
  } catch (const ConfigError& e) {
    throw Error(path + ": " + e.what());
  }
}

std::string save_cluster_profile(const ClusterProfile& p) {
  check_profile_name(p.name);
  ClusterProfile::from_json(p.to_json(), p.name);  // never writes a profile that would not read
  make_directories(cluster_profiles_dir());
  const std::string path = join_path(cluster_profiles_dir(), p.name + ".json");
  write_file_atomic(path, p.to_json().dump(2) + "\n");
  return path;
}

bool remove_cluster_profile(const std::string& name) {
  check_profile_name(name);
  std::error_code ec;
  return std::filesystem::remove(join_path(cluster_profiles_dir(), name + ".json"), ec);
}

std::vector<std::string> list_cluster_profiles(std::vector<std::string>* problems) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(cluster_profiles_dir(), ec)) {
    if (e.path().extension() != ".json") continue;
    const std::string name = e.path().stem().string();
    try {
      load_cluster_profile(name);
      out.push_back(name);
    } catch (const Error& err) {
      if (problems) problems->push_back(err.what());
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace gllm
