// Run folders: metrics.jsonl append/read with torn-tail tolerance, checkpoint sidecars with sizes
// and SHA-512 digests, keep-last-K pruning, summaries and the run list shared by GUI and CLI.
#include "engine/train/run_store.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <regex>

#include "engine/io/atomic_file.h"
#include "engine/io/error.h"
#include "engine/io/json_read.h"
#include "engine/io/paths.h"
#include "engine/io/regular_file.h"
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

// Bounds of what a run folder's files may hold before they are read.
constexpr size_t kMaxMetricsBytes = 1ull << 30;  // 1 GiB: ~5 M records
const JsonLimits kLineLimits{1ull << 20, 16};    // one metrics record
const JsonLimits kSidecarLimits{64ull << 20, 16};
const JsonLimits kSummaryLimits{16ull << 20, 16};

// "step_000123" → 123; false when the digits do not fit in int64.
bool parse_step(const std::string& digits, int64_t* out) {
  if (digits.empty() || digits.size() > 18) return false;
  int64_t v = 0;
  for (char c : digits) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + (c - '0');
  }
  *out = v;
  return true;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Reading

MetricsFile read_metrics(const std::string& path) {
  MetricsFile out;
  if (!file_exists(path)) return out;
  std::string text = read_file_limited(path, kMaxMetricsBytes,
                                       "move it aside; a metrics file this large is not a run's");
  size_t pos = 0;
  int64_t line_no = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    bool last = nl == std::string::npos;
    std::string_view line(text.data() + pos, (last ? text.size() : nl) - pos);
    pos = last ? text.size() : nl + 1;
    ++line_no;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    nlohmann::json j;
    bool ok = true;
    try {
      j = parse_json(line, path, "", kLineLimits);
    } catch (const Error&) {
      ok = false;
    }
    if (ok) {
      auto step = j.is_object() ? j.find("step") : j.end();
      ok = j.is_object() && step != j.end() && step->is_number_integer() &&
           !(step->is_number_unsigned() && step->get<uint64_t>() > uint64_t(INT64_MAX));
    }
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

std::vector<CheckpointInfo> list_checkpoints(const std::string& run_dir,
                                             std::vector<std::string>* problems) {
  std::vector<CheckpointInfo> out;
  std::string dir = join_path(run_dir, "checkpoints");
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return out;
  static const std::regex re("step_([0-9]+)\\.json");
  for (auto it = fs::directory_iterator(dir, ec); !ec && it != fs::directory_iterator();
       it.increment(ec)) {
    std::smatch m;
    std::string name = it->path().filename().string();
    if (!std::regex_match(name, m, re)) continue;
    CheckpointInfo c;
    if (!parse_step(m[1].str(), &c.step)) {
      if (problems)
        problems->push_back(it->path().string() +
                            ": the step number does not fit in 64 bits; "
                            "not a checkpoint the trainer wrote — remove or rename it");
      continue;
    }
    c.sidecar_path = it->path().string();
    std::string stem = join_path(dir, step_stem(c.step));
    c.weights_path = stem + ".safetensors";
    c.optimizer_path = stem + ".optim.safetensors";
    try {
      c.sidecar = read_json_file(c.sidecar_path, "", kSidecarLimits);
    } catch (const Error& e) {
      if (problems) problems->push_back(std::string(e.what()) + " (not a committed checkpoint)");
      continue;  // unreadable sidecar: not a committed checkpoint
    }
    out.push_back(std::move(c));
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.step < b.step; });
  return out;
}

