// Run folders: metrics.jsonl append/read with torn-tail tolerance, checkpoint sidecars with sizes
// and SHA-512 digests, keep-last-K pruning, summaries and the run list shared by GUI and CLI.
#include "engine/train/run_store.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <regex>

#include "engine/io/atomic_file.h"
#include "engine/io/error.h"
#include "engine/io/paths.h"
#include "engine/io/sha512.h"

namespace fs = std::filesystem;

namespace gllm {
namespace {

std::string step_stem(int64_t step) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "step_%06lld", static_cast<long long>(step));
  return buf;
}

std::string file_digest(const std::string& path) {
  auto d = sha512_file(path);
  return to_hex(d.data(), d.size());
}

double num_or(const nlohmann::json& j, const char* key, double fallback) {
  if (j.is_object() && j.contains(key) && j[key].is_number()) return j[key].get<double>();
  return fallback;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Reading

MetricsFile read_metrics(const std::string& path) {
  MetricsFile out;
  if (!file_exists(path)) return out;
  std::string text = read_file(path);
  size_t pos = 0;
  int line_no = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    bool last = nl == std::string::npos;
    std::string line = text.substr(pos, last ? std::string::npos : nl - pos);
    pos = last ? text.size() : nl + 1;
    ++line_no;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    nlohmann::json j;
    bool ok = true;
    try {
      j = nlohmann::json::parse(line);
    } catch (const nlohmann::json::parse_error&) {
      ok = false;
    }
    if (ok && (!j.is_object() || !j.contains("step") || !j["step"].is_number_integer())) ok = false;
    if (!ok) {
      bool at_end = pos >= text.size();
      if (at_end && (last || text.find_first_not_of(" \t\r\n", pos) == std::string::npos)) {
        out.torn_tail = true;
        out.warning = path + ": line " + std::to_string(line_no) +
                      " is incomplete (the run was interrupted while writing it); it was ignored";
        break;
      }
      throw Error(path + ": line " + std::to_string(line_no) +
                  " is not a metrics record (a JSON object with an integer \"step\"); the file is "
                  "corrupted — restore it or remove the bad line");
    }
    out.records.push_back(std::move(j));
  }
  return out;
}

std::vector<CheckpointInfo> list_checkpoints(const std::string& run_dir) {
  std::vector<CheckpointInfo> out;
  std::string dir = join_path(run_dir, "checkpoints");
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return out;
  static const std::regex re("step_([0-9]+)\\.json");
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    std::smatch m;
    std::string name = e.path().filename().string();
    if (!std::regex_match(name, m, re)) continue;
    CheckpointInfo c;
    c.step = std::stoll(m[1].str());
    c.sidecar_path = e.path().string();
    std::string stem = join_path(dir, step_stem(c.step));
    c.weights_path = stem + ".safetensors";
    c.optimizer_path = stem + ".optim.safetensors";
    try {
      c.sidecar = nlohmann::json::parse(read_file(c.sidecar_path));
    } catch (const std::exception&) {
      continue;  // unreadable sidecar: not a committed checkpoint
    }
    out.push_back(std::move(c));
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.step < b.step; });
  return out;
}

void verify_checkpoint(const CheckpointInfo& c) {
  const auto& s = c.sidecar;
  if (!s.is_object() || s.value("format", "") != "gllm-checkpoint-1")
    throw Error(c.sidecar_path + " is not a gllm checkpoint sidecar; remove the checkpoint or resume from an earlier one");
  auto check = [&](const std::string& path, const char* key) {
    if (!file_exists(path))
      throw Error("checkpoint step " + std::to_string(c.step) + ": " + path +
                  " is missing; resume from an earlier checkpoint or retrain");
    if (!s.contains(key) || !s[key].is_object())
      throw Error(c.sidecar_path + ": no record of " + key + "; the sidecar is damaged");
    auto size = static_cast<uintmax_t>(s[key].value("bytes", int64_t(-1)));
    std::error_code ec;
    auto actual = fs::file_size(path, ec);
    if (ec || actual != size)
      throw Error("checkpoint step " + std::to_string(c.step) + ": " + path + " has " +
                  std::to_string(actual) + " bytes, expected " + std::to_string(size) +
                  " (truncated or overwritten); resume from an earlier checkpoint");
    if (file_digest(path) != s[key].value("sha512", ""))
      throw Error("checkpoint step " + std::to_string(c.step) + ": " + path +
                  " does not match its recorded SHA-512 (corrupted); resume from an earlier checkpoint");
  };
  check(c.weights_path, "weights");
  check(c.optimizer_path, "optimizer");
}

CheckpointInfo last_valid_checkpoint(const std::string& run_dir, std::vector<std::string>* skipped) {
  auto all = list_checkpoints(run_dir);
  for (auto it = all.rbegin(); it != all.rend(); ++it) {
    try {
      verify_checkpoint(*it);
      return *it;
    } catch (const Error& e) {
      if (skipped) skipped->push_back(e.what());
    }
  }
  throw Error("no valid checkpoint in " + run_dir +
              (all.empty() ? " (none was written yet; start the run again with gllm train)"
                           : " (every checkpoint failed verification; start the run again)"));
}

