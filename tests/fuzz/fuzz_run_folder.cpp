// libFuzzer entry point for run-folder readers: config, metrics, summary, sidecars, run.lock.
// Built only with -DGLLM_FUZZ=ON (clang, -fsanitize=fuzzer,address,undefined); see README.md.
#include "tests/fuzz/harnesses.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  gllm::fuzz::run_folder(data, size);
  return 0;
}
