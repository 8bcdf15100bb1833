// Sweep file reading: every key checked for type and range before a run starts, so a typo in a
// sweep fails at once with the key named, not after the first arms have trained.
#include "engine/config/sweep.h"

#include <map>
#include <set>

#include "engine/io/error.h"
#include "engine/io/json_read.h"

namespace gllm {

namespace {

constexpr size_t kMaxArms = 1000;
constexpr size_t kMaxSeeds = 1000;
constexpr size_t kMaxSets = 1000;

std::string string_at(const nlohmann::json& j, const std::string& where) {
  if (!j.is_string()) throw Error(where + " should be a string, got " + json_brief(j));
  return j.get<std::string>();
}

// An integer in [lo, hi] (JSON's non-negative integers arrive as unsigned).
bool int_in(const nlohmann::json& v, int64_t lo, int64_t hi, int64_t* out) {
  if (!v.is_number_integer()) return false;
  if (v.is_number_unsigned() && v.get<uint64_t>() > static_cast<uint64_t>(hi)) return false;
  const int64_t x = v.get<int64_t>();
  if (x < lo || x > hi) return false;
  *out = x;
  return true;
}

}  // namespace

SweepFile sweep_from_json(const nlohmann::json& j, const std::string& source) {
  const std::string shape =
      "; a sweep is {\"arms\": [\"preset\" or {\"preset\", \"name\", \"set\"}], \"seeds\": [ints], "
      "\"name\", \"out\", \"steps\", \"fork\"}";
  check_json_depth(j, 16, source, "a sweep is a few levels deep");
  if (!j.is_object()) throw Error(source + ": a sweep is a JSON object" + shape);
  SweepFile s;
  for (auto it = j.begin(); it != j.end(); ++it) {
    const std::string& k = it.key();
    if (k != "name" && k != "arms" && k != "seeds" && k != "out" && k != "steps" &&
        k != "description" && k != "fork")
      throw Error(source + ": unknown key \"" + brief_text(k, 80) + "\"" + shape);
  }
  if (j.contains("name")) s.name = string_at(j["name"], source + ": \"name\"");
  if (j.contains("out")) s.out = string_at(j["out"], source + ": \"out\"");
  if (j.contains("fork")) {
    s.fork = string_at(j["fork"], source + ": \"fork\"");
    if (s.fork.empty())
      throw Error(source + ": \"fork\" is empty; name a run folder, RUN@STEP or a checkpoint");
  }
  if (j.contains("steps")) {
    if (!int_in(j["steps"], 1, 1000000000, &s.steps))
      throw Error(source + ": \"steps\" should be an integer in [1, 1000000000], got " +
                  json_brief(j["steps"]));
  }
  if (!j.contains("arms") || !j["arms"].is_array() || j["arms"].empty())
    throw Error(source +
                ": a sweep needs \"arms\": a non-empty list of preset names or "
                "{\"preset\", \"name\", \"set\"} objects");
  if (j["arms"].size() > kMaxArms)
    throw Error(source + ": " + std::to_string(j["arms"].size()) + " arms, more than " +
                std::to_string(kMaxArms) + "; split the sweep");
  size_t index = 0;
  for (const auto& a : j["arms"]) {
    const std::string where = source + ": arms[" + std::to_string(index++) + "]";
    SweepArm arm;
    if (a.is_string()) {
      arm.preset = a.get<std::string>();
    } else if (a.is_object()) {
      for (auto it = a.begin(); it != a.end(); ++it)
        if (it.key() != "preset" && it.key() != "name" && it.key() != "set")
          throw Error(where + ": unknown key \"" + brief_text(it.key(), 80) +
                      "\"; an arm object has \"preset\", \"name\" and \"set\"");
      if (!a.contains("preset")) throw Error(where + ": an arm object needs \"preset\"");
      arm.preset = string_at(a["preset"], where + ".preset");
      if (a.contains("name")) arm.name = string_at(a["name"], where + ".name");
      if (a.contains("set")) {
        if (!a["set"].is_object())
          throw Error(where + ".set should be an object of dotted keys and values, got " +
                      json_brief(a["set"]));
        if (a["set"].size() > kMaxSets)
          throw Error(where + ".set has more than " + std::to_string(kMaxSets) + " keys");
        arm.set = a["set"];
      }
    } else {
      throw Error(where + ": each arm is a preset name or an object with \"preset\", got " +
                  json_brief(a));
    }
    if (arm.preset.empty()) throw Error(where + ": the preset name is empty");
    s.arms.push_back(std::move(arm));
  }
  if (!j.contains("seeds") || !j["seeds"].is_array() || j["seeds"].empty())
    throw Error(source + ": a sweep needs \"seeds\": a non-empty list of integers");
  if (j["seeds"].size() > kMaxSeeds)
    throw Error(source + ": more than " + std::to_string(kMaxSeeds) + " seeds; split the sweep");
  for (const auto& v : j["seeds"]) {
    int64_t x = 0;
    if (!int_in(v, 0, 2147483647, &x))
      throw Error(source + ": seed " + json_brief(v) + " is not an integer in [0, 2147483647]");
    const int seed = static_cast<int>(x);
    for (int other : s.seeds)
      if (other == seed)
        throw Error(source + ": seed " + std::to_string(seed) + " is listed twice");
    s.seeds.push_back(seed);
  }
  return s;
}

namespace {

void flatten(const nlohmann::json& j, const std::string& prefix,
             std::map<std::string, nlohmann::json>& out) {
  if (j.is_object() && !j.empty()) {
    for (auto it = j.begin(); it != j.end(); ++it)
      flatten(it.value(), prefix.empty() ? it.key() : prefix + "." + it.key(), out);
    return;
  }
  out[prefix] = j;
}

}  // namespace

std::vector<std::string> config_differences(const nlohmann::json& a, const nlohmann::json& b,
                                            size_t max_items) {
  std::map<std::string, nlohmann::json> fa, fb;
  flatten(a, "", fa);
  flatten(b, "", fb);
  std::set<std::string> keys;
  for (const auto& [k, v] : fa) keys.insert(k);
  for (const auto& [k, v] : fb) keys.insert(k);
  std::vector<std::string> out;
  for (const auto& k : keys) {
    if (k == "description") continue;
    auto ia = fa.find(k), ib = fb.find(k);
    const bool same = ia != fa.end() && ib != fb.end() && ia->second == ib->second;
    if (same) continue;
    if (out.size() == max_items) {
      out.push_back("…");
      break;
    }
    out.push_back(brief_text(k, 80) + " " +
                  (ia == fa.end() ? std::string("(absent)") : json_brief(ia->second, 40)) + " → " +
                  (ib == fb.end() ? std::string("(absent)") : json_brief(ib->second, 40)));
  }
  return out;
}

SweepFile read_sweep_file(const std::string& path) {
  return sweep_from_json(read_json_file(path, "fix the sweep file", JsonLimits{4ull << 20, 16}),
                         path);
}

}  // namespace gllm
