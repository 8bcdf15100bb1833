// Input expansion: stat-based recursive walk with a (device, inode) ancestor set against loops,
// refusal of pipes and devices, stable ordering, and the change check used on every later pass.
#include "engine/dataset/inputs.h"

#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <set>
#include <utility>

#include "engine/data/corpus.h"
#include "engine/io/error.h"
#include "engine/io/regular_file.h"

namespace fs = std::filesystem;

namespace gllm {
namespace {

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

using FileId = std::pair<uint64_t, uint64_t>;  // (st_dev, st_ino)

struct Walker {
  std::string format_option;
  std::string out_real;  // canonical out dir ("" when it does not exist yet)
  std::vector<InputFile> files;
  std::set<FileId> seen_files;

  struct stat stat_or_throw(const std::string& path) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) {
      const int err = errno;
      if (err == ENOENT)
        throw Error("input " + path + " does not exist (or is a broken link); check the path");
      if (err == ELOOP)
        throw Error("input " + path + " is a loop of symbolic links; fix or remove the link");
      throw Error("cannot read input " + path + ": " + std::strerror(err));
    }
    return st;
  }

  void add_file(const std::string& path, const std::string& name, bool in_folder,
                const struct stat& st) {
    if (!S_ISREG(st.st_mode))
      throw Error("input " + path + " is " + file_kind(st.st_mode) +
                  ", not a regular file; prepare reads its inputs several times, so write the "
                  "stream to a file first (e.g. cat … > corpus.txt) and give that");
    if (!seen_files.insert({uint64_t(st.st_dev), uint64_t(st.st_ino)}).second) return;
    InputFile f;
    f.path = path;
    f.name = name;
    f.format = input_format_for(path, format_option);
    f.in_folder = in_folder;
    f.size = static_cast<uint64_t>(st.st_size);
    f.mtime_ns = int64_t(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
    files.push_back(std::move(f));
  }

  void walk(const std::string& dir, const std::string& name, std::vector<FileId>& ancestors,
            std::vector<std::string>& ancestor_paths) {
    std::error_code ec;
    std::string real = fs::weakly_canonical(dir, ec).string();
    if (!out_real.empty() && (real == out_real || real.rfind(out_real + "/", 0) == 0)) return;
    DIR* d = ::opendir(dir.c_str());
    if (!d) throw Error("cannot list folder " + dir + ": " + std::strerror(errno));
    std::vector<std::string> entries;
    while (dirent* e = ::readdir(d)) {
      std::string n = e->d_name;
      // Hidden entries are not corpus: a folder's .git, editor files, the workbench's own
      // .gllm-files.json beside a fetched Brown corpus.
      if (n[0] != '.') entries.push_back(n);
    }
    ::closedir(d);
    std::sort(entries.begin(), entries.end());
    for (const auto& n : entries) {
      std::string p = dir + "/" + n;
      struct stat st = stat_or_throw(p);
      if (S_ISDIR(st.st_mode)) {
        FileId id{uint64_t(st.st_dev), uint64_t(st.st_ino)};
        auto it = std::find(ancestors.begin(), ancestors.end(), id);
        if (it != ancestors.end())
          throw Error("folder loop: " + p + " leads back to " +
                      ancestor_paths[size_t(it - ancestors.begin())] +
                      " (a symbolic link to a parent folder); remove that link or give the "
                      "folders below it one by one");
        ancestors.push_back(id);
        ancestor_paths.push_back(p);
        walk(p, name + "/" + n, ancestors, ancestor_paths);
        ancestors.pop_back();
        ancestor_paths.pop_back();
      } else if (format_option != "brown" || is_brown_file_name(n)) {
        add_file(p, name + "/" + n, true, st);  // a Brown folder's README and lists are not text
      }
    }
  }
};

}  // namespace

InputFormat input_format_for(const std::string& path, const std::string& format_option) {
  if (format_option == "text") return InputFormat::Text;
  if (format_option == "jsonl") return InputFormat::Jsonl;
  if (format_option == "brown") return InputFormat::Brown;
  if (format_option != "auto")
    throw Error("--format is '" + format_option + "'; use auto, text, jsonl or brown");
  std::string p = path;
  for (const char* z : {".gz", ".zst", ".zstd"})
    if (ends_with(p, z)) {
      p.resize(p.size() - std::strlen(z));
      break;
    }
  for (const char* j : {".jsonl", ".ndjson", ".json"})
    if (ends_with(p, j)) return InputFormat::Jsonl;
  return InputFormat::Text;
}

std::vector<InputFile> expand_inputs(const std::vector<std::string>& inputs,
                                     const std::string& format_option, const std::string& out_dir) {
  if (inputs.empty()) throw Error("no inputs given; name one or more files or folders to prepare");
  input_format_for("x", format_option);  // validates the option once
  Walker w;
  w.format_option = format_option;
  std::error_code ec;
  if (!out_dir.empty() && fs::exists(out_dir, ec)) w.out_real = fs::canonical(out_dir, ec).string();
  for (const auto& in : inputs) {
    struct stat st = w.stat_or_throw(in);
    std::string real = fs::weakly_canonical(in, ec).string();
    if (!w.out_real.empty() && (real == w.out_real || real.rfind(w.out_real + "/", 0) == 0))
      throw Error("input " + in + " lies inside the dataset folder being written (" + out_dir +
                  "); give the corpus, not the dataset, or choose another --out");
    if (S_ISDIR(st.st_mode)) {
      std::vector<FileId> ancestors{{uint64_t(st.st_dev), uint64_t(st.st_ino)}};
      std::vector<std::string> paths{in};
      std::string name = in;
      while (name.size() > 1 && name.back() == '/') name.pop_back();
      w.walk(name, name, ancestors, paths);
    } else {
      w.add_file(in, in, false, st);
    }
  }
  if (w.files.empty())
    throw Error("the inputs hold no files (" + std::to_string(inputs.size()) +
                " path(s), empty folders); give files or folders of text or JSON Lines");
  return w.files;
}

void check_input_unchanged(const InputFile& f) {
  struct stat st {};
  if (::stat(f.path.c_str(), &st) != 0)
    throw Error("input " + f.path + " disappeared while the dataset was being prepared; restore " +
                "it and run the same prepare again (it continues where it stopped)");
  const int64_t mtime = int64_t(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
  if (uint64_t(st.st_size) != f.size || mtime != f.mtime_ns)
    throw Error("input " + f.path + " changed while the dataset was being prepared (size or time " +
                "differs from the first pass); restore it, or delete the unfinished dataset " +
                "folder and prepare again");
}

}  // namespace gllm
