// Bounded JSON reading: a byte-level depth scan before nlohmann's parser runs (its parser is
// iterative, but dump, copy and comparison recurse), bounded error text, typed key reads.
#include "engine/io/json_read.h"

#include <sys/stat.h>

#include <cmath>
#include <limits>
#include <set>
#include <utility>
#include <vector>

#include "engine/io/atomic_file.h"
#include "engine/io/error.h"

namespace gllm {

namespace {

// Largest nesting depth of JSON text, or the byte offset where `limit` is first exceeded.
// Brackets inside strings do not count; the scan does not validate anything else.
bool depth_within(std::string_view text, int limit, size_t* where) {
  int depth = 0;
  bool in_string = false, escaped = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (escaped)
        escaped = false;
      else if (c == '\\')
        escaped = true;
      else if (c == '"')
        in_string = false;
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > limit) {
        *where = i;
        return false;
      }
    } else if (c == ']' || c == '}') {
      if (depth > 0) --depth;
    }
  }
  return true;
}

std::string with_fix(const std::string& fix) {
  return fix.empty() ? std::string() : "; " + fix;
}

}  // namespace

std::string brief_text(std::string_view s, size_t max_chars) {
  if (s.size() <= max_chars) return std::string(s);
  size_t cut = max_chars;
  // Do not split a UTF-8 sequence.
  while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;
  return std::string(s.substr(0, cut)) + "… (" + std::to_string(s.size() - cut) + " more bytes)";
}

namespace {

// Records the first key given twice in one object (one set of keys per open object; the depth is
// bounded before this runs, so the stack is too).
struct DuplicateKeyFinder : nlohmann::json_sax<nlohmann::json> {
  std::vector<std::set<std::string>> keys;
  std::string duplicate;
  bool null() override { return true; }
  bool boolean(bool) override { return true; }
  bool number_integer(number_integer_t) override { return true; }
  bool number_unsigned(number_unsigned_t) override { return true; }
  bool number_float(number_float_t, const string_t&) override { return true; }
  bool string(string_t&) override { return true; }
  bool binary(binary_t&) override { return true; }
  bool start_object(std::size_t) override {
    keys.emplace_back();
    return true;
  }
  bool key(string_t& k) override {
    if (!keys.empty() && !keys.back().insert(k).second && duplicate.empty()) duplicate = k;
    return true;
  }
  bool end_object() override {
    if (!keys.empty()) keys.pop_back();
    return true;
  }
  bool start_array(std::size_t) override { return true; }
  bool end_array() override { return true; }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override {
    return false;  // the DOM pass has parsed the same text already
  }
};

}  // namespace

nlohmann::json parse_json(std::string_view text, const std::string& source, const std::string& fix,
                          const JsonLimits& limits) {
  if (text.size() > limits.max_bytes)
    throw Error(source + ": " + std::to_string(text.size()) + " bytes of JSON, more than the " +
                std::to_string(limits.max_bytes) + " this file may hold" + with_fix(fix));
  size_t where = 0;
  if (!depth_within(text, limits.max_depth, &where))
    throw Error(source + ": JSON nested deeper than " + std::to_string(limits.max_depth) +
                " levels (at byte " + std::to_string(where) + ")" + with_fix(fix));
  nlohmann::json out;
  try {
    out = nlohmann::json::parse(text.begin(), text.end());
  } catch (const nlohmann::json::exception& e) {
    throw Error(source + ": not valid JSON (" + brief_text(e.what(), 240) + ")" + with_fix(fix));
  }
  // Duplicate keys are errors: nlohmann keeps the last one silently. A second, SAX pass finds them
  // (the DOM parser's callback form walks the parent object at every object's end: quadratic in
  // an object of many objects, minutes for a 30 MB safetensors header).
  DuplicateKeyFinder finder;
  nlohmann::json::sax_parse(text.begin(), text.end(), &finder);
  const std::string& duplicate = finder.duplicate;
  if (!duplicate.empty())
    throw Error(source + ": the key \"" + brief_text(duplicate, 80) +
                "\" appears twice in one object (JSON would silently keep the last); remove one" +
                with_fix(fix));
  return out;
}

