// Declarative JSON schemas for configuration structs: one table per struct gives each key its
// type, range and help text. Parsing, validation, serialisation and the GUI's generated forms
// all read the same table, so a key cannot be known to one and unknown to another.
#pragma once
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "engine/io/error.h"
#include "engine/io/json_read.h"

namespace gllm {

enum class FieldKind { Bool, Int, Real, String, Choice, IntList, RealList, Section };

// What a form needs to know about one key. `path` is the full dotted key path.
struct FieldInfo {
  std::string path;
  FieldKind kind = FieldKind::Int;
  std::string help;
  double min = -std::numeric_limits<double>::infinity();
  double max = std::numeric_limits<double>::infinity();
  std::vector<std::string> choices;  // for Choice
};

inline FieldInfo make_info(const char* key, FieldKind kind, const char* help,
                           double lo = -std::numeric_limits<double>::infinity(),
                           double hi = std::numeric_limits<double>::infinity()) {
  FieldInfo info;
  info.path = key;
  info.kind = kind;
  info.help = help;
  info.min = lo;
  info.max = hi;
  return info;
}

template <class T>
class Schema {
 public:
  using Getter = std::function<nlohmann::json(const T&)>;
  using Setter = std::function<void(T&, const nlohmann::json&, const std::string& path)>;

  struct Field {
    FieldInfo info;  // info.path holds the key within this struct
    Getter get;
    Setter set;
    std::function<void(std::vector<FieldInfo>&, const std::string& prefix)> describe_nested;
  };

  Schema& flag(const char* key, bool T::*m, const char* help) {
    Field f;
    f.info = make_info(key, FieldKind::Bool, help);
    f.get = [m](const T& o) { return nlohmann::json(o.*m); };
    f.set = [m](T& o, const nlohmann::json& j, const std::string& path) {
      if (!j.is_boolean()) throw ConfigError(path, "expected true or false, got " + json_brief(j));
      o.*m = j.get<bool>();
    };
    fields_.push_back(std::move(f));
    return *this;
  }

  template <class I>
  Schema& integer(const char* key, I T::*m, double lo, double hi, const char* help) {
    Field f;
    f.info = make_info(key, FieldKind::Int, help, lo, hi);
    f.get = [m](const T& o) { return nlohmann::json(o.*m); };
    f.set = [m, lo, hi](T& o, const nlohmann::json& j, const std::string& path) {
      o.*m = static_cast<I>(check_integer(j, lo, hi, path));
    };
    fields_.push_back(std::move(f));
    return *this;
  }

  Schema& real(const char* key, double T::*m, double lo, double hi, const char* help) {
    Field f;
    f.info = make_info(key, FieldKind::Real, help, lo, hi);
    f.get = [m](const T& o) { return nlohmann::json(o.*m); };
    f.set = [m, lo, hi](T& o, const nlohmann::json& j, const std::string& path) {
      o.*m = check_real(j, lo, hi, path);
    };
    fields_.push_back(std::move(f));
    return *this;
  }

  Schema& text(const char* key, std::string T::*m, const char* help) {
    Field f;
    f.info = make_info(key, FieldKind::String, help);
    f.get = [m](const T& o) { return nlohmann::json(o.*m); };
    f.set = [m](T& o, const nlohmann::json& j, const std::string& path) {
      if (!j.is_string()) throw ConfigError(path, "expected a string, got " + json_brief(j));
      o.*m = j.get<std::string>();
    };
    fields_.push_back(std::move(f));
    return *this;
  }

  Schema& choice(const char* key, std::string T::*m, std::vector<std::string> allowed,
                 const char* help) {
    Field f;
    f.info = make_info(key, FieldKind::Choice, help);
    f.info.choices = allowed;
    f.get = [m](const T& o) { return nlohmann::json(o.*m); };
    f.set = [m, allowed](T& o, const nlohmann::json& j, const std::string& path) {
      if (!j.is_string()) throw ConfigError(path, "expected a string, got " + json_brief(j));
      auto v = j.get<std::string>();
      for (const auto& a : allowed)
        if (a == v) {
          o.*m = v;
          return;
        }
      throw ConfigError(path, "'" + brief_text(v, 80) + "' is not one of: " + join(allowed));
    };
    fields_.push_back(std::move(f));
    return *this;
  }

  template <class I>
  Schema& integers(const char* key, std::vector<I> T::*m, double lo, double hi, const char* help) {
    Field f;
    f.info = make_info(key, FieldKind::IntList, help, lo, hi);
    f.get = [m](const T& o) { return nlohmann::json(o.*m); };
    f.set = [m, lo, hi](T& o, const nlohmann::json& j, const std::string& path) {
      if (!j.is_array())
        throw ConfigError(path, "expected a list of integers, got " + json_brief(j));
      std::vector<I> out;
      for (size_t i = 0; i < j.size(); ++i)
        out.push_back(
            static_cast<I>(check_integer(j[i], lo, hi, path + "[" + std::to_string(i) + "]")));
      o.*m = std::move(out);
    };
    fields_.push_back(std::move(f));
    return *this;
  }

