// libFuzzer entry point for RunConfig presets (with "base" chains), sweeps and sweep arms' "set".
// Built only with -DGLLM_FUZZ=ON (clang, -fsanitize=fuzzer,address,undefined); see README.md.
#include "tests/fuzz/harnesses.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  gllm::fuzz::run_config(data, size, GLLM_FUZZ_PRESETS_DIR);
  return 0;
}
