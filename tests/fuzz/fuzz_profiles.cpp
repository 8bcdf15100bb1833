// libFuzzer entry point for profiles and ladder files through their loaders.
// Built only with -DGLLM_FUZZ=ON (clang, -fsanitize=fuzzer,address,undefined); see README.md.
#include "tests/fuzz/harnesses.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  gllm::fuzz::profiles(data, size);
  return 0;
}
