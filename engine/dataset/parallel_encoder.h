// An ordered parallel encoder: batches of documents go in, worker threads tokenize them, batches
// come out in the order they went in, with a bounded number in flight (memory stays bounded).
#pragma once
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace gllm {

class Tokenizer;

struct EncodeBatch {
  std::vector<std::string> texts;             // freed with the batch, by the thread that made it
  std::vector<uint64_t> index;                // global document index
  std::vector<uint64_t> hash;                 // split hash
  std::vector<uint64_t> bytes;                // UTF-8 bytes of each text
  std::vector<std::vector<uint16_t>> tokens;  // BOS then the text's ids
  size_t text_bytes = 0;
};

class ParallelEncoder {
 public:
  ParallelEncoder(const Tokenizer& tokenizer, int threads);
  ~ParallelEncoder();
  ParallelEncoder(const ParallelEncoder&) = delete;
  ParallelEncoder& operator=(const ParallelEncoder&) = delete;

  void submit(std::unique_ptr<EncodeBatch> batch);
  // The oldest batch, once encoded; throws gllm::Error when its encoding failed.
  std::unique_ptr<EncodeBatch> next_done();
  size_t in_flight() const;
  int threads() const { return static_cast<int>(workers_.size()); }

 private:
  struct Slot {
    std::unique_ptr<EncodeBatch> batch;
    bool started = false, done = false;
    std::string error;
  };
  void work();
  const Tokenizer& tok_;
  mutable std::mutex mu_;
  std::condition_variable work_cv_, done_cv_;
  std::deque<std::shared_ptr<Slot>> slots_;
  bool quit_ = false;
  std::vector<std::thread> workers_;
};

}  // namespace gllm
