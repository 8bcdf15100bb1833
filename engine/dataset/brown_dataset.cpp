// prepared_brown_config: the Brown folder checked, its dataset in the data cache made (or made
// again when its files changed) under a lock beside it, and the settings that open it.
#include "engine/dataset/brown_dataset.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "engine/data/brown_fetch.h"
#include "engine/data/corpus.h"
#include "engine/dataset/content_hash.h"
#include "engine/dataset/dataset_manifest.h"
#include "engine/dataset/inputs.h"
#include "engine/dataset/prepare.h"
#include "engine/dataset/prepare_stages.h"
#include "engine/io/atomic_file.h"
#include "engine/io/error.h"
#include "engine/io/json_read.h"
#include "engine/io/paths.h"

namespace gllm {
namespace {

constexpr uint64_t kFolderKeyHash = 0x62726f776e646972ull;  // "browndir"

std::string fraction_text(double f) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", f);
  return buf;
}

// An exclusive flock on <path>, waited for; released with the object (or the process).
class WaitingLock {
 public:
  explicit WaitingLock(const std::string& path) {
    fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
    if (fd_ < 0) throw Error("cannot create " + path + ": " + std::strerror(errno));
    while (::flock(fd_, LOCK_EX) != 0)
      if (errno != EINTR) {
        const int e = errno;
        ::close(fd_);
        throw Error("cannot lock " + path + ": " + std::strerror(e));
      }
  }
  ~WaitingLock() { ::close(fd_); }
  WaitingLock(const WaitingLock&) = delete;
  WaitingLock& operator=(const WaitingLock&) = delete;

 private:
  int fd_ = -1;
};

std::string absolute_folder(const std::string& dir) {
  std::error_code ec;
  auto p = std::filesystem::weakly_canonical(std::filesystem::absolute(dir, ec), ec);
  return ec ? dir : p.string();
}

PrepareOptions brown_prepare_options(const DataConfig& cfg, const std::string& brown_dir) {
  PrepareOptions o;
  o.inputs = {brown_dir};
  o.out_dir = brown_dataset_dir(cfg);
  o.format = "brown";
  o.vocab = cfg.vocab_size;
  o.val_fraction = cfg.val_fraction;
  o.heldout_fraction = cfg.heldout_fraction;
  return o;
}

// "" when `dir` holds nothing, or a finished or unfinished dataset of exactly these inputs and
// options; else why it is stale.
std::string stale_because(const PrepareOptions& o) {
  const std::string manifest = join_path(o.out_dir, kManifestFile);
  const std::string plan = join_path(o.out_dir, kPlanFile);
  const std::string recorded = file_exists(manifest) ? manifest : file_exists(plan) ? plan : "";
  if (recorded.empty()) return "";
  nlohmann::json j;
  try {
    j = read_json_file(recorded, "", large_json_limits());
  } catch (const Error& e) {
    return std::string("its record is unreadable (") + e.what() + ")";
  }
  const auto files = expand_inputs(o.inputs, o.format, o.out_dir);
  return record_differs(j, files, prepare_options_json(o));
}

}  // namespace

std::string brown_dataset_dir(const DataConfig& cfg) {
  const std::string folder =
      absolute_folder(cfg.corpus_path.empty() ? brown_corpus_dir() : cfg.corpus_path);
  char key[17];
  std::snprintf(key, sizeof key, "%016llx",
                static_cast<unsigned long long>(content_hash64(folder, kFolderKeyHash)));
  return join_path(data_cache_dir(), "datasets/brown-" + std::string(key, 8) + "-v" +
                                         std::to_string(cfg.vocab_size) + "-val" +
                                         fraction_text(cfg.val_fraction) + "-heldout" +
                                         fraction_text(cfg.heldout_fraction));
}

DataConfig prepared_brown_config(const DataConfig& cfg,
                                 const std::function<void(const std::string&)>& log) {
  if (cfg.corpus != "brown")
    throw Error("prepared_brown_config is for data.corpus = brown, not '" + cfg.corpus + "'");
  if (cfg.val_fraction + cfg.heldout_fraction > 0.5)
    throw ConfigError("data.val_fraction",
                      "the Brown corpus is prepared as a dataset that keeps at least half its text "
                      "for training: val_fraction + heldout_fraction must be at most 0.5");
  if (cfg.val_fraction <= 0 || cfg.heldout_fraction <= 0)
    throw ConfigError("data.val_fraction",
                      "the Brown corpus needs a validation and a held-out split: give "
                      "val_fraction and heldout_fraction above 0");
  const std::string brown_dir = checked_brown_dir(cfg);
  const PrepareOptions o = brown_prepare_options(cfg, brown_dir);
  make_directories(std::filesystem::path(o.out_dir).parent_path().string());
  WaitingLock lock(o.out_dir + ".lock");
  const std::string why = stale_because(o);
  if (!why.empty()) {
    if (log) log("the Brown dataset " + o.out_dir + " is stale (" + why + "); preparing it again");
    std::error_code ec;
    std::filesystem::remove_all(o.out_dir, ec);
    if (ec)
      throw Error("cannot remove the stale Brown dataset " + o.out_dir + ": " + ec.message() +
                  "; delete it by hand");
  }
  PrepareHooks hooks;
  hooks.log = log;
  const PrepareResult r = prepare_dataset(o, hooks);
  if (!r.already_complete && log)
    log("prepared the Brown corpus " + brown_dir + " into " + o.out_dir);
  DataConfig out = cfg;
  out.corpus = "prepared";
  out.corpus_path = o.out_dir;
  out.vocab_size = json_int_or(r.manifest.value("tokenizer", nlohmann::json::object()),
                               "vocab_size", cfg.vocab_size);
  return out;
}

}  // namespace gllm
