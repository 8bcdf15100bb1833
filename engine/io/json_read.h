// The one reader of JSON that comes from outside the process (files, checkpoint metadata, sweep and
// preset text): size and nesting depth bounded before anything recursive runs, errors bounded too.
#pragma once
#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace gllm {

// Bounds applied before parsing. Depth counts open arrays and objects ([[1]] has depth 2).
struct JsonLimits {
  size_t max_bytes = 16ull << 20;  // 16 MiB: configs, sidecars, summaries, sweeps
  int max_depth = 64;
};
// Larger bounds for files the workbench writes with big arrays (profiles with a basis, ladders).
inline JsonLimits large_json_limits() {
  return {512ull << 20, 64};
}

// Parses `text`; any problem (too large, nested too deep, malformed, number overflow, a key given
// twice in one object) throws
// gllm::Error "<source>: <problem>; <fix>" with at most a few hundred characters of detail.
nlohmann::json parse_json(std::string_view text, const std::string& source, const std::string& fix,
                          const JsonLimits& limits = {});
// Reads and parses a file; the size is checked before the file is read into memory. The limits
// are always stated by the caller (what a file may hold depends on the file).
nlohmann::json read_json_file(const std::string& path, const std::string& fix,
                              const JsonLimits& limits);

// Nesting depth of a value without recursion (a scalar has depth 0).
int json_depth(const nlohmann::json& j);
// Throws gllm::Error "<where>: nested deeper than <max_depth> levels; <fix>" without recursing.
void check_json_depth(const nlohmann::json& j, int max_depth, const std::string& where,
                      const std::string& fix);

// A short preview of a value for error messages: never more than about `max_chars` characters and
// never a recursive walk of a deep value ("[1, 2, 3, …] (an array of 4000 items)").
std::string json_brief(const nlohmann::json& j, size_t max_chars = 80);

// JSON text for files the engine writes: invalid UTF-8 in a string (a file name in a message) is
// replaced, never an exception that would lose the record. indent -1: one line.
std::string json_text(const nlohmann::json& j, int indent = -1);

// `s` cut to `max_chars` characters with the number of bytes left out.
std::string brief_text(std::string_view s, size_t max_chars = 200);

// Typed reads of one key of a JSON object from outside: a missing key or a wrong type gives
// `fallback` (the *_or forms) or throws gllm::Error naming `where`, the key and the type wanted.
int64_t json_int_or(const nlohmann::json& obj, const char* key, int64_t fallback);
double json_number_or(const nlohmann::json& obj, const char* key, double fallback);
std::string json_string_or(const nlohmann::json& obj, const char* key, const std::string& fallback);
int64_t json_int_at(const nlohmann::json& obj, const char* key, const std::string& where);
double json_number_at(const nlohmann::json& obj, const char* key, const std::string& where);
std::string json_string_at(const nlohmann::json& obj, const char* key, const std::string& where);

}  // namespace gllm