std::string resolve_weights_path(const std::string& p) {
  std::error_code ec;
  if (fs::is_directory(p, ec)) {
    if (file_exists(join_path(p, "config.json"))) return last_valid_checkpoint(p).weights_path;
    throw Error(p + " is a folder but not a run folder (no config.json); give a run folder or a .safetensors file");
  }
  if (!file_exists(p)) throw Error(p + " does not exist; give a run folder or a checkpoint .safetensors file");
  if (p.size() > 5 && p.substr(p.size() - 5) == ".json") {
    std::string w = p.substr(0, p.size() - 5) + ".safetensors";
    if (!file_exists(w)) throw Error("the weights " + w + " of sidecar " + p + " are missing");
    return w;
  }
  return p;
}

RunInfo read_run(const std::string& run_dir) {
  RunInfo r;
  r.dir = run_dir;
  std::string cfg_path = join_path(run_dir, "config.json");
  if (!file_exists(cfg_path)) throw Error(run_dir + " is not a run folder (no config.json)");
  try {
    r.config = nlohmann::json::parse(read_file(cfg_path));
  } catch (const nlohmann::json::parse_error& e) {
    throw Error(cfg_path + " is not valid JSON (" + e.what() + "); restore it from the preset");
  }
  r.name = r.config.value("name", "");
  r.description = r.config.value("description", "");
  if (r.config.contains("train") && r.config["train"].is_object()) {
    r.seed = r.config["train"].value("seed", 0);
    r.total_steps = r.config["train"].value("steps", int64_t(0));
  }
  auto m = read_metrics(join_path(run_dir, "metrics.jsonl"));
  if (m.torn_tail) r.warnings.push_back(m.warning);
  for (const auto& rec : m.records) {
    r.step = std::max<int64_t>(r.step, rec["step"].get<int64_t>());
    if (rec.contains("tokens") && rec["tokens"].is_number()) r.tokens = std::max<int64_t>(r.tokens, rec["tokens"].get<int64_t>());
    if (rec.contains("loss")) r.final_loss = num_or(rec, "loss", r.final_loss);
    if (rec.contains("val_bpb")) r.val_bpb = num_or(rec, "val_bpb", r.val_bpb);
    if (rec.contains("heldout_bpb")) r.heldout_bpb = num_or(rec, "heldout_bpb", r.heldout_bpb);
    if (rec.contains("tokens_per_s")) r.tokens_per_s = num_or(rec, "tokens_per_s", r.tokens_per_s);
    if (rec.contains("peak_mem_mib")) r.peak_mem_mib = std::max(r.peak_mem_mib, num_or(rec, "peak_mem_mib", 0));
    if (rec.contains("wall_s")) r.wall_s = num_or(rec, "wall_s", r.wall_s);
  }
  auto ckpts = list_checkpoints(run_dir);
  if (!ckpts.empty()) r.last_checkpoint = ckpts.back().step;
  std::string sum_path = join_path(run_dir, "summary.json");
  r.status = m.records.empty() ? "created" : "interrupted";
  if (file_exists(sum_path)) {
    try {
      r.summary = nlohmann::json::parse(read_file(sum_path));
      r.status = r.summary.value("status", r.status);
      if (r.status == "running") {
        // A summary saying "running" whose process is gone belongs to a killed run.
        long pid = r.summary.value("pid", 0L);
        bool alive = pid > 0 && (::kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM);
        if (!alive) r.status = "interrupted";
      }
      if (r.summary.contains("heldout_bpb") && r.summary["heldout_bpb"].is_number())
        r.heldout_bpb = r.summary["heldout_bpb"].get<double>();
      if (r.summary.contains("val_bpb") && r.summary["val_bpb"].is_number())
        r.val_bpb = r.summary["val_bpb"].get<double>();
    } catch (const nlohmann::json::parse_error&) {
      r.warnings.push_back(sum_path + " is not valid JSON; ignored");
    }
  }
  return r;
}

std::vector<RunInfo> list_runs(const std::string& parent, std::vector<std::string>* errors) {
  std::vector<RunInfo> out;
  std::error_code ec;
  if (file_exists(join_path(parent, "config.json"))) {
    out.push_back(read_run(parent));
    return out;
  }
  if (!fs::is_directory(parent, ec)) return out;
  std::vector<std::string> dirs;
  for (const auto& e : fs::directory_iterator(parent, ec))
    if (e.is_directory() && file_exists(join_path(e.path().string(), "config.json"))) dirs.push_back(e.path().string());
  std::sort(dirs.begin(), dirs.end());
  for (const auto& d : dirs) {
    try {
      out.push_back(read_run(d));
    } catch (const Error& e) {
      if (errors) errors->push_back(e.what());
    }
  }
  return out;
}

