// safetensors encoding and validated decoding (https://github.com/huggingface/safetensors format):
// every inconsistency in a file is reported with the file, the tensor and what to do.
#include "engine/io/safetensors.h"

#include <sys/stat.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>

#include "engine/io/atomic_file.h"
#include "engine/io/error.h"
#include "engine/io/json_read.h"

namespace gllm {

namespace {

struct DtypeRow {
  StDtype t;
  const char* name;
  size_t size;
};
const DtypeRow kDtypes[] = {{StDtype::F64, "F64", 8}, {StDtype::F32, "F32", 4},
                            {StDtype::F16, "F16", 2}, {StDtype::BF16, "BF16", 2},
                            {StDtype::I64, "I64", 8}, {StDtype::I32, "I32", 4},
                            {StDtype::I16, "I16", 2}, {StDtype::I8, "I8", 1},
                            {StDtype::U8, "U8", 1},   {StDtype::BOOL, "BOOL", 1}};

constexpr uint64_t kMaxHeader = 100ull << 20;  // 100 MiB, as the reference implementation

// Product of the dimensions, or -1 when it overflows int64 (or a dimension is negative).
int64_t numel_of(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t s : shape) {
    if (s < 0 || __builtin_mul_overflow(n, s, &n)) return -1;
  }
  return n;
}

// Bytes of `shape` in `dtype`, or false when that does not fit in size_t.
bool bytes_of(const std::vector<int64_t>& shape, StDtype dtype, size_t* out) {
  const int64_t n = numel_of(shape);
  if (n < 0) return false;
  return !__builtin_mul_overflow(static_cast<uint64_t>(n), st_dtype_size(dtype), out);
}

constexpr size_t kMaxDims = 64;  // torch allows 64 dimensions
// A model checkpoint holds a few hundred tensors; a header listing more is not one (400,000 empty
// entries fit in a 100 MiB header and would each become an index entry).
constexpr size_t kMaxTensors = 100000;

// The format's header rules before any JSON parsing: it begins with '{' (no byte-order mark, no
// leading padding) and may be padded at its end with spaces only (not NUL or other bytes).
void check_header_bytes(std::string_view text, const std::string& label) {
  const std::string fix = "; the header was altered — rewrite the file or restore a copy";
  if (text.empty() || text.front() != '{') {
    const bool bom = text.size() >= 3 && static_cast<uint8_t>(text[0]) == 0xEF &&
                     static_cast<uint8_t>(text[1]) == 0xBB && static_cast<uint8_t>(text[2]) == 0xBF;
    throw Error(label + ": the safetensors header must begin with '{' but begins with " +
                (bom            ? std::string("a UTF-8 byte-order mark")
                 : text.empty() ? std::string("nothing (length 0)")
                                : "byte 0x" +
                                      [&] {
                                        char b[3];
                                        std::snprintf(b, sizeof b, "%02X",
                                                      static_cast<uint8_t>(text[0]));
                                        return std::string(b);
                                      }()) +
                fix);
  }
  size_t end = text.size();
  while (end > 0 && text[end - 1] == ' ') --end;
  if (end == 0 || text[end - 1] != '}') {
    const bool nul = text.find('\0') != std::string_view::npos;
    throw Error(label + ": the safetensors header must end with '}' followed only by spaces" +
                (nul ? std::string(", but it holds NUL bytes") : std::string()) + fix);
  }
}

}  // namespace

const char* st_dtype_name(StDtype t) {
  for (const auto& r : kDtypes)
    if (r.t == t) return r.name;
  return "?";
}

StDtype st_dtype_from_name(const std::string& s) {
  for (const auto& r : kDtypes)
    if (s == r.name) return r.t;
  throw Error("unsupported safetensors dtype '" + s +
              "'; convert the tensor to F32, F16, BF16, F64, I64, I32, I16, I8, U8 or BOOL");
}

size_t st_dtype_size(StDtype t) {
  for (const auto& r : kDtypes)
    if (r.t == t) return r.size;
  return 0;
}

int64_t StTensorInfo::numel() const {
  return numel_of(shape);
}

