// watch_cluster_runs: finds the cluster runs under the watched folders, reads each run's own
// record, and asks the scheduler once for all of them.
#include "engine/cluster/cluster_watch.h"

#include <algorithm>
#include <filesystem>
#include <set>

#include "engine/cluster/scheduler_record.h"
#include "engine/config/run_identity.h"
#include "engine/io/paths.h"
#include "engine/train/run_store.h"

namespace gllm {
namespace {

void collect(const std::filesystem::path& dir, int depth, std::set<std::string>& seen,
             std::vector<std::string>& found) {
  std::error_code ec;
  const std::string canonical = std::filesystem::weakly_canonical(dir, ec).string();
  if (ec || !seen.insert(canonical).second) return;
  if (has_scheduler_record(dir.string())) {
    found.push_back(dir.string());
    return;  // a run folder: its subfolders are checkpoints and logs
  }
  if (depth == 0) return;
  std::vector<std::filesystem::path> children;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec))
    if (e.is_directory(ec) && !e.is_symlink(ec)) children.push_back(e.path());
  std::sort(children.begin(), children.end());
  for (const auto& c : children) collect(c, depth - 1, seen, found);
}

}  // namespace

ClusterSnapshot watch_cluster_runs(const std::vector<std::string>& roots) {
  ClusterSnapshot out;
  std::set<std::string> seen;
  std::vector<std::string> dirs;
  for (const auto& root : roots) {
    std::error_code ec;
    if (!std::filesystem::is_directory(root, ec)) {
      out.errors.push_back(root + ": not a folder (it may not have been made yet)");
      continue;
    }
    collect(root, 2, seen, dirs);
  }
  std::vector<ClusterRunQuery> queries;
  for (const auto& d : dirs) {
    ClusterRunRow row;
    row.dir = d;
    try {
      const SchedulerRecord rec = read_scheduler_record(d);
      row.sweep_dir =
          rec.script.empty() ? d : std::filesystem::path(rec.script).parent_path().string();
      const RunInfo info = read_run(d);
      row.label = run_label_of(info.config);
      row.seed = info.seed;
      row.run_status = info.status;
      row.step = info.step;
      row.total_steps = info.total_steps;
      row.val_bpb = info.val_bpb;
      row.val_bpb_step = info.val_bpb_step;
      row.heldout_bpb = info.heldout_bpb;
      std::error_code ec;
      const auto size = std::filesystem::file_size(join_path(d, "metrics.jsonl"), ec);
      row.metrics_bytes = ec ? 0 : int64_t(size);
    } catch (const std::exception& e) {
      out.errors.push_back(d + ": " + e.what());
      continue;
    }
    queries.push_back({d, row.run_status});  // as `gllm runs` asks
    out.runs.push_back(std::move(row));
  }
  const auto states = cluster_run_states(queries);
  for (size_t i = 0; i < out.runs.size() && i < states.size(); ++i) out.runs[i].cluster = states[i];
  return out;
}

}  // namespace gllm
