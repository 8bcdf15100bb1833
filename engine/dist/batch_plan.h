// How the ranks of a data-parallel run share each step's global batch (torch-free, so the CLI can
// refuse an impossible split before starting anything).
#pragma once
#include <cstdint>

namespace gllm::dist {

// Which share of a step's global batch a rank computes. The global batch is the one-process batch,
// grad_accum micro-batches of device_batch rows (train.total_batch_tokens fixes it in tokens and
// derives grad_accum), whatever the number of ranks N: N processes reproduce a one-process run.
// Every rank reads the same micro-batches in the same order (loader state and checkpoints are
// rank-independent). The ranks form `groups` = gcd(grad_accum, N) groups of N/groups ranks; group g
// computes micro-steps g, g + groups, …, and when a group has several ranks (split_rows) each takes
// an equal slice of every micro-batch's rows. So with grad_accum a multiple of N every rank
// computes whole micro-steps (as nanochat's grad_accum = total / (device_batch · T · N)); otherwise
// the rows are split, which needs device_batch to be a multiple of N / groups (else a clear error
// naming the process counts that work). Each rank scales its loss by 1/local_micro_steps; the mean
// of the ranks' gradients is then the gradient of the global batch's mean loss. Whole micro-steps
// add the same per-micro-step gradients as one process does, so one micro-step per rank over two
// ranks is bit-exact with one process; a row split sums rows in another order (equal up to
// rounding).
struct BatchPlan {
  int world_size = 1, rank = 0;
  int grad_accum = 1, device_batch = 1;
  int groups = 1, group = 0;           // rank groups; this rank's group
  bool split_rows = false;             // the ranks of a group share each micro-batch's rows
  int local_micro_steps = 1;           // micro-steps this rank runs backward on
  int64_t row_begin = 0, row_end = 0;  // rows of each micro-batch this rank uses
  bool owns(int micro) const { return micro % groups == group; }
};
// Throws gllm::Error when no such split exists, naming the process counts that work.
BatchPlan plan_batch(int device_batch, int grad_accum, int world_size, int rank);

}  // namespace gllm::dist
