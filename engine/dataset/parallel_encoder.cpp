// ParallelEncoder: worker threads take the oldest unstarted batch, encode every text with the
// shared (read-only, thread-safe) sentencepiece processor, and hand batches back in order.
#include "engine/dataset/parallel_encoder.h"

#include "engine/data/tokenizer.h"
#include "engine/io/error.h"

namespace gllm {

ParallelEncoder::ParallelEncoder(const Tokenizer& tokenizer, int threads) : tok_(tokenizer) {
  if (threads < 1) threads = 1;
  for (int i = 0; i < threads; ++i) workers_.emplace_back([this] { work(); });
}

ParallelEncoder::~ParallelEncoder() {
  {
    std::lock_guard<std::mutex> lk(mu_);
    quit_ = true;
  }
  work_cv_.notify_all();
  for (auto& t : workers_) t.join();
}

void ParallelEncoder::submit(std::unique_ptr<EncodeBatch> batch) {
  auto slot = std::make_shared<Slot>();
  slot->batch = std::move(batch);
  {
    std::lock_guard<std::mutex> lk(mu_);
    slots_.push_back(std::move(slot));
  }
  work_cv_.notify_one();
}

size_t ParallelEncoder::in_flight() const {
  std::lock_guard<std::mutex> lk(mu_);
  return slots_.size();
}

std::unique_ptr<EncodeBatch> ParallelEncoder::next_done() {
  std::unique_lock<std::mutex> lk(mu_);
  if (slots_.empty()) throw Error("internal: the encoder has no batch in flight");
  done_cv_.wait(lk, [&] { return slots_.front()->done; });
  auto slot = slots_.front();
  slots_.pop_front();
  lk.unlock();
  if (!slot->error.empty()) throw Error(slot->error);
  return std::move(slot->batch);
}

void ParallelEncoder::work() {
  const int bos = tok_.bos_id();
  EncodeCache cache;  // this thread's word encodings
  std::vector<int32_t> ids;
  uint64_t encoded = 0;
  for (;;) {
    std::shared_ptr<Slot> slot;
    {
      std::unique_lock<std::mutex> lk(mu_);
      work_cv_.wait(lk, [&] {
        if (quit_) return true;
        for (auto& s : slots_)
          if (!s->started) return true;
        return false;
      });
      if (quit_) return;
      for (auto& s : slots_)
        if (!s->started) {
          slot = s;
          break;
        }
      slot->started = true;
    }
    EncodeBatch& b = *slot->batch;
    try {
      b.tokens.resize(b.texts.size());
      for (size_t i = 0; i < b.texts.size(); ++i) {
        tok_.encode_cached(b.texts[i], cache, ids);
        // The cache's premise checked on this thread's first documents and one in 512 after:
        // a text whose cached ids differ from the tokenizer's own is a bug, never a dataset.
        if (encoded++ < 32 || encoded % 512 == 0) {
          if (tok_.encode(b.texts[i]) != ids)
            throw Error(
                "the word cache's ids differ from the tokenizer's on a document; "
                "report this with the input");
        }
        auto& out = b.tokens[i];
        out.resize(ids.size() + 1);
        out[0] = static_cast<uint16_t>(bos);
        for (size_t k = 0; k < ids.size(); ++k) {
          if (ids[k] < 0 || ids[k] > 65535)
            throw Error("token id " + std::to_string(ids[k]) + " does not fit uint16");
          out[k + 1] = static_cast<uint16_t>(ids[k]);
        }
      }
    } catch (const std::exception& e) {
      slot->error = std::string("encoding failed: ") + e.what();
    }
    {
      std::lock_guard<std::mutex> lk(mu_);
      slot->done = true;
    }
    done_cv_.notify_all();
  }
}

}  // namespace gllm