void verify_checkpoint(const CheckpointInfo& c) {
  const auto& s = c.sidecar;
  if (!s.is_object() || json_string_or(s, "format", "") != "gllm-checkpoint-1")
    throw Error(
        c.sidecar_path +
        " is not a gllm checkpoint sidecar; remove the checkpoint or resume from an earlier one");
  const std::string damaged = "; the sidecar is damaged — resume from an earlier checkpoint";
  if (json_int_or(s, "step", -1) != c.step)
    throw Error(c.sidecar_path + ": its \"step\" does not match the file name" + damaged);
  if (!s.contains("loader") || !s["loader"].is_object())
    throw Error(c.sidecar_path + ": no data-loader state (\"loader\")" + damaged);
  if (json_int_or(s, "tokens", -1) < 0)
    throw Error(c.sidecar_path + ": no token count (\"tokens\")" + damaged);
  auto check = [&](const std::string& path, const char* key) {
    if (!file_exists(path))
      throw Error("checkpoint step " + std::to_string(c.step) + ": " + path +
                  " is missing; resume from an earlier checkpoint or retrain");
    if (!s.contains(key) || !s[key].is_object())
      throw Error(c.sidecar_path + ": no record of " + key + damaged);
    const int64_t size = json_int_or(s[key], "bytes", -1);
    const std::string digest = json_string_or(s[key], "sha512", "");
    if (size < 0 || digest.size() != 128)
      throw Error(c.sidecar_path + ": the record of " + key + " lacks its size or SHA-512" +
                  damaged);
    std::error_code ec;
    auto actual = fs::file_size(path, ec);
    if (ec || actual != static_cast<uintmax_t>(size))
      throw Error("checkpoint step " + std::to_string(c.step) + ": " + path + " has " +
                  std::to_string(actual) + " bytes, expected " + std::to_string(size) +
                  " (truncated or overwritten); resume from an earlier checkpoint");
    if (file_digest(path) != digest)
      throw Error(
          "checkpoint step " + std::to_string(c.step) + ": " + path +
          " does not match its recorded SHA-512 (corrupted); resume from an earlier checkpoint");
  };
  check(c.weights_path, "weights");
  check(c.optimizer_path, "optimizer");
}

CheckpointInfo last_valid_checkpoint(const std::string& run_dir,
                                     std::vector<std::string>* skipped) {
  std::vector<std::string> problems;
  auto all = list_checkpoints(run_dir, &problems);
  if (skipped) skipped->insert(skipped->end(), problems.begin(), problems.end());
  for (auto it = all.rbegin(); it != all.rend(); ++it) {
    try {
      verify_checkpoint(*it);
      return *it;
    } catch (const Error& e) {
      if (skipped) skipped->push_back(e.what());
      problems.insert(problems.begin(), e.what());  // the newest checkpoint's problem first
    }
  }
  // A sidecar that is not a checkpoint (a pipe, damage) is named rather than taken for "none".
  if (all.empty() && !problems.empty())
    throw Error("no valid checkpoint in " + run_dir + " (" + brief_text(problems.front(), 300) +
                "); nothing was changed: restore the checkpoint's sidecar from a copy");
  throw Error("no valid checkpoint in " + run_dir +
              (all.empty()
                   ? " (none was written yet; `gllm resume " + run_dir +
                         "` starts the run again from step 0 in place)"
                   : " (every checkpoint failed verification: " +
                         brief_text(problems.empty() ? std::string() : problems.front(), 300) +
                         "; start a new run with gllm train)"));
}

namespace {

// step_NNN.safetensors inside <run>/checkpoints/ (a run folder holds config.json).
bool inside_run_checkpoints(const fs::path& weights) {
  static const std::regex re("step_[0-9]+\\.safetensors");
  const fs::path dir = weights.parent_path();
  return std::regex_match(weights.filename().string(), re) && dir.filename() == "checkpoints" &&
         file_exists((dir.parent_path() / "config.json").string());
}

}  // namespace

void verify_weights_file(const std::string& weights_path) {
  fs::path w(weights_path);
  const std::string name = w.filename().string();
  const std::string suffix = ".safetensors";
  if (name.size() <= suffix.size() || name.substr(name.size() - suffix.size()) != suffix) return;
  if (name.size() > 18 && name.substr(name.size() - 18) == ".optim.safetensors") return;
  const std::string stem = weights_path.substr(0, weights_path.size() - suffix.size());
  const std::string sidecar = stem + ".json";
  if (!file_exists(sidecar)) {
    if (inside_run_checkpoints(w))
      throw Error(weights_path + " has no sidecar " + fs::path(sidecar).filename().string() +
                  ": the checkpoint was never committed (its save was interrupted); use the run "
                  "folder or an earlier checkpoint");
    return;
  }
  static const std::regex re("step_([0-9]+)\\.safetensors");
  std::smatch m;
  CheckpointInfo c;
  if (!std::regex_match(name, m, re) || !parse_step(m[1].str(), &c.step)) return;
  c.sidecar_path = sidecar;
  c.weights_path = weights_path;
  c.optimizer_path = stem + ".optim.safetensors";
  c.sidecar = read_json_file(
      sidecar, "the checkpoint's sidecar is damaged; use an earlier checkpoint", kSidecarLimits);
  verify_checkpoint(c);
}