nlohmann::json to_json(const RunInfo& r) {
  auto opt = [](double v) { return v < 0 ? nlohmann::json(nullptr) : nlohmann::json(v); };
  return {{"dir", r.dir},
          {"name", r.name},
          {"description", r.description},
          {"status", r.status},
          {"seed", r.seed},
          {"step", r.step},
          {"total_steps", r.total_steps},
          {"tokens", r.tokens},
          {"final_loss", opt(r.final_loss)},
          {"val_bpb", opt(r.val_bpb)},
          {"heldout_bpb", opt(r.heldout_bpb)},
          {"tokens_per_s", r.tokens_per_s},
          {"peak_mem_mib", r.peak_mem_mib},
          {"wall_s", r.wall_s},
          {"last_checkpoint", r.last_checkpoint < 0 ? nlohmann::json(nullptr) : nlohmann::json(r.last_checkpoint)},
          {"warnings", r.warnings}};
}

FirstReach first_reach(const std::vector<nlohmann::json>& records, const std::string& key, double target) {
  FirstReach f;
  for (const auto& r : records) {
    if (!r.contains(key) || !r[key].is_number()) continue;
    double v = r[key].get<double>();
    if (v <= target) {
      f.found = true;
      f.step = r.value("step", int64_t(0));
      f.tokens = r.value("tokens", int64_t(0));
      f.value = v;
      return f;
    }
  }
  return f;
}

// ---------------------------------------------------------------------------------------------
// Writing

RunStore::RunStore(std::string run_dir) : dir_(std::move(run_dir)) {}

std::string RunStore::config_path() const { return join_path(dir_, "config.json"); }
std::string RunStore::metrics_path() const { return join_path(dir_, "metrics.jsonl"); }
std::string RunStore::summary_path() const { return join_path(dir_, "summary.json"); }
std::string RunStore::checkpoints_dir() const { return join_path(dir_, "checkpoints"); }
std::string RunStore::weights_path(int64_t step) const {
  return join_path(checkpoints_dir(), step_stem(step) + ".safetensors");
}
std::string RunStore::sidecar_path(int64_t step) const {
  return join_path(checkpoints_dir(), step_stem(step) + ".json");
}
std::string RunStore::optimizer_path(int64_t step) const {
  return join_path(checkpoints_dir(), step_stem(step) + ".optim.safetensors");
}

void RunStore::create(const nlohmann::json& resolved_config) {
  if (file_exists(config_path()))
    throw Error(dir_ + " already holds a run; resume it with `gllm resume " + dir_ +
                "` or choose another --out folder");
  make_directories(checkpoints_dir());
  write_file_atomic(config_path(), resolved_config.dump(2) + "\n");
}

void RunStore::append_metric(const nlohmann::json& record) { append_line(metrics_path(), record.dump()); }

std::string RunStore::truncate_metrics_after(int64_t step) {
  auto m = read_metrics(metrics_path());
  std::string text;
  for (const auto& r : m.records)
    if (r["step"].get<int64_t>() <= step) text += r.dump() + "\n";
  write_file_atomic(metrics_path(), text);
  return m.warning;
}

void RunStore::commit_checkpoint(int64_t step, nlohmann::json sidecar, int keep) {
  auto describe = [](const std::string& path) {
    std::error_code ec;
    auto bytes = fs::file_size(path, ec);
    if (ec) throw Error("checkpoint file " + path + " was not written; check free disk space");
    return nlohmann::json{{"file", fs::path(path).filename().string()},
                          {"bytes", static_cast<int64_t>(bytes)},
                          {"sha512", file_digest(path)}};
  };
  sidecar["format"] = "gllm-checkpoint-1";
  sidecar["step"] = step;
  sidecar["weights"] = describe(weights_path(step));
  sidecar["optimizer"] = describe(optimizer_path(step));
  write_file_atomic(sidecar_path(step), sidecar.dump(2) + "\n");
  // Keep the newest `keep` committed checkpoints; remove older ones (sidecar first).
  auto all = list_checkpoints(dir_);
  if (keep > 0 && static_cast<int>(all.size()) > keep) {
    for (size_t i = 0; i + keep < all.size(); ++i) {
      std::error_code ec;
      fs::remove(all[i].sidecar_path, ec);
      fs::remove(all[i].weights_path, ec);
      fs::remove(all[i].optimizer_path, ec);
    }
  }
  // Orphans of an interrupted save (weights without a sidecar) older than this step go too.
  std::error_code ec;
  static const std::regex re("step_([0-9]+)(\\.optim)?\\.safetensors");
  for (const auto& e : fs::directory_iterator(checkpoints_dir(), ec)) {
    std::smatch mm;
    std::string name = e.path().filename().string();
    if (!std::regex_match(name, mm, re)) continue;
    int64_t s = std::stoll(mm[1].str());
    if (s < step && !file_exists(sidecar_path(s))) fs::remove(e.path(), ec);
  }
}

void RunStore::write_summary(const nlohmann::json& summary) {
  write_file_atomic(summary_path(), summary.dump(2) + "\n");
}

}  // namespace gllm
