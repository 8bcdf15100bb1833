// The fuzzed boundary: one function per reader of outside bytes. Each accepts any bytes; a
// gllm::Error is the expected answer to bad input, anything else (a crash, another exception,
// a sanitizer report) is a finding. Shared by the libFuzzer mains and the plain replay test.
#pragma once
#include <sys/stat.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/config/run_config.h"
#include "engine/config/sweep.h"
#include "engine/data/token_cache.h"
#include "engine/grading/certify.h"
#include "engine/grading/ladder.h"
#include "engine/grading/profiles.h"
#include "engine/io/error.h"
#include "engine/io/json_read.h"
#include "engine/io/safetensors.h"
#include "engine/train/run_store.h"

namespace gllm::fuzz {

// A scratch folder of this process (inputs that must be files are written there).
inline const std::string& scratch_dir() {
  static const std::string dir = [] {
    const char* base = std::getenv("TMPDIR");
    std::string d =
        std::string(base && *base ? base : "/tmp") + "/gllm-fuzz-" + std::to_string(::getpid());
    std::filesystem::create_directories(d);
    return d;
  }();
  return dir;
}

inline void write_bytes(const std::string& path, std::string_view bytes) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// Splits `bytes` at "\n@@@\n" into at most `n` parts (missing parts are empty).
inline std::vector<std::string_view> split_parts(std::string_view bytes, size_t n) {
  std::vector<std::string_view> parts;
  const std::string_view sep = "\n@@@\n";
  while (parts.size() + 1 < n) {
    const size_t at = bytes.find(sep);
    if (at == std::string_view::npos) break;
    parts.push_back(bytes.substr(0, at));
    bytes.remove_prefix(at + sep.size());
  }
  parts.push_back(bytes);
  while (parts.size() < n) parts.emplace_back();
  return parts;
}

// safetensors: the validated parse and every tensor read back as floats, then what an accepted file
// must be (a finding, abort, where it is not): the header's bytes as the format has them ('{'
// first, only spaces after the last '}'), at most 100,000 tensors, each inside the data section
// with exactly shape × dtype bytes and no two overlapping, and the metadata reader agreeing with
// the whole-file reader on the same bytes.
inline void safetensors(const uint8_t* data, size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  std::optional<SafetensorsFile> parsed;
  try {
    parsed.emplace(SafetensorsFile::parse(bytes, "fuzz"));
    for (const auto& t : parsed->tensors()) {
      if (t.numel() > (1 << 20)) continue;  // large but valid: reading it proves nothing more
      auto v = parsed->to_float(t.name);
      (void)v;
    }
  } catch (const Error&) {
    return;
  }
  const SafetensorsFile& f = *parsed;
  uint64_t n = 0;
  for (int i = 0; i < 8; ++i) n |= uint64_t(uint8_t(bytes[i])) << (8 * i);
  const std::string_view header(bytes.data() + 8, n);
  size_t end = header.size();
  while (end > 0 && header[end - 1] == ' ') --end;
  if (header.empty() || header.front() != '{' || end == 0 || header[end - 1] != '}') std::abort();
  if (f.tensors().size() > 100000) std::abort();
  const size_t data_size = size - 8 - n;
  size_t previous_end = 0;
  for (const auto& t : f.tensors()) {  // in offset order
    int64_t numel = 1;
    for (int64_t d : t.shape) numel *= d;  // bounded by the byte count the reader checked
    if (t.end > data_size || t.begin > t.end ||
        t.end - t.begin != static_cast<size_t>(numel) * st_dtype_size(t.dtype))
      std::abort();
    if (t.begin != t.end && t.begin < previous_end) std::abort();
    if (t.begin != t.end) previous_end = t.end;
  }
  const std::string path = scratch_dir() + "/input.safetensors";
  write_bytes(path, bytes);
  std::map<std::string, std::string> meta;
  try {
    meta = read_safetensors_metadata(path);
  } catch (const Error&) {
    std::abort();  // the whole-file reader took what the metadata reader refuses
  }
  if (meta != f.metadata()) std::abort();
}

// RunConfig (with "base" presets from `presets`) and sweep files, and each sweep arm's "set".
inline void run_config(const uint8_t* data, size_t size, const std::string& presets) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  nlohmann::json j;
  try {
    j = parse_json(text, "fuzz", "", JsonLimits{4u << 20, 16});
  } catch (const Error&) {
    return;
  }
  try {
    RunConfig c = RunConfig::from_json(j, presets);
    (void)c.to_json();
  } catch (const Error&) {
  }
  try {
    const SweepFile s = sweep_from_json(j, "fuzz");
    for (const auto& arm : s.arms) {
      RunConfig c;
      for (auto it = arm.set.begin(); it != arm.set.end(); ++it) {
        try {
          set_config_value(c, it.key(), it.value());
          (void)get_config_value(c, it.key());
        } catch (const Error&) {
        }
      }
    }
  } catch (const Error&) {
  }
}

