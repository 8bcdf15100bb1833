// Torch-free safetensors reader and writer: 8-byte little-endian header length, a JSON header of
// {name: {dtype, shape, data_offsets}} (+ optional "__metadata__" string map), then raw data.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace gllm {

enum class StDtype { F64, F32, F16, BF16, I64, I32, I16, I8, U8, BOOL };

const char* st_dtype_name(StDtype t);              // "F32", …
StDtype st_dtype_from_name(const std::string& s);  // throws gllm::Error on unknown names
size_t st_dtype_size(StDtype t);

// One tensor to write: raw little-endian bytes in row-major order.
struct StTensorIn {
  std::string name;
  StDtype dtype = StDtype::F32;
  std::vector<int64_t> shape;
  const void* data = nullptr;
  size_t nbytes = 0;  // must equal numel · dtype size
};

// Writes atomically (temporary file, fsync, rename). Tensors are laid out in name order; the
// header is padded with spaces to a multiple of 8 bytes.
void write_safetensors(const std::string& path, const std::vector<StTensorIn>& tensors,
                       const std::map<std::string, std::string>& metadata = {});
// The same bytes as a string (for tests and in-memory use).
std::string encode_safetensors(const std::vector<StTensorIn>& tensors,
                               const std::map<std::string, std::string>& metadata = {});

struct StTensorInfo {
  std::string name;
  StDtype dtype = StDtype::F32;
  std::vector<int64_t> shape;
  size_t begin = 0, end = 0;  // byte offsets into the data section
  int64_t numel() const;
};

// A whole safetensors file in memory, validated on open: header length within the file, JSON
// well-formed, known dtypes, offsets within the data section, sizes matching shapes, no overlaps.
class SafetensorsFile {
 public:
  static SafetensorsFile open(const std::string& path);  // errors name the file
  static SafetensorsFile parse(std::string bytes, const std::string& label = "<memory>");

  const std::vector<StTensorInfo>& tensors() const { return infos_; }  // in offset order
  const std::map<std::string, std::string>& metadata() const { return metadata_; }
  bool has(const std::string& name) const;
  const StTensorInfo& info(const std::string& name) const;  // throws naming the file and tensor
  const uint8_t* data(const std::string& name) const;
  // Copies a tensor as float (F32/F64/F16/BF16/integers converted).
  std::vector<float> to_float(const std::string& name) const;
  const std::string& label() const { return label_; }

 private:
  std::string bytes_;
  size_t data_start_ = 0;
  std::string label_;
  std::vector<StTensorInfo> infos_;
  std::map<std::string, size_t> index_;
  std::map<std::string, std::string> metadata_;
};

// Only the "__metadata__" map of a safetensors file, reading its header and not the tensor data
// (the same checks of the header length and JSON as SafetensorsFile::open).
std::map<std::string, std::string> read_safetensors_metadata(const std::string& path);

// bf16/f16 ↔ float helpers (round-to-nearest-even on the way down).
float bf16_to_float(uint16_t v);
uint16_t float_to_bf16(float f);
float f16_to_float(uint16_t v);

}  // namespace gllm
