// The batch split of data parallel: rank groups over micro-steps, rows split inside a group; the
// error names the process counts that divide the global batch.
#include "engine/dist/batch_plan.h"

#include <algorithm>
#include <numeric>
#include <string>

#include "engine/io/error.h"

namespace gllm::dist {

BatchPlan plan_batch(int device_batch, int grad_accum, int world_size, int rank) {
  if (world_size < 1 || rank < 0 || rank >= world_size)
    throw Error("data parallel: rank " + std::to_string(rank) + " is outside a world of " +
                std::to_string(world_size));
  if (device_batch < 1 || grad_accum < 1)
    throw Error("data parallel: train.device_batch (" + std::to_string(device_batch) +
                ") and train.grad_accum (" + std::to_string(grad_accum) + ") must be at least 1");
  BatchPlan p;
  p.world_size = world_size;
  p.rank = rank;
  p.grad_accum = grad_accum;
  p.device_batch = device_batch;
  p.groups = std::gcd(grad_accum, world_size);
  const int share = world_size / p.groups;  // ranks that split one micro-batch's rows
  if (device_batch % share != 0) {
    std::string works;
    for (int n = 1; n <= std::min(1024, device_batch * grad_accum); ++n)
      if (device_batch % (n / std::gcd(grad_accum, n)) == 0)
        works += (works.empty() ? "" : ", ") + std::to_string(n);
    throw Error("data parallel over " + std::to_string(world_size) +
                " processes: no split of the global batch (" + std::to_string(grad_accum) +
                " micro-steps of train.device_batch " + std::to_string(device_batch) +
                " rows) gives every process the same share: " + std::to_string(share) +
                " processes would share each micro-batch's rows. Use " + works +
                " processes, or a train.total_batch_tokens / train.device_batch that "
                "divides among " +
                std::to_string(world_size));
  }
  p.group = rank / share;
  p.split_rows = share > 1;
  p.local_micro_steps = grad_accum / p.groups;
  const int64_t slice = device_batch / share;
  p.row_begin = slice * (rank % share);
  p.row_end = p.row_begin + slice;
  return p;
}

}  // namespace gllm::dist
