// Portable run folders: the files a run's config names (ladder, profiles, grades, corpus) are
// stored relative to the project folder and found again from wherever the run folder is opened.
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace gllm {

struct RunConfig;

// The project folder: the one holding presets_dir() (a clone's root when run from it).
std::string project_dir();

// The config keys that name files, as dotted paths ("grading.ladder_file", …).
const std::vector<std::string>& config_file_keys();

// `config` (RunConfig JSON) with every file inside the project folder written relative to it
// ("presets/ladders/x.json"); files elsewhere keep their absolute path. What a run folder's
// config.json stores, so a results tree opens on any checkout.
nlohmann::json portable_config(const nlohmann::json& config);

// Finds a file a run's config names, from the folder holding that config: a relative path is
// tried beside `from_dir`, then in each folder above it (a results tree inside any checkout),
// then in the project folder and the current folder; an absolute path that no longer exists (a
// config written on another machine, or before its tree moved) is tried the same way by its
// trailing parts, longest first, down to two ("presets/ladders/x.json", "data/corpus.txt").
// Returns the first path that exists, else `path` unchanged (the caller's error then names it).
std::string find_run_file(const std::string& path, const std::string& from_dir);

// find_run_file on every file key of a config read from a run folder (or a preset's folder).
void resolve_run_files(RunConfig& config, const std::string& from_dir);
void resolve_run_files(nlohmann::json& config, const std::string& from_dir);

}  // namespace gllm
