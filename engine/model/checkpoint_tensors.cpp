// Conversion between torch tensors and the torch-free safetensors layer (engine/io/safetensors.h).
// Unsupported dtypes (complex, quantised) are refused with the dtype named.
#include "engine/model/checkpoint_tensors.h"

#include <cstring>

#include "engine/io/error.h"
#include "engine/io/safetensors.h"

namespace gllm {

namespace {

StDtype to_st(torch::ScalarType t, const std::string& name) {
  switch (t) {
    case torch::kFloat:
      return StDtype::F32;
    case torch::kDouble:
      return StDtype::F64;
    case torch::kBFloat16:
      return StDtype::BF16;
    case torch::kHalf:
      return StDtype::F16;
    case torch::kLong:
      return StDtype::I64;
    case torch::kInt:
      return StDtype::I32;
    case torch::kShort:
      return StDtype::I16;
    case torch::kChar:
      return StDtype::I8;
    case torch::kByte:
      return StDtype::U8;
    case torch::kBool:
      return StDtype::BOOL;
    default:
      throw Error("tensor '" + name + "' has dtype " + std::string(c10::toString(t)) +
                  ", which safetensors cannot hold; convert it to float32 first");
  }
}

torch::ScalarType from_st(StDtype t) {
  switch (t) {
    case StDtype::F32:
      return torch::kFloat;
    case StDtype::F64:
      return torch::kDouble;
    case StDtype::BF16:
      return torch::kBFloat16;
    case StDtype::F16:
      return torch::kHalf;
    case StDtype::I64:
      return torch::kLong;
    case StDtype::I32:
      return torch::kInt;
    case StDtype::I16:
      return torch::kShort;
    case StDtype::I8:
      return torch::kChar;
    case StDtype::U8:
      return torch::kByte;
    case StDtype::BOOL:
      return torch::kBool;
  }
  return torch::kFloat;
}

}  // namespace

void write_tensor_file(const std::string& path, const TensorMap& tensors,
                       const std::map<std::string, std::string>& metadata) {
  std::vector<torch::Tensor> keep;  // CPU contiguous copies alive until the write ends
  std::vector<StTensorIn> ins;
  keep.reserve(tensors.size());
  for (const auto& [name, t] : tensors) {
    if (!t.defined()) throw Error("tensor '" + name + "' is undefined; nothing to save");
    torch::Tensor c = t.detach().to(torch::kCPU).contiguous();
    keep.push_back(c);
    StTensorIn in;
    in.name = name;
    in.dtype = to_st(c.scalar_type(), name);
    in.shape.assign(c.sizes().begin(), c.sizes().end());
    in.data = c.data_ptr();
    in.nbytes = c.numel() * c.element_size();
    ins.push_back(in);
  }
  write_safetensors(path, ins, metadata);
}

namespace {

bool floating(StDtype t) {
  return t == StDtype::F32 || t == StDtype::F64 || t == StDtype::F16 || t == StDtype::BF16;
}

// gllm's own files hold floating-point tensors only (the optimizer file adds the U8 RNG state):
// an integer dtype there means the header was edited, and the bytes would be read as numbers of
// another kind.
void check_dtypes(const SafetensorsFile& f) {
  const auto it = f.metadata().find("format");
  if (it == f.metadata().end()) return;
  const bool model = it->second == "gllm-model-1", optim = it->second == "gllm-optim-1";
  if (!model && !optim) return;
  for (const auto& info : f.tensors()) {
    const bool rng = optim && info.name.rfind("__rng__", 0) == 0;
    if (rng ? info.dtype == StDtype::U8 : floating(info.dtype)) continue;
    throw Error(
        f.label() + ": tensor '" + info.name + "' is stored as " + st_dtype_name(info.dtype) +
        " but a " + it->second + " file holds " + (rng ? "U8" : "floating-point") +
        " data there; the header was altered — restore the file or use an earlier checkpoint");
  }
}

}  // namespace

TensorMap read_tensor_file(const std::string& path, std::map<std::string, std::string>* metadata) {
  const SafetensorsFile f = SafetensorsFile::open(path);
  check_dtypes(f);
  TensorMap out;
  for (const auto& info : f.tensors()) {
    torch::Tensor t = torch::empty(info.shape, torch::TensorOptions().dtype(from_st(info.dtype)));
    if (info.end > info.begin) std::memcpy(t.data_ptr(), f.data(info.name), info.end - info.begin);
    out[info.name] = t;
  }
  if (metadata) *metadata = f.metadata();
  return out;
}

}  // namespace gllm