std::string resolve_weights_path(const std::string& p) {
  std::error_code ec;
  if (fs::is_directory(p, ec)) {
    if (file_exists(join_path(p, "config.json"))) return last_valid_checkpoint(p).weights_path;
    throw Error(p +
                " is a folder but not a run folder (no config.json); give a run folder or a "
                ".safetensors file");
  }
  if (!file_exists(p))
    throw Error(p + " does not exist; give a run folder or a checkpoint .safetensors file");
  std::string w = p;
  if (p.size() > 5 && p.substr(p.size() - 5) == ".json") {
    w = p.substr(0, p.size() - 5) + ".safetensors";
    if (!file_exists(w)) throw Error("the weights " + w + " of sidecar " + p + " are missing");
  }
  verify_weights_file(w);
  return w;
}

RunInfo read_run(const std::string& run_dir) {
  RunInfo r;
  r.dir = run_dir;
  std::string cfg_path = join_path(run_dir, "config.json");
  if (!file_exists(cfg_path)) throw Error(run_dir + " is not a run folder (no config.json)");
  r.config = read_json_file(cfg_path, "restore it from the preset", kSummaryLimits);
  if (!r.config.is_object())
    throw Error(cfg_path + " is not a JSON object; restore it from the preset");
  r.name = json_string_or(r.config, "name", "");
  r.description = json_string_or(r.config, "description", "");
  if (r.config.contains("train") && r.config["train"].is_object()) {
    const int64_t seed = json_int_or(r.config["train"], "seed", 0);
    r.seed = seed >= 0 && seed <= 2147483647 ? static_cast<int>(seed) : 0;
    r.total_steps = json_int_or(r.config["train"], "steps", 0);
  }
  auto m = read_metrics(join_path(run_dir, "metrics.jsonl"));
  if (m.torn_tail) r.warnings.push_back(m.warning);
  for (const auto& rec : m.records) {
    r.step = std::max<int64_t>(r.step, rec["step"].get<int64_t>());
    r.tokens = std::max<int64_t>(r.tokens, json_int_or(rec, "tokens", r.tokens));
    if (rec.contains("loss")) r.final_loss = json_number_or(rec, "loss", r.final_loss);
    if (rec.contains("val_bpb")) {
      r.val_bpb = json_number_or(rec, "val_bpb", r.val_bpb);
      r.val_bpb_step = rec["step"].get<int64_t>();
    }
    if (rec.contains("heldout_bpb"))
      r.heldout_bpb = json_number_or(rec, "heldout_bpb", r.heldout_bpb);
    if (rec.contains("tokens_per_s"))
      r.tokens_per_s = json_number_or(rec, "tokens_per_s", r.tokens_per_s);
    if (rec.contains("peak_mem_mib"))
      r.peak_mem_mib = std::max(r.peak_mem_mib, json_number_or(rec, "peak_mem_mib", 0));
    if (rec.contains("wall_s")) r.wall_s = json_number_or(rec, "wall_s", r.wall_s);
  }
  std::vector<std::string> problems;
  auto ckpts = list_checkpoints(run_dir, &problems);
  for (const auto& p : problems) r.warnings.push_back(p);
  if (!ckpts.empty()) r.last_checkpoint = ckpts.back().step;
  std::string sum_path = join_path(run_dir, "summary.json");
  r.status = m.records.empty() ? "created" : "interrupted";
  if (file_exists(sum_path)) {
    try {
      r.summary = read_json_file(sum_path, "", kSummaryLimits);
      if (!r.summary.is_object()) throw Error(sum_path + " is not a JSON object");
      r.status = json_string_or(r.summary, "status", r.status);
      if (r.status == "running") {
        // A summary saying "running" belongs to a killed run unless the folder's lock is held
        // now (a recorded pid may since belong to another process).
        const int held = run_lock_held(run_dir);
        if (held == 0 ||
            (held < 0 && !process_alive(static_cast<long>(json_int_or(r.summary, "pid", 0)))))
          r.status = "interrupted";
      }
      r.heldout_bpb = json_number_or(r.summary, "heldout_bpb", r.heldout_bpb);
      r.val_bpb = json_number_or(r.summary, "val_bpb", r.val_bpb);
      r.val_bpb_step = json_int_or(r.summary, "val_bpb_step", r.val_bpb_step);
    } catch (const Error& e) {
      r.summary = nlohmann::json();
      r.warnings.push_back(std::string(e.what()) + "; the summary was ignored");
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
  for (auto it = fs::directory_iterator(parent, ec); !ec && it != fs::directory_iterator();
       it.increment(ec)) {
    std::error_code ec2;
    if (it->is_directory(ec2) && file_exists(join_path(it->path().string(), "config.json")))
      dirs.push_back(it->path().string());
  }
  std::sort(dirs.begin(), dirs.end());
  for (const auto& d : dirs) {
    try {
      out.push_back(read_run(d));
    } catch (const Error& e) {
      if (errors) errors->push_back(e.what());
    } catch (const std::exception& e) {  // anything else a damaged folder provokes
      if (errors) errors->push_back(d + ": cannot be read (" + brief_text(e.what(), 200) + ")");
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
          {"val_bpb_step", r.val_bpb_step >= 0 ? nlohmann::json(r.val_bpb_step) : nullptr},
          {"heldout_bpb", opt(r.heldout_bpb)},
          {"tokens_per_s", r.tokens_per_s},
          {"peak_mem_mib", r.peak_mem_mib},
          {"wall_s", r.wall_s},
          {"last_checkpoint",
           r.last_checkpoint < 0 ? nlohmann::json(nullptr) : nlohmann::json(r.last_checkpoint)},
          {"warnings", r.warnings}};
}

FirstReach first_reach(const std::vector<nlohmann::json>& records, const std::string& key,
                       double target) {
  FirstReach f;
  for (const auto& r : records) {
    if (!r.contains(key) || !r[key].is_number()) continue;
    double v = r[key].get<double>();
    if (v <= target) {
      f.found = true;
      f.step = json_int_or(r, "step", 0);
      f.tokens = json_int_or(r, "tokens", 0);
      f.value = v;
      return f;
    }
  }
  return f;
}

// ---------------------------------------------------------------------------------------------
// Writing

RunStore::RunStore(std::string run_dir) : dir_(std::move(run_dir)) {}

std::string RunStore::config_path() const {
  return join_path(dir_, "config.json");
}
std::string RunStore::metrics_path() const {
  return join_path(dir_, "metrics.jsonl");
}
std::string RunStore::summary_path() const {
  return join_path(dir_, "summary.json");
}
std::string RunStore::checkpoints_dir() const {
  return join_path(dir_, "checkpoints");
}
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
    throw Error(
        dir_ + " already holds a run; resume it with `gllm resume " + dir_ +
        "` (a run with no checkpoint starts again from step 0) or choose another --out folder");
  make_directories(checkpoints_dir());
  write_file_atomic(config_path(), json_text(resolved_config, 2) + "\n");
}

void RunStore::append_metric(const nlohmann::json& record) {
  append_line(metrics_path(), json_text(record, -1));
}

std::string RunStore::truncate_metrics_after(int64_t step) {
  auto m = read_metrics(metrics_path());
  std::string text;
  for (const auto& r : m.records)
    if (r["step"].get<int64_t>() <= step) text += json_text(r, -1) + "\n";
  write_file_atomic(metrics_path(), text);
  return m.warning;
}

void RunStore::commit_checkpoint(int64_t step, nlohmann::json sidecar, int keep,
                                 int64_t protect_step) {
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
      if (all[i].step == protect_step) continue;  // a completed run's final checkpoint
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
    int64_t s = 0;
    if (!parse_step(mm[1].str(), &s)) continue;
    if (s < step && !file_exists(sidecar_path(s))) fs::remove(e.path(), ec);
  }
}

void RunStore::write_summary(const nlohmann::json& summary) {
  write_file_atomic(summary_path(), json_text(summary, 2) + "\n");
}

RunStore::Removed RunStore::remove_temporaries() {
  // AtomicFileWriter's names: <target>.tmp.<pid>.<counter>.<random>
  static const std::regex re(".+\\.tmp\\.([0-9]{1,10})\\.[0-9]+\\.[0-9]+");
  Removed removed;
  for (const std::string& dir : {dir_, checkpoints_dir()}) {
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) continue;
    for (auto it = fs::directory_iterator(dir, ec); !ec && it != fs::directory_iterator();
         it.increment(ec)) {
      std::smatch m;
      const std::string name = it->path().filename().string();
      if (!std::regex_match(name, m, re)) continue;
      const long pid = std::stol(m[1].str());
      if (pid != static_cast<long>(::getpid()) && process_alive(pid)) continue;  // still writing
      std::error_code ec2;
      if (!it->is_regular_file(ec2)) continue;
      const auto bytes = it->file_size(ec2);
      if (fs::remove(it->path(), ec2)) {
        ++removed.files;
        removed.bytes += ec2 ? 0 : bytes;
      }
    }
  }
  return removed;
}

