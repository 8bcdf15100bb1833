// torch::Tensor ↔ safetensors: named tensor maps written atomically and read back with their
// dtypes (F32, F64, BF16, F16, I64, I32, I16, I8, U8, BOOL), plus the string metadata.
#pragma once
#include <torch/torch.h>

#include <map>
#include <string>

namespace gllm {

using TensorMap = std::map<std::string, torch::Tensor>;

// Writes every tensor (moved to CPU, made contiguous, dtype kept) and the metadata.
void write_tensor_file(const std::string& path, const TensorMap& tensors,
                       const std::map<std::string, std::string>& metadata = {});
// Reads every tensor as a CPU tensor of its stored dtype; metadata into *metadata when given.
TensorMap read_tensor_file(const std::string& path,
                           std::map<std::string, std::string>* metadata = nullptr);

}  // namespace gllm