  Schema& reals(const char* key, std::vector<double> T::*m, double lo, double hi,
                const char* help) {
    Field f;
    f.info = make_info(key, FieldKind::RealList, help, lo, hi);
    f.get = [m](const T& o) { return nlohmann::json(o.*m); };
    f.set = [m, lo, hi](T& o, const nlohmann::json& j, const std::string& path) {
      if (!j.is_array())
        throw ConfigError(path, "expected a list of numbers, got " + json_brief(j));
      std::vector<double> out;
      for (size_t i = 0; i < j.size(); ++i)
        out.push_back(check_real(j[i], lo, hi, path + "[" + std::to_string(i) + "]"));
      o.*m = std::move(out);
    };
    fields_.push_back(std::move(f));
    return *this;
  }

  // A nested struct with its own schema (a section of RunConfig).
  template <class S>
  Schema& section(const char* key, S T::*m, const Schema<S>& sub, const char* help) {
    Field f;
    f.info = make_info(key, FieldKind::Section, help);
    const Schema<S>* subp = &sub;
    f.get = [m, subp](const T& o) { return subp->to_json(o.*m); };
    f.set = [m, subp](T& o, const nlohmann::json& j, const std::string& path) {
      subp->from_json(o.*m, j, path);
    };
    f.describe_nested = [subp](std::vector<FieldInfo>& out, const std::string& prefix) {
      subp->describe(out, prefix);
    };
    fields_.push_back(std::move(f));
    return *this;
  }

  // Cross-field checks run after parsing (e.g. n_embd divisible by n_head).
  Schema& check(std::function<void(const T&, const std::string& path)> fn) {
    checks_.push_back(std::move(fn));
    return *this;
  }

  nlohmann::json to_json(const T& o) const {
    nlohmann::json j = nlohmann::json::object();
    for (const auto& f : fields_) j[f.info.path] = f.get(o);
    return j;
  }

  // Reads the keys present in `j` over the values already in `o` (defaults or a base preset).
  // Unknown keys are errors that list the known ones.
  void from_json(T& o, const nlohmann::json& j, const std::string& path = "") const {
    if (!j.is_object()) throw ConfigError(path, "expected a JSON object, got " + json_brief(j));
    for (auto it = j.begin(); it != j.end(); ++it) {
      const Field* f = find(it.key());
      std::string sub = path.empty() ? it.key() : path + "." + brief_text(it.key(), 80);
      if (!f) {
        std::vector<std::string> known;
        for (const auto& k : fields_) known.push_back(k.info.path);
        throw ConfigError(sub, "unknown key; known keys here: " + join(known) +
                                   " (fix the spelling or remove the key)");
      }
      f->set(o, it.value(), sub);
    }
    validate(o, path);
  }

  void validate(const T& o, const std::string& path = "") const {
    for (const auto& c : checks_) c(o, path);
  }

  // Flattened description of every leaf key, with full dotted paths.
  void describe(std::vector<FieldInfo>& out, const std::string& prefix = "") const {
    for (const auto& f : fields_) {
      std::string p = prefix.empty() ? f.info.path : prefix + "." + f.info.path;
      if (f.describe_nested) {
        f.describe_nested(out, p);
      } else {
        FieldInfo info = f.info;
        info.path = p;
        out.push_back(info);
      }
    }
  }

  const Field* find(const std::string& key) const {
    for (const auto& f : fields_)
      if (f.info.path == key) return &f;
    return nullptr;
  }

  const std::vector<Field>& fields() const { return fields_; }

  static std::string join(const std::vector<std::string>& v) {
    std::string s;
    for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + v[i];
    return s;
  }

 private:
  static std::string range_text(double lo, double hi) {
    auto num = [](double x) {
      if (std::isinf(x)) return std::string(x < 0 ? "-inf" : "inf");
      nlohmann::json j = x;
      if (x == std::floor(x) && std::fabs(x) < 1e15) j = static_cast<long long>(x);
      return json_brief(j);
    };
    return "[" + num(lo) + ", " + num(hi) + "]";
  }
  static long long check_integer(const nlohmann::json& j, double lo, double hi,
                                 const std::string& path) {
    if (!j.is_number_integer() &&
        !(j.is_number_float() && std::floor(j.get<double>()) == j.get<double>()))
      throw ConfigError(path, "expected an integer, got " + json_brief(j));
    double v = j.get<double>();
    if (v < lo || v > hi)
      throw ConfigError(path, json_brief(j) + " is out of range; allowed " + range_text(lo, hi));
    return j.is_number_integer() ? j.get<long long>() : static_cast<long long>(v);
  }
  static double check_real(const nlohmann::json& j, double lo, double hi, const std::string& path) {
    if (!j.is_number()) throw ConfigError(path, "expected a number, got " + json_brief(j));
    double v = j.get<double>();
    if (!std::isfinite(v) || v < lo || v > hi)
      throw ConfigError(path, json_brief(j) + " is out of range; allowed " + range_text(lo, hi));
    return v;
  }

  std::vector<Field> fields_;
  std::vector<std::function<void(const T&, const std::string&)>> checks_;
};

}  // namespace gllm