nlohmann::json read_json_file(const std::string& path, const std::string& fix,
                              const JsonLimits& limits) {
  return parse_json(read_file_limited(path, limits.max_bytes, fix), path, fix, limits);
}

int json_depth(const nlohmann::json& j) {
  int best = 0;
  std::vector<std::pair<const nlohmann::json*, int>> stack{{&j, 0}};
  while (!stack.empty()) {
    auto [v, d] = stack.back();
    stack.pop_back();
    if (!v->is_structured()) continue;
    best = std::max(best, d + 1);
    for (const auto& child : *v)
      if (child.is_structured()) stack.push_back({&child, d + 1});
  }
  return best;
}

void check_json_depth(const nlohmann::json& j, int max_depth, const std::string& where,
                      const std::string& fix) {
  // Stops at the first value past the limit: a very deep value costs O(limit) here.
  std::vector<std::pair<const nlohmann::json*, int>> stack{{&j, 0}};
  while (!stack.empty()) {
    auto [v, d] = stack.back();
    stack.pop_back();
    if (!v->is_structured()) continue;
    if (d + 1 > max_depth)
      throw Error(where + ": nested deeper than " + std::to_string(max_depth) + " levels" +
                  with_fix(fix));
    for (const auto& child : *v)
      if (child.is_structured()) stack.push_back({&child, d + 1});
  }
}

std::string json_text(const nlohmann::json& j, int indent) {
  return j.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string json_brief(const nlohmann::json& j, size_t max_chars) {
  if (j.is_string()) return "\"" + brief_text(j.get_ref<const std::string&>(), max_chars) + "\"";
  if (!j.is_structured()) return brief_text(j.dump(), max_chars);
  const bool array = j.is_array();
  const std::string kind = array ? "an array of " + std::to_string(j.size()) + " items"
                                 : "an object with " + std::to_string(j.size()) + " keys";
  // Shallow values are shown (cut); deep ones only described, so nothing recurses far.
  if (json_depth(j) <= 4) {
    std::string s = json_text(j);
    if (s.size() <= max_chars) return s;
    return brief_text(s, max_chars) + " (" + kind + ")";
  }
  return std::string(array ? "[…]" : "{…}") + " (" + kind + ", nested more than 4 deep)";
}

namespace {

bool fits_int64(const nlohmann::json& v) {
  if (v.is_number_unsigned())
    return v.get<uint64_t>() <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
  return v.is_number_integer();
}

const nlohmann::json* member(const nlohmann::json& obj, const char* key) {
  if (!obj.is_object()) return nullptr;
  auto it = obj.find(key);
  return it == obj.end() ? nullptr : &*it;
}

}  // namespace

int64_t json_int_or(const nlohmann::json& obj, const char* key, int64_t fallback) {
  const auto* v = member(obj, key);
  return v && fits_int64(*v) ? v->get<int64_t>() : fallback;
}

double json_number_or(const nlohmann::json& obj, const char* key, double fallback) {
  const auto* v = member(obj, key);
  return v && v->is_number() ? v->get<double>() : fallback;
}

std::string json_string_or(const nlohmann::json& obj, const char* key,
                           const std::string& fallback) {
  const auto* v = member(obj, key);
  return v && v->is_string() ? v->get<std::string>() : fallback;
}

int64_t json_int_at(const nlohmann::json& obj, const char* key, const std::string& where) {
  const auto* v = member(obj, key);
  if (!v || !fits_int64(*v))
    throw Error(where + ": \"" + key + "\" should be an integer, got " +
                (v ? json_brief(*v) : std::string("nothing")));
  return v->get<int64_t>();
}

double json_number_at(const nlohmann::json& obj, const char* key, const std::string& where) {
  const auto* v = member(obj, key);
  if (!v || !v->is_number() || !std::isfinite(v->get<double>()))
    throw Error(where + ": \"" + key + "\" should be a finite number, got " +
                (v ? json_brief(*v) : std::string("nothing")));
  return v->get<double>();
}

std::string json_string_at(const nlohmann::json& obj, const char* key, const std::string& where) {
  const auto* v = member(obj, key);
  if (!v || !v->is_string())
    throw Error(where + ": \"" + key + "\" should be a string, got " +
                (v ? json_brief(*v) : std::string("nothing")));
  return v->get<std::string>();
}

}  // namespace gllm