namespace {

// Validates the tensors and builds the padded header; `order` receives the tensors in name order.
std::string build_header(const std::vector<StTensorIn>& tensors,
                         const std::map<std::string, std::string>& metadata,
                         std::vector<const StTensorIn*>& order) {
  order.clear();
  for (const auto& t : tensors) order.push_back(&t);
  std::sort(order.begin(), order.end(), [](auto* a, auto* b) { return a->name < b->name; });
  nlohmann::ordered_json header = nlohmann::ordered_json::object();
  if (!metadata.empty()) {
    nlohmann::ordered_json m = nlohmann::ordered_json::object();
    for (const auto& [k, v] : metadata) m[k] = v;
    header["__metadata__"] = m;
  }
  size_t offset = 0;
  for (size_t i = 0; i < order.size(); ++i) {
    const auto& t = *order[i];
    if (t.name.empty() || t.name == "__metadata__")
      throw Error("cannot write a tensor named '" + t.name + "' to safetensors; rename it");
    if (i > 0 && order[i - 1]->name == t.name)
      throw Error("tensor '" + t.name + "' given twice; each name must be unique");
    for (int64_t s : t.shape)
      if (s < 0) throw Error("tensor '" + t.name + "' has a negative dimension");
    size_t want = 0;
    if (!bytes_of(t.shape, t.dtype, &want))
      throw Error("tensor '" + t.name + "': its shape has more elements than a file can hold");
    if (want != t.nbytes)
      throw Error("tensor '" + t.name + "': " + std::to_string(t.nbytes) +
                  " bytes given but its shape and dtype need " + std::to_string(want));
    if (t.nbytes && !t.data) throw Error("tensor '" + t.name + "' has no data pointer");
    nlohmann::ordered_json e;
    e["dtype"] = st_dtype_name(t.dtype);
    e["shape"] = t.shape;
    e["data_offsets"] = {offset, offset + t.nbytes};
    header[t.name] = e;
    offset += t.nbytes;
  }
  std::string h = header.dump();
  while (h.size() % 8 != 0) h.push_back(' ');
  std::string out(8, '\0');
  const uint64_t n = h.size();
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>((n >> (8 * i)) & 0xff);
  return out + h;
}

}  // namespace

std::string encode_safetensors(const std::vector<StTensorIn>& tensors,
                               const std::map<std::string, std::string>& metadata) {
  std::vector<const StTensorIn*> order;
  std::string out = build_header(tensors, metadata, order);
  for (const auto* t : order)
    if (t->nbytes) out.append(static_cast<const char*>(t->data), t->nbytes);
  return out;
}

void write_safetensors(const std::string& path, const std::vector<StTensorIn>& tensors,
                       const std::map<std::string, std::string>& metadata) {
  std::vector<const StTensorIn*> order;
  const std::string header = build_header(tensors, metadata, order);
  AtomicFileWriter w(path);  // streams the payload: no second copy of a large checkpoint
  w.write(header.data(), header.size());
  for (const auto* t : order)
    if (t->nbytes) w.write(t->data, t->nbytes);
  w.commit();
}

SafetensorsFile SafetensorsFile::open(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0)
    throw Error("cannot read " + path + ": no such file; give an existing .safetensors file");
  if (!S_ISREG(st.st_mode)) throw Error(path + " is not a regular file; give a .safetensors file");
  return parse(read_file(path), path);
}

