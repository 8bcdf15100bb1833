// libFuzzer entry point for the safetensors reader (header length, JSON, dtypes, shapes, offsets).
// Built only with -DGLLM_FUZZ=ON (clang, -fsanitize=fuzzer,address,undefined); see README.md.
#include "tests/fuzz/harnesses.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  gllm::fuzz::safetensors(data, size);
  return 0;
}
