// libFuzzer entry point for the token cache: tokens.bin header, offsets, the memory-mapped shard.
// Built only with -DGLLM_FUZZ=ON (clang, -fsanitize=fuzzer,address,undefined); see README.md.
#include "tests/fuzz/harnesses.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  gllm::fuzz::token_cache(data, size);
  return 0;
}