SafetensorsFile SafetensorsFile::parse(std::string bytes, const std::string& label) {
  SafetensorsFile f;
  f.label_ = label;
  f.bytes_ = std::move(bytes);
  const std::string hint =
      "; the file is truncated or not a safetensors file — rewrite it or restore a copy";
  if (f.bytes_.size() < 8) throw Error(label + ": shorter than the 8-byte header length" + hint);
  uint64_t n = 0;
  for (int i = 0; i < 8; ++i)
    n |= static_cast<uint64_t>(static_cast<uint8_t>(f.bytes_[i])) << (8 * i);
  if (n > kMaxHeader)
    throw Error(label + ": header length " + std::to_string(n) + " is implausible" + hint);
  if (8 + n > f.bytes_.size())
    throw Error(label + ": header length " + std::to_string(n) +
                " runs past the end of the file (" + std::to_string(f.bytes_.size()) + " bytes)" +
                hint);
  f.data_start_ = 8 + n;
  const size_t data_size = f.bytes_.size() - f.data_start_;
  const std::string_view header_text(f.bytes_.data() + 8, n);
  check_header_bytes(header_text, label);
  nlohmann::json header =
      parse_json(header_text, label + " (safetensors header)",
                 "the file is not a safetensors file — rewrite it or restore a copy",
                 JsonLimits{kMaxHeader, 8});
  if (!header.is_object()) throw Error(label + ": header is not a JSON object" + hint);
  if (header.size() > kMaxTensors + 1)
    throw Error(label + ": header lists " + std::to_string(header.size()) +
                " entries, more than the " + std::to_string(kMaxTensors) +
                " tensors a checkpoint may hold" + hint);
  for (auto it = header.begin(); it != header.end(); ++it) {
    if (it.key() == "__metadata__") {
      if (!it->is_object()) throw Error(label + ": __metadata__ is not an object" + hint);
      for (auto m = it->begin(); m != it->end(); ++m) {
        if (!m->is_string())
          throw Error(label + ": __metadata__." + brief_text(m.key(), 80) +
                      " is not a string (safetensors metadata maps strings to strings)");
        f.metadata_[m.key()] = m->get<std::string>();
      }
      continue;
    }
    const auto& e = *it;
    const std::string where = label + ": tensor '" + brief_text(it.key(), 120) + "'";
    if (!e.is_object() || !e.contains("dtype") || !e.contains("shape") ||
        !e.contains("data_offsets"))
      throw Error(where + " lacks dtype, shape or data_offsets" + hint);
    StTensorInfo info;
    info.name = it.key();
    if (!e["dtype"].is_string()) throw Error(where + ": dtype is not a string" + hint);
    try {
      info.dtype = st_dtype_from_name(brief_text(e["dtype"].get<std::string>(), 40));
    } catch (const Error& err) {
      throw Error(where + ": " + err.what());
    }
    if (!e["shape"].is_array()) throw Error(where + ": shape is not an array" + hint);
    if (e["shape"].size() > kMaxDims)
      throw Error(where + ": shape has " + std::to_string(e["shape"].size()) +
                  " dimensions, more than " + std::to_string(kMaxDims) + hint);
    for (const auto& s : e["shape"]) {
      if (!s.is_number_integer() ||
          (s.is_number_unsigned() && s.get<uint64_t>() > uint64_t(INT64_MAX)) ||
          s.get<int64_t>() < 0)
        throw Error(where + ": shape has a bad dimension " + json_brief(s, 40) + hint);
      info.shape.push_back(s.get<int64_t>());
    }
    const auto& off = e["data_offsets"];
    if (!off.is_array() || off.size() != 2 || !off[0].is_number_unsigned() ||
        !off[1].is_number_unsigned())
      throw Error(where + ": data_offsets must be two non-negative integers" + hint);
    info.begin = off[0].get<uint64_t>();
    info.end = off[1].get<uint64_t>();
    if (info.begin > info.end) throw Error(where + ": data_offsets run backwards" + hint);
    if (info.end > data_size)
      throw Error(where + ": data ends at byte " + std::to_string(info.end) +
                  " but the data section holds only " + std::to_string(data_size) + " bytes" +
                  hint);
    size_t want = 0;
    if (!bytes_of(info.shape, info.dtype, &want))
      throw Error(where + ": shape " + json_brief(e["shape"], 80) +
                  " has more elements than a file can hold" + hint);
    if (info.end - info.begin != want)
      throw Error(where + ": " + std::to_string(info.end - info.begin) +
                  " bytes stored but shape and dtype need " + std::to_string(want) + hint);
    f.infos_.push_back(std::move(info));
  }
  std::sort(f.infos_.begin(), f.infos_.end(), [](const auto& a, const auto& b) {
    return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
  });
  for (size_t i = 1; i < f.infos_.size(); ++i)
    if (f.infos_[i].begin < f.infos_[i - 1].end && f.infos_[i].begin != f.infos_[i].end)
      throw Error(label + ": tensors '" + brief_text(f.infos_[i - 1].name, 120) + "' and '" +
                  brief_text(f.infos_[i].name, 120) + "' overlap" + hint);
  for (size_t i = 0; i < f.infos_.size(); ++i) f.index_[f.infos_[i].name] = i;
  return f;
}