// A run folder from parts: config.json, metrics.jsonl, summary.json, one checkpoint sidecar,
// run.lock; then everything `gllm runs`, `resume` and `audit` read of it.
// An optional sixth part's first byte turns files of the folder into links to a file outside it
// or into FIFOs (bit 0: run.lock → link, 1: metrics.jsonl → link, 2: summary.json → link,
// 3: config.json → FIFO, 4: checkpoints/ → FIFO, 5: checkpoints/ → dangling link, 6: newest
// sidecar → FIFO). Readers must refuse them without blocking, writers must never write through
// them: the outside file changing is a finding (abort).
inline void run_folder(const uint8_t* data, size_t size) {
  const auto parts = split_parts(std::string_view(reinterpret_cast<const char*>(data), size), 6);
  const std::string dir = scratch_dir() + "/run";
  const std::string outside = scratch_dir() + "/outside.json";
  const std::string outside_text = "{\"status\": \"completed\"}\n";
  const unsigned shape = parts[5].empty() ? 0u : static_cast<unsigned char>(parts[5][0]);
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  std::filesystem::create_directories(dir + "/checkpoints", ec);
  write_bytes(outside, outside_text);
  auto place = [&](const std::string& path, std::string_view text, unsigned link_bit,
                   unsigned fifo_bit) {
    if (shape & link_bit)
      std::filesystem::create_symlink(outside, path, ec);
    else if (shape & fifo_bit)
      ::mkfifo(path.c_str(), 0644);
    else
      write_bytes(path, text);
  };
  place(dir + "/config.json", parts[0], 0, 8);
  place(dir + "/metrics.jsonl", parts[1], 2, 0);
  place(dir + "/summary.json", parts[2], 4, 0);
  place(dir + "/checkpoints/step_000007.json", parts[3], 0, 64);
  write_bytes(dir + "/checkpoints/step_000007.safetensors", "weights");
  write_bytes(dir + "/checkpoints/step_000007.optim.safetensors", "optimizer");
  place(dir + "/run.lock", parts[4], 1, 0);
  if (shape & (16 | 32)) {
    std::filesystem::rename(dir + "/checkpoints", dir + "/checkpoints.moved", ec);
    if (shape & 16)
      ::mkfifo((dir + "/checkpoints").c_str(), 0644);
    else
      std::filesystem::create_directory_symlink(dir + "/unmounted", dir + "/checkpoints", ec);
  }
  // The writing side: the lock, a metrics line, a summary, the checkpoint store check.
  try {
    auto lock = RunLock::acquire(dir, "fuzz");
    RunStore store(dir);
    try {
      check_checkpoint_store(dir);
    } catch (const Error&) {
    }
    try {
      store.append_metric({{"step", 1}, {"loss", 1.0}});
    } catch (const Error&) {
    }
    try {
      store.write_summary({{"status", "failed"}});
    } catch (const Error&) {
    }
  } catch (const Error&) {
  }
  std::ifstream check(outside, std::ios::binary);
  const std::string now((std::istreambuf_iterator<char>(check)), std::istreambuf_iterator<char>());
  if (now != outside_text) std::abort();  // a file outside the run folder was written
  if (shape & (16 | 32)) {
    std::filesystem::remove(dir + "/checkpoints", ec);
    std::filesystem::rename(dir + "/checkpoints.moved", dir + "/checkpoints", ec);
  }
  try {
    auto r = read_run(dir);
    (void)to_json(r);
  } catch (const Error&) {
  }
  try {
    auto m = read_metrics(dir + "/metrics.jsonl");
    (void)first_reach(m.records, "val_bpb", 3.0);
  } catch (const Error&) {
  }
  std::vector<std::string> problems;
  for (const auto& c : list_checkpoints(dir, &problems)) {
    try {
      verify_checkpoint(c);
    } catch (const Error&) {
    }
  }
  try {
    (void)resolve_weights_path(dir + "/checkpoints/step_000007.safetensors");
  } catch (const Error&) {
  }
  bool locked = false;
  (void)read_run_owner(dir, &locked).describe();
}

// tokens.bin: the header check on the bytes, then the memory-mapped shard and every document.
inline void token_cache(const uint8_t* data, size_t size) {
  try {
    (void)check_token_shard(data, size, "fuzz");
  } catch (const Error&) {
  }
  const std::string path = scratch_dir() + "/tokens.bin";
  write_bytes(path, std::string_view(reinterpret_cast<const char*>(data), size));
  try {
    auto shard = TokenShard::open(path);
    uint64_t sum = shard->max_id();
    for (size_t i = 0; i < shard->num_documents(); ++i) {
      auto v = shard->document(i);
      for (size_t k = 0; k < v.size; ++k) sum += v.data[k];
    }
    (void)sum;
  } catch (const Error&) {
  }
}

// Profiles and ladder files through their loaders.
inline void profiles(const uint8_t* data, size_t size) {
  const std::string path = scratch_dir() + "/profiles.json";
  write_bytes(path, std::string_view(reinterpret_cast<const char*>(data), size));
  try {
    auto f = grading::load_profiles_file(path);
    (void)grading::profiles_to_json(f);
  } catch (const Error&) {
  }
  try {
    auto l = grading::load_ladder_file(path);
    (void)grading::ladder_to_json(l);
  } catch (const Error&) {
  }
  try {  // either kind, head profiles (`gllm profiles --checkpoint`) included
    auto a = grading::load_any_profiles(path);
    if (a.kind == "heads") (void)grading::head_profiles_to_json(a.heads);
  } catch (const Error&) {
  }
}

}  // namespace gllm::fuzz
