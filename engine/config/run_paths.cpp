// Portable run folders (run_paths.h): files a config names stored relative to the project folder,
// and found again from a run folder's place in any checkout.
#include "engine/config/run_paths.h"

#include <filesystem>
#include <vector>

#include "engine/config/run_config.h"

namespace gllm {

namespace fs = std::filesystem;

namespace {

fs::path canonical_or_normal(const fs::path& p) {
  std::error_code ec;
  auto c = fs::weakly_canonical(fs::absolute(p, ec), ec);
  return ec ? fs::absolute(p, ec).lexically_normal() : c;
}

// `p` relative to `root` when it lies inside it; empty otherwise.
fs::path inside(const fs::path& p, const fs::path& root) {
  const auto rel = canonical_or_normal(p).lexically_relative(canonical_or_normal(root));
  if (rel.empty() || rel.native().rfind("..", 0) == 0) return {};
  return rel;
}

bool exists_file(const fs::path& p) {
  std::error_code ec;
  return fs::exists(p, ec) && !ec;
}

nlohmann::json* at_path(nlohmann::json& j, const std::string& dotted) {
  nlohmann::json* cur = &j;
  size_t start = 0;
  while (true) {
    const size_t dot = dotted.find('.', start);
    const std::string key =
        dotted.substr(start, dot == std::string::npos ? dotted.npos : dot - start);
    if (!cur->is_object() || !cur->contains(key)) return nullptr;
    cur = &(*cur)[key];
    if (dot == std::string::npos) return cur;
    start = dot + 1;
  }
}

}  // namespace

std::string project_dir() {
  return canonical_or_normal(fs::path(presets_dir())).parent_path().string();
}

const std::vector<std::string>& config_file_keys() {
  static const std::vector<std::string> keys = {"grading.ladder_file", "grading.grades_file",
                                                "grading.profiles_file",
                                                "grading.output_grades_file", "data.corpus_path"};
  return keys;
}

nlohmann::json portable_config(const nlohmann::json& config) {
  nlohmann::json out = config;
  const fs::path root = project_dir();
  for (const auto& key : config_file_keys()) {
    auto* v = at_path(out, key);
    if (!v || !v->is_string() || v->get<std::string>().empty()) continue;
    const fs::path p = v->get<std::string>();
    if (!p.is_absolute()) continue;
    const auto rel = inside(p, root);
    if (!rel.empty()) *v = rel.generic_string();
  }
  return out;
}

std::string find_run_file(const std::string& path, const std::string& from_dir) {
  if (path.empty()) return path;
  const fs::path p(path);
  // What to look for: a relative path as it is; an absolute path that no longer exists (written
  // on another machine, or before the tree moved) by its trailing parts, longest first, down to
  // two parts ("data/corpus.txt") — a bare file name alone could be any file.
  std::vector<fs::path> tails;
  if (p.is_absolute()) {
    if (exists_file(p)) return path;
    std::vector<fs::path> parts;
    for (const auto& part : p.relative_path()) parts.push_back(part);
    for (size_t first = 1; first + 2 <= parts.size(); ++first) {
      fs::path tail;
      for (size_t i = first; i < parts.size(); ++i) tail /= parts[i];
      tails.push_back(tail);
    }
  } else {
    tails.push_back(p);
  }
  std::error_code ec;
  std::vector<fs::path> roots;
  const fs::path dir = from_dir.empty() ? fs::current_path(ec) : canonical_or_normal(from_dir);
  for (fs::path d = dir; !d.empty(); d = d.parent_path()) {
    roots.push_back(d);
    if (d == d.root_path()) break;
  }
  roots.push_back(project_dir());
  roots.push_back(fs::current_path(ec));
  for (const auto& tail : tails)
    for (const auto& root : roots)
      if (exists_file(root / tail)) return canonical_or_normal(root / tail).string();
  return path;
}

void resolve_run_files(nlohmann::json& config, const std::string& from_dir) {
  for (const auto& key : config_file_keys()) {
    auto* v = at_path(config, key);
    if (v && v->is_string()) *v = find_run_file(v->get<std::string>(), from_dir);
  }
}

void resolve_run_files(RunConfig& c, const std::string& from_dir) {
  for (std::string* f : {&c.grading.ladder_file, &c.grading.grades_file, &c.grading.profiles_file,
                         &c.grading.output_grades_file, &c.data.corpus_path})
    *f = find_run_file(*f, from_dir);
}

}  // namespace gllm