void check_checkpoint_store(const std::string& run_dir) {
  const std::string dir = join_path(run_dir, "checkpoints");
  const std::string keep =
      "; the run's checkpoints are its only trained state, so nothing is resumed or restarted "
      "until this is fixed";
  struct stat st {};
  if (::lstat(dir.c_str(), &st) != 0) {
    const int err = errno;
    if (err == ENOENT)
      throw Error(dir +
                  " is missing: this run folder has no checkpoint store. Restore the folder "
                  "from a copy (or, to train the run again from step 0, create it empty: "
                  "mkdir " +
                  dir + ", and remove " + join_path(run_dir, "metrics.jsonl") + ")" + keep);
    throw Error("cannot examine " + dir + ": " + std::strerror(err) + keep);
  }
  if (S_ISLNK(st.st_mode)) {
    std::error_code ec;
    const std::string target = fs::read_symlink(dir, ec).string();
    struct stat to {};
    const bool dangling = ::stat(dir.c_str(), &to) != 0;
    throw Error(dir + " is a symbolic link to " + brief_text(target, 200) +
                (dangling ? " which does not exist (is the disk holding it mounted?)" : "") +
                ": a run's checkpoints are written only inside its folder. Mount the disk and "
                "move the checkpoints folder itself into " +
                run_dir + " in place of the link" + keep);
  }
  if (!S_ISDIR(st.st_mode))
    throw Error(dir + " is " + file_kind(st.st_mode) +
                ", not a folder: restore the run's checkpoints folder from a copy (move this file "
                "aside first)" +
                keep);
  std::error_code ec;
  fs::directory_iterator it(dir, ec);
  if (ec)
    throw Error("cannot list " + dir + ": " + ec.message() +
                " (check its permissions: chmod u+rwx " + dir + ")" + keep);
}

void RunStore::reset_for_restart() {
  if (!list_checkpoints(dir_).empty())
    throw Error(dir_ + " holds checkpoints; resume it instead of restarting it");
  std::error_code ec;
  fs::remove(metrics_path(), ec);
  fs::remove(summary_path(), ec);
  // The checkpoint folder is emptied, never removed: the other ranks of a data-parallel task check
  // that it exists while this one (the writer) clears it, and one that looked in between refused
  // the run ("checkpoints is missing").
  make_directories(checkpoints_dir());
  for (const auto& entry : fs::directory_iterator(checkpoints_dir(), ec)) {
    std::error_code rm;
    fs::remove_all(entry.path(), rm);
    if (rm) throw Error("cannot clear " + checkpoints_dir() + ": " + rm.message());
  }
  if (ec) throw Error("cannot clear " + checkpoints_dir() + ": " + ec.message());
  fsync_directory(dir_);
}

}  // namespace gllm