std::map<std::string, std::string> read_safetensors_metadata(const std::string& path) {
  const std::string hint = "; the file is truncated or not a safetensors file";
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode))
    throw Error("cannot read " + path + ": not a regular file; give a .safetensors file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error("cannot read " + path + " (check the path and permissions)");
  unsigned char len[8] = {0};
  in.read(reinterpret_cast<char*>(len), 8);
  if (in.gcount() != 8) throw Error(path + ": shorter than the 8-byte header length" + hint);
  uint64_t n = 0;
  for (int i = 0; i < 8; ++i) n |= static_cast<uint64_t>(len[i]) << (8 * i);
  if (n > kMaxHeader || n > static_cast<uint64_t>(st.st_size) - 8)
    throw Error(path + ": header length " + std::to_string(n) + " is implausible" + hint);
  std::string text(n, '\0');
  in.read(text.data(), static_cast<std::streamsize>(n));
  if (static_cast<uint64_t>(in.gcount()) != n) throw Error(path + ": header cut short" + hint);
  check_header_bytes(text, path);
  nlohmann::json header = parse_json(text, path + " (safetensors header)", "rewrite the file",
                                     JsonLimits{kMaxHeader, 8});
  std::map<std::string, std::string> meta;
  if (!header.is_object()) throw Error(path + ": header is not a JSON object" + hint);
  auto it = header.find("__metadata__");
  if (it == header.end()) return meta;
  if (!it->is_object()) throw Error(path + ": __metadata__ is not an object" + hint);
  for (auto m = it->begin(); m != it->end(); ++m)
    if (m->is_string()) meta[m.key()] = m->get<std::string>();
  return meta;
}

bool SafetensorsFile::has(const std::string& name) const {
  return index_.count(name) > 0;
}

const StTensorInfo& SafetensorsFile::info(const std::string& name) const {
  auto it = index_.find(name);
  if (it == index_.end())
    throw Error(label_ + ": no tensor named '" + name +
                "'; check that the file belongs to this model");
  return infos_[it->second];
}

const uint8_t* SafetensorsFile::data(const std::string& name) const {
  return reinterpret_cast<const uint8_t*>(bytes_.data()) + data_start_ + info(name).begin;
}

float bf16_to_float(uint16_t v) {
  uint32_t bits = static_cast<uint32_t>(v) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

uint16_t float_to_bf16(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  if ((bits & 0x7f800000u) == 0x7f800000u && (bits & 0x007fffffu))  // NaN stays NaN
    return static_cast<uint16_t>((bits >> 16) | 0x40);
  const uint32_t rounding = 0x7fffu + ((bits >> 16) & 1u);
  return static_cast<uint16_t>((bits + rounding) >> 16);
}

float f16_to_float(uint16_t h) {
  const uint32_t sign = (h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1f;
  uint32_t mant = h & 0x3ff;
  uint32_t bits;
  if (exp == 0) {
    if (mant == 0) {
      bits = sign;
    } else {  // subnormal: normalise
      exp = 127 - 15 + 1;
      while (!(mant & 0x400)) {
        mant <<= 1;
        --exp;
      }
      mant &= 0x3ff;
      bits = sign | (exp << 23) | (mant << 13);
    }
  } else if (exp == 31) {
    bits = sign | 0x7f800000u | (mant << 13);
  } else {
    bits = sign | ((exp - 15 + 127) << 23) | (mant << 13);
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

std::vector<float> SafetensorsFile::to_float(const std::string& name) const {
  const auto& in = info(name);
  const uint8_t* p = data(name);
  const size_t n = static_cast<size_t>(in.numel());
  std::vector<float> out(n);
  auto load = [&](auto tag) {
    using T = decltype(tag);
    for (size_t i = 0; i < n; ++i) {
      T v;
      std::memcpy(&v, p + i * sizeof(T), sizeof(T));
      out[i] = static_cast<float>(v);
    }
  };
  switch (in.dtype) {
    case StDtype::F32:
      load(float{});
      break;
    case StDtype::F64:
      load(double{});
      break;
    case StDtype::I64:
      load(int64_t{});
      break;
    case StDtype::I32:
      load(int32_t{});
      break;
    case StDtype::I16:
      load(int16_t{});
      break;
    case StDtype::I8:
      load(int8_t{});
      break;
    case StDtype::U8:
      load(uint8_t{});
      break;
    case StDtype::BOOL:
      load(uint8_t{});
      break;
    case StDtype::BF16:
    case StDtype::F16:
      for (size_t i = 0; i < n; ++i) {
        uint16_t v;
        std::memcpy(&v, p + 2 * i, 2);
        out[i] = in.dtype == StDtype::BF16 ? bf16_to_float(v) : f16_to_float(v);
      }
      break;
  }
  return out;
}

}  // namespace gllm
