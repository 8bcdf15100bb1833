// Reading a dataset's manifest and checking its shards against it (size, header, SHA-512), so a
// shard changed after the manifest was written is found before any training starts.
#include "engine/dataset/dataset_manifest.h"

#include <sys/stat.h>

#include <algorithm>

#include "engine/dataset/shard_file.h"
#include "engine/io/atomic_file.h"
#include "engine/io/error.h"
#include "engine/io/json_read.h"
#include "engine/io/paths.h"
#include "engine/io/sha512.h"

namespace gllm {

bool is_prepared_dataset(const std::string& dir) {
  return file_exists(join_path(dir, kManifestFile));
}

nlohmann::json read_manifest(const std::string& dir) {
  const std::string path = join_path(dir, kManifestFile);
  if (!file_exists(path)) {
    if (file_exists(join_path(dir, "prepare.json")))
      throw Error(dir +
                  " holds an unfinished prepare (no manifest.json yet); run the same `gllm "
                  "data prepare` again to finish it — nothing half-made is used");
    throw Error(dir +
                " is not a prepared dataset (no manifest.json); make one with `gllm data "
                "prepare INPUT… --out " +
                dir + "`");
  }
  nlohmann::json m =
      read_json_file(path, "prepare the dataset again into a new folder", large_json_limits());
  if (!m.is_object() || json_string_or(m, "format", "") != "gllm-dataset" ||
      json_int_or(m, "version", 0) != 1 || !m.contains("splits") || !m["splits"].is_object())
    throw Error(path +
                " is not a gllm dataset manifest of version 1; prepare the dataset again "
                "with this gllm");
  return m;
}

std::vector<std::string> dataset_shard_paths(const std::string& dir, const nlohmann::json& manifest,
                                             const std::string& split) {
  std::vector<std::string> out;
  const auto& s = manifest.at("splits");
  if (!s.contains(split)) return out;
  for (const auto& sh : s.at(split).at("shards"))
    out.push_back(join_path(dir, sh.at("file").get<std::string>()));
  return out;
}

std::vector<std::string> verify_dataset_shards(const std::string& dir,
                                               const nlohmann::json& manifest,
                                               const std::vector<std::string>& splits) {
  std::vector<std::string> problems;
  for (const auto& [name, split] : manifest.at("splits").items()) {
    if (!splits.empty() && std::find(splits.begin(), splits.end(), name) == splits.end()) continue;
    for (const auto& sh : split.at("shards")) {
      const std::string file = json_string_at(sh, "file", "manifest shard");
      if (file.empty() || file.find('/') != std::string::npos || file[0] == '.') {
        problems.push_back("shard name '" + file + "' is not a file name inside the dataset");
        continue;
      }
      const std::string path = join_path(dir, file);
      struct stat st {};
      if (::stat(path.c_str(), &st) != 0) {
        problems.push_back(file + " is missing");
        continue;
      }
      if (!S_ISREG(st.st_mode)) {
        problems.push_back(file + " is not a regular file");
        continue;
      }
      const uint64_t want_bytes = uint64_t(json_int_at(sh, "bytes", file));
      if (uint64_t(st.st_size) != want_bytes) {
        problems.push_back(file + " is " + std::to_string(st.st_size) +
                           " bytes, the manifest says " + std::to_string(want_bytes));
        continue;
      }
      try {
        const uint64_t n = read_shard_header(path);
        if (n != uint64_t(json_int_at(sh, "tokens", file))) {
          problems.push_back(file + " holds " + std::to_string(n) + " tokens, the manifest says " +
                             std::to_string(json_int_at(sh, "tokens", file)));
          continue;
        }
        auto d = sha512_file(path);
        if (to_hex(d.data(), d.size()) != json_string_at(sh, "sha512", file))
          problems.push_back(file +
                             " changed after the manifest was written (its SHA-512 differs)");
      } catch (const Error& e) {
        problems.push_back(e.what());
      }
    }
  }
  return problems;
}

void require_dataset_shards_whole(const std::string& dir, const nlohmann::json& manifest,
                                  const std::vector<std::string>& splits) {
  auto problems = verify_dataset_shards(dir, manifest, splits);
  if (problems.empty()) return;
  std::string all;
  for (size_t i = 0; i < problems.size() && i < 4; ++i) all += (i ? "; " : "") + problems[i];
  if (problems.size() > 4) all += "; and " + std::to_string(problems.size() - 4) + " more";
  throw Error("dataset " + dir + " is not as its manifest records it: " + all +
              "; restore the shards, or prepare the dataset again into a new folder");
}

}  // namespace gllm
