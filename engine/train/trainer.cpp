// The training loop behind the Trainer facade: one worker thread per run; gradient accumulation,
// evaluation, checkpoints (weights, optimizer state, loader state, RNG) and exact resume.
#include "engine/train/trainer.h"

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/autocast_mode.h>
#include <torch/torch.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "engine/config/run_paths.h"
#include "engine/data/bpb.h"
#include "engine/data/dataset.h"
#include "engine/dist/device.h"
#include "engine/dist/launcher.h"
#include "engine/dist/process_group.h"
#include "engine/io/atomic_file.h"
#include "engine/io/error.h"
#include "engine/io/json_read.h"
#include "engine/io/paths.h"
#include "engine/io/safetensors.h"
#include "engine/model/checkpoint_tensors.h"
#include "engine/model/cost.h"
#include "engine/model/gpt.h"
#include "engine/optim/muon_adamw.h"
#include "engine/runtime/runtime.h"
#include "engine/train/events_json.h"
#include "engine/train/fork.h"
#include "engine/train/run_store.h"
#include "engine/train/step.h"

namespace gllm {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

torch::Tensor to_tensor(const std::vector<int64_t>& v, int64_t rows, int64_t T,
                        const torch::Device& dev) {
  auto blob = torch::from_blob(const_cast<int64_t*>(v.data()), {rows, T}, torch::kLong);  // (B, T)
  // A copy from pageable memory makes the host wait for the stream; from pinned memory it is
  // queued (the caching host allocator keeps the staging block until the copy has run).
  return dev.is_cpu() ? blob.clone() : blob.pin_memory().to(dev, /*non_blocking=*/true);
}

int64_t env_int(const char* name) {
  const char* v = std::getenv(name);
  return v && *v ? std::atoll(v) : 0;
}

// The corpus unigram entropy in bits per byte: Σ −log₂ p(t) over the train split's tokens, with p
// the split's own token frequencies, divided by its UTF-8 bytes — the BPB of the best context-free
// model, which a trained LM must beat clearly.
double unigram_bpb(const Dataset& data) {
  std::vector<double> counts(static_cast<size_t>(data.tokenizer.vocab_size()), 0.0);
  double n = 0;
  for (uint32_t doc : data.splits.train) {
    auto v = data.shard->document(doc);
    for (size_t i = 0; i < v.size; ++i) {
      if (v.data[i] < counts.size()) counts[v.data[i]] += 1;
      n += 1;
    }
  }
  double bits = 0;
  for (double c : counts)
    if (c > 0) bits -= c * std::log2(c / n);
  double bytes = static_cast<double>(data.split_bytes("train"));
  return bytes > 0 ? bits / bytes : NAN;
}

// What Trainer::start / resume prepared before a segment's worker starts: the run folder's lock
// (held until the worker ends), the files to put back when the segment fails before training a
// step, lines for the log, and an accepted config change to record in metrics.jsonl.
struct SegmentStart {
  RunLock lock;
  int64_t start_step = 0;  // the step this segment starts from
  bool restore_on_failure = false;
  std::string prior_summary;  // summary.json as it was (empty: there was none)
  std::string prior_config;   // config.json as it was, when this segment rewrote it
  // Extending a completed run: a failure or divergence puts the run back exactly as it was
  // (summary, config, metrics, the final checkpoint); checkpoints of the extension are removed.
  bool extends_completed = false;
  int64_t metrics_bytes = -1;  // metrics.jsonl's size when the extension began
  std::vector<std::string> notes;
  nlohmann::json config_changes;  // null, or [{key, from, to}] accepted with allow_config_change
};

// Puts a completed run back as it was before an extension that failed or diverged: the
// extension's checkpoints removed, metrics.jsonl cut back, config.json and summary.json restored.
// Best effort on each part, so one failing write does not keep the others from being restored.
void restore_completed_run(const RunStore& store, const SegmentStart& seg) {
  for (const auto& c : list_checkpoints(store.dir()))
    if (c.step > seg.start_step)
      for (const auto& p : {c.sidecar_path, c.weights_path, c.optimizer_path}) {
        std::error_code ec;
        std::filesystem::remove(p, ec);
      }
  if (seg.metrics_bytes >= 0) {
    const int cut = ::truncate(store.metrics_path().c_str(), static_cast<off_t>(seg.metrics_bytes));
    (void)cut;
  }
  try {
    if (!seg.prior_config.empty()) write_file_atomic(store.config_path(), seg.prior_config);
  } catch (...) {
  }
  try {
    if (!seg.prior_summary.empty()) write_file_atomic(store.summary_path(), seg.prior_summary);
  } catch (...) {
  }
}

// Everything one run segment (a start or a resume) holds.
struct Session {
  RunConfig config;
  RunStore store;
  RunObserver* obs = nullptr;
  TrainerOptions options;
  const std::atomic<bool>* cancel = nullptr;
  SegmentStart segment;
  std::unique_ptr<ForkPoint> fork;  // set when this run starts from another run's checkpoint

  torch::Device device = torch::kCPU;
  bool cuda = false;
  std::unique_ptr<Dataset> data;
  GPT model{nullptr};
  std::unique_ptr<optim::MuonAdamW> opt;
  std::unique_ptr<TrainStep> step_fn;  // forward/backward/update, autocast scoped to the forwards
  std::unique_ptr<PackingLoader> train_loader;
  // Data parallel (engine/dist): one context per process; single-process when not launched.
  std::unique_ptr<dist::Context> dist;
  dist::BatchPlan plan;
  std::vector<torch::Tensor> grad_params;
  dist::VisitCounts visits;
  CostEstimate cost;
  double unigram = NAN;

  int64_t step = 0;            // optimizer steps done
  int64_t tokens = 0;          // training tokens consumed
  double wall_offset = 0;      // wall seconds of earlier segments
  double train_seconds = 0;    // time inside training steps (this segment)
  int64_t segment_tokens = 0;  // tokens trained in this segment
  // The throughput timer: the time between the step's host reads of its losses (each waits for
  // the device, so an interval is one step's device work, update included), from the
  // kWarmupSteps-th step of the segment on (the first steps carry allocations, kernel selection
  // and the optimizer's state). Evaluations and checkpoints (which drain the device) restart it.
  static constexpr int64_t kWarmupSteps = 2;
  int64_t segment_steps = 0;
  bool timer_armed = false;
  Clock::time_point last_sync;
  double timed_seconds = 0;
  int64_t timed_tokens = 0;
  Clock::time_point t0;
  double last_loss = NAN;
  double last_val_bpb = -1;
  double heldout_bpb = -1;
  int64_t last_eval_step = -1;

  explicit Session(std::string dir) : store(std::move(dir)) {}

  bool writer() const { return !dist || dist->is_writer(); }  // only rank 0 writes the run folder
  double wall() const { return wall_offset + seconds_since(t0); }
  // Steady-state tokens/s (the synchronised timer past warm-up); the mean over every step of the
  // segment while too few steps were timed.
  double tokens_per_s() const {
    if (timed_seconds > 0) return timed_tokens / timed_seconds;
    return train_seconds > 0 ? segment_tokens / train_seconds : 0.0;
  }
  void restart_timer() {
    last_sync = Clock::now();
    timer_armed = segment_steps >= kWarmupSteps;
  }
  void log(const std::string& line) {
    if (obs) obs->on_log(line);
  }

  void setup() {
    int threads = config.train.threads;
    if (const int cores = available_cores(); threads > cores) {
      log("train.threads is " + std::to_string(threads) + " but this machine lets the run use " +
          std::to_string(cores) + " cores; using " + std::to_string(cores) +
          " threads (more only slow it down)");
      threads = cores;
    }
    configure_threads(threads);
    const dist::DistOptions dopt = dist::options_from_env();
    device = dist::select_device(config.train.device, dopt.local_rank);
    cuda = device.is_cuda();
    dist = dist::Context::from_env(device);
    plan = dist::plan_batch(config.train.device_batch, config.train.grad_accum, dist->world_size(),
                            dist->rank());
    if (dist->distributed())
      log("data parallel: rank " + std::to_string(dist->rank()) + " of " +
          std::to_string(dist->world_size()) + " (" + dist->backend() + "), " +
          (plan.split_rows ? "rows split" : "micro-steps split") + " of the same global batch");
    if (!writer()) dist->barrier();  // rank 0 builds the tokenizer and token cache first
    data = std::make_unique<Dataset>(
        open_dataset(config.data, [this](const std::string& s) { log(s); }));
    if (writer()) dist->barrier();
    int64_t vocab = data->tokenizer.vocab_size();
    torch::manual_seed(config.train.seed);
    model = build_model(config, vocab, config.train.seed, data->tokenizer.hash());
    model->to(device);
    if (dist->distributed()) {
      std::vector<torch::Tensor> all = model->parameters();
      for (const auto& b : model->buffers()) all.push_back(b);
      dist->broadcast(all, 0);  // every rank starts from rank 0's weights
    }
    std::vector<optim::TaggedParam> params = optimizer_params(model);
    std::map<std::string, int64_t> table_rows;
    for (const auto& tp : params) {
      grad_params.push_back(tp.tensor);
      if (tp.group == "oe_table") table_rows[tp.name] = tp.tensor.size(0);
    }
    optim::MuonAdamWOptions oo;
    oo.grade_lr = config.grading.grade_lr;
    opt = std::make_unique<optim::MuonAdamW>(config.optim, model->width(), config.train.steps,
                                             std::move(params), oo);
    step_fn = std::make_unique<TrainStep>(model, *opt, device, config.train.dtype);
    if (dist->distributed())  // visits are summed over ranks before the moment-free update
      step_fn->visit_sink = [this, table_rows](const std::string& table,
                                               const torch::Tensor& rows) {
        visits.add(table, rows, table_rows.at(table));
      };
    train_loader = std::make_unique<PackingLoader>(
        data->loader("train", config.train.device_batch, config.model.sequence_len,
                     PackingLoader::Mode::Train, static_cast<uint64_t>(config.train.seed)));
    cost = estimate_cost(config, vocab);
    unigram = unigram_bpb(*data);
    char line[160];
    std::snprintf(
        line, sizeof line,
        "data: %zu train / %zu val / %zu held-out documents; unigram entropy %.4f bits/byte",
        data->splits.train.size(), data->splits.val.size(), data->splits.heldout.size(), unigram);
    log(line);
  }

  // ----- checkpoints -----

  void save_checkpoint() {
    if (!writer()) return;
    make_directories(store.checkpoints_dir());
    TensorMap weights;
    for (const auto& [name, t] : model->state_tensors()) weights[name] = t.detach();
    write_tensor_file(store.weights_path(step), weights,
                      {{"format", "gllm-model-1"},
                       {"config", config.to_json().dump()},
                       {"vocab_size", std::to_string(model->vocab_size())},
                       {"compiled", "0"},
                       {"step", std::to_string(step)}});
    TensorMap state;
    for (const auto& [name, t] : opt->state_tensors()) state[name] = t.detach();
    {
      auto gen = at::detail::getDefaultCPUGenerator();
      std::lock_guard<std::mutex> lk(gen.mutex());
      state["__rng__.cpu"] = gen.get_state();
    }
    write_tensor_file(store.optimizer_path(step), state,
                      {{"format", "gllm-optim-1"}, {"scalar_state", opt->scalar_state().dump()}});
    nlohmann::json side = {{"tokens", tokens},
                           {"total_steps", config.train.steps},
                           {"loader", train_loader->state()},
                           {"wall_s", wall()},
                           {"last_loss", std::isfinite(last_loss) ? nlohmann::json(last_loss)
                                                                  : nlohmann::json(nullptr)},
                           {"last_val_bpb", last_val_bpb},
                           {"last_eval_step", last_eval_step},
                           {"seed", config.train.seed}};
    store.commit_checkpoint(step, side, config.train.keep_checkpoints,
                            segment.extends_completed ? segment.start_step : -1);
    if (obs) {
      // Small torch-free copies of the grades travel with the record (the GUI's live heatmaps).
      CheckpointRecord rec;
      rec.step = step;
      rec.path = store.weights_path(step);
      auto copy_out = [&weights](const char* name, PlainTensor& out) {
        auto it = weights.find(name);
        if (it == weights.end()) return;
        torch::Tensor t = it->second.to(torch::kCPU, torch::kFloat).contiguous();
        out.shape.assign(t.sizes().begin(), t.sizes().end());
        out.values.assign(t.data_ptr<float>(), t.data_ptr<float>() + t.numel());
      };
      copy_out("attn_grades", rec.attn_grades);
      copy_out("q_tau", rec.q_tau);
      copy_out("mlge.level_grades", rec.level_grades);
      obs->on_checkpoint(rec);
    }
  }

  // `own`: tensors kept from this run's model instead of the checkpoint (a fork's grades).
  void load_checkpoint(const CheckpointInfo& ck, const std::set<std::string>& own = {}) {
    std::map<std::string, std::string> meta;
    auto weights = read_tensor_file(ck.weights_path, &meta);
    std::map<std::string, torch::Tensor> w(weights.begin(), weights.end());
    for (const auto& [name, t] : model->state_tensors())
      if (own.count(name)) w[name] = t.detach().clone();
    {
      torch::NoGradGuard ng;
      model->load_state_tensors(w);
    }
    std::map<std::string, std::string> ometa;
    auto state = read_tensor_file(ck.optimizer_path, &ometa);
    std::vector<std::pair<std::string, torch::Tensor>> st;
    torch::Tensor rng;
    for (auto& [name, t] : state) {
      if (name == "__rng__.cpu")
        rng = t;
      else
        st.emplace_back(name, cuda ? t.to(device) : t);
    }
    opt->load_state_tensors(st);
    if (!ometa.count("scalar_state"))
      throw Error(
          ck.optimizer_path +
          " has no scalar optimizer state; the checkpoint is damaged — resume from an earlier one");
    opt->load_scalar_state(parse_json(ometa.at("scalar_state"),
                                      ck.optimizer_path + " (scalar_state)",
                                      "the checkpoint is damaged — resume from an earlier one"));
    if (rng.defined()) {
      auto gen = at::detail::getDefaultCPUGenerator();
      std::lock_guard<std::mutex> lk(gen.mutex());
      gen.set_state(rng);
    }
    const auto& s = ck.sidecar;
    train_loader->restore(s.at("loader"));
    step = ck.step;
    tokens = s.value("tokens", int64_t(0));
    wall_offset = s.value("wall_s", 0.0);
    last_val_bpb = s.value("last_val_bpb", -1.0);
    last_eval_step = s.value("last_eval_step", int64_t(-1));
    if (s.contains("last_loss") && s["last_loss"].is_number())
      last_loss = s["last_loss"].get<double>();
  }

  // ----- evaluation -----

  EvalRecord evaluate(const std::string& split, int64_t max_tokens) {
    if (!writer()) return {};  // rank 0 evaluates; the others wait at the next collective
    torch::NoGradGuard ng;
    model->eval();
    const int64_t B = config.train.device_batch, T = config.model.sequence_len;
    auto loader = data->loader(split, B, T, PackingLoader::Mode::Eval);
    BpbAccumulator acc(data->tokenizer.token_bytes());
    Batch batch;
    int64_t seen = 0;
    while (seen < max_tokens && loader.next(batch)) {
      auto x = to_tensor(batch.inputs_int64(), batch.rows, batch.T, device);
      auto y_host = batch.targets_int64();
      auto y = to_tensor(y_host, batch.rows, batch.T, device);
      auto nats = step_fn->eval_nats(x, y).to(torch::kCPU, torch::kDouble).contiguous();  // (B, T)
      acc.add(nats.data_ptr<double>(), y_host.data(), y_host.size());
      seen += batch.rows * batch.T;
    }
    model->train();
    EvalRecord r;
    r.step = step;
    r.tokens = tokens;
    r.split = split;
    r.bpb = acc.bpb();
    r.loss = acc.mean_nats();
    r.eval_tokens = acc.targets();
    r.wall_s = wall();
    if (!std::isfinite(r.bpb))
      throw Error("the " + split + " split produced no scored bytes; raise data." + split +
                  "_fraction or use a larger corpus");
    nlohmann::json rec = to_json(r);
    store.append_metric(rec);
    if (split == "val") {
      last_val_bpb = r.bpb;
      last_eval_step = step;
    } else {
      heldout_bpb = r.bpb;
    }
    if (obs) obs->on_eval(r);
    return r;
  }

  // ----- one optimizer step; returns false when the loss is not finite -----

  bool train_step(int64_t inject_nan) {
    auto ts = Clock::now();
    const int accum = config.train.grad_accum;
    int64_t step_tokens = 0;  // counted once the step is taken
    Batch batch;
    const bool dp = dist->distributed();
    for (int micro = 0; micro < accum; ++micro) {
      train_loader->next(batch);
      step_tokens += batch.rows * batch.T;
      if (!plan.owns(micro))
        continue;  // another rank computes this micro-batch of the global batch
      auto x = to_tensor(batch.inputs_int64(), batch.rows, batch.T, device);   // (B, T)
      auto y = to_tensor(batch.targets_int64(), batch.rows, batch.T, device);  // (B, T)
      if (plan.split_rows) {
        x = x.narrow(0, plan.row_begin, plan.row_end - plan.row_begin);  // (B/N, T)
        y = y.narrow(0, plan.row_begin, plan.row_end - plan.row_begin);  // (B/N, T)
      }
      // No host sync inside a micro-step: the losses stay on the device until read_losses().
      step_fn->micro_step(x, y, static_cast<double>(plan.local_micro_steps),
                          inject_nan == step + 1);
    }
    // The step's one host read of its losses (the log interval is one step: metrics.jsonl has a
    // line per step), before the update so a non-finite loss never reaches the weights.
    const StepLosses sums = step_fn->read_losses();
    const auto synced = Clock::now();
    if (timer_armed) {
      timed_seconds += std::chrono::duration<double>(synced - last_sync).count();
      timed_tokens += step_tokens;
    }
    ++segment_steps;
    last_sync = synced;
    timer_armed = segment_steps >= kWarmupSteps;
    double loss_sum = sums.data, total_sum = sums.total;
    const bool nonfinite = !sums.finite;
    if (nonfinite) last_loss = total_sum;
    if (nonfinite && !dp) {
      step_fn->discard();
      return false;
    }
    double local_micro = plan.local_micro_steps;
    if (dp) {
      auto sums = dist->all_reduce_sum({loss_sum, total_sum, nonfinite ? 1.0 : 0.0});
      if (sums[2] > 0) {
        if (!nonfinite) last_loss = NAN;
        step_fn->discard();
        visits.counts().clear();
        return false;
      }
      loss_sum = sums[0];
      total_sum = sums[1];
      local_micro *= dist->world_size();  // mean over every rank's micro-steps
      dist->all_reduce_gradients(grad_params);
      dist->all_reduce_counts(visits);  // before the moment-free update
      visits.apply(*opt);
    }
    tokens += step_tokens;
    segment_tokens += step_tokens;
    auto info = step_fn->update(step);
    ++step;
    last_loss = loss_sum / local_micro;
    train_seconds += seconds_since(ts);
    StepRecord r;
    r.step = step;
    r.total_steps = config.train.steps;
    r.tokens = tokens;
    r.loss = last_loss;
    r.lr_scale = info.lr_multiplier;
    r.tokens_per_s = tokens_per_s();
    r.wall_s = wall();
    r.peak_mem_mib = dist::measured_peak_mib(device);
    r.flops = cost.flops_per_token * static_cast<double>(tokens);
    nlohmann::json rec = to_json(r);
    if (total_sum / local_micro != last_loss) rec["loss_total"] = total_sum / local_micro;
    if (writer()) store.append_metric(rec);
    if (obs) obs->on_step(r);
    return true;
  }

  FinishedRecord finish(const std::string& status, const std::string& message, bool write = true) {
    FinishedRecord f;
    f.run_dir = store.dir();
    f.status = status;
    f.step = step;
    f.tokens = tokens;
    f.final_loss = last_loss;
    f.val_bpb = last_val_bpb;
    f.heldout_bpb = heldout_bpb;
    f.tokens_per_s = tokens_per_s();
    f.peak_mem_mib = dist::measured_peak_mib(device);
    f.analytic_mem_mib = cost.total_mib;
    f.wall_s = wall();
    f.message = message;
    if (!writer() || !write) return f;
    nlohmann::json summary = to_json(f);
    summary.erase("run_dir");  // the folder may move; the summary is read from inside it
    summary.update({{"name", config.name},
                    {"seed", config.train.seed},
                    {"total_steps", config.train.steps},
                    {"memory_estimate", to_json(cost)},
                    {"unigram_bpb",
                     std::isfinite(unigram) ? nlohmann::json(unigram) : nlohmann::json(nullptr)},
                    {"flops", cost.flops_per_token * static_cast<double>(tokens)},
                    {"device", cuda ? "cuda" : "cpu"},
                    {"parent", fork ? fork->record : nlohmann::json(nullptr)},
                    {"threads", runtime_info().threads}});
    store.write_summary(summary);
    return f;
  }

  void run(bool resuming) {
    t0 = Clock::now();
    for (const auto& note : segment.notes) log(note);
    if (!dist::launched_child())
      store.write_summary(
          {{"status", "running"}, {"pid", static_cast<long>(::getpid())}, {"name", config.name}});
    setup();
    if (resuming) {
      std::vector<std::string> skipped;
      CheckpointInfo ck = last_valid_checkpoint(store.dir(), &skipped);
      for (const auto& s : skipped) log("skipped checkpoint: " + s);
      segment.start_step = ck.step;
      load_checkpoint(ck);
      std::string torn = writer() ? store.truncate_metrics_after(ck.step) : std::string();
      if (!torn.empty()) log(torn);
      if (writer() && segment.extends_completed) {
        std::error_code ec;
        const auto bytes = std::filesystem::file_size(store.metrics_path(), ec);
        segment.metrics_bytes = ec ? -1 : static_cast<int64_t>(bytes);
      }
      if (writer() && segment.config_changes.is_array() && !segment.config_changes.empty()) {
        store.append_metric({{"step", step},
                             {"tokens", tokens},
                             {"event", "config_change"},
                             {"changes", segment.config_changes}});
        log("config.json differs from the checkpoint's config (accepted with "
            "--allow-config-change; recorded in metrics.jsonl): " +
            json_brief(segment.config_changes, 400));
      }
      log("resumed from step " + std::to_string(ck.step) + " (" + ck.weights_path + ")");
    } else if (fork) {
      load_checkpoint(fork->checkpoint, fork_own_tensors());
      segment.start_step = step;
      if (writer())
        store.append_metric(
            {{"step", step}, {"tokens", tokens}, {"event", "fork"}, {"parent", fork->record}});
      log("forked from step " + std::to_string(step) + " of " + fork->parent_run + " (" +
          fork->checkpoint.weights_path + "), with this run's grades");
    }
    if (obs) obs->on_start(store.dir(), step, config.train.steps);
    int64_t inject_nan = options.inject_nan_step > 0 ? options.inject_nan_step
                                                     : env_int("GLLM_TEST_INJECT_NAN_STEP");
    const auto& tc = config.train;
    model->train();
    while (step < tc.steps) {
      if (dist->any(cancel->load())) {  // all ranks stop at the same step
        if (list_checkpoints(store.dir()).empty() ||
            list_checkpoints(store.dir()).back().step != step)
          save_checkpoint();
        if (obs) obs->on_finished(finish("cancelled", "cancelled at step " + std::to_string(step)));
        return;
      }
      if (!train_step(inject_nan)) {
        std::string msg =
            "training diverged: the loss became " +
            std::string(std::isnan(last_loss) ? "NaN" : "infinite") + " at step " +
            std::to_string(step + 1) + "; the last good state is checkpointed at step " +
            std::to_string(step) +
            ". Lower the learning rates (optim.*_lr) or check the data, then start again";
        if (segment.extends_completed && writer()) {
          // The completed run stays as it was: its final checkpoint, summary and config.
          restore_completed_run(store, segment);
          msg += ". The extension was discarded: " + store.dir() +
                 " is left as it was, completed at step " + std::to_string(segment.start_step);
          if (obs) obs->on_finished(finish("diverged", msg, false));
          return;
        }
        auto ck = list_checkpoints(store.dir());
        if (ck.empty() || ck.back().step != step) save_checkpoint();
        if (writer())
          store.append_metric({{"step", step},
                               {"tokens", tokens},
                               {"loss", nullptr},
                               {"event", "diverged"},
                               {"message", msg}});
        if (obs) obs->on_finished(finish("diverged", msg));
        return;
      }
      bool last = step == tc.steps;
      bool paused = false;  // an evaluation or a checkpoint ran: not the step's time
      if (tc.eval_every > 0 && step % tc.eval_every == 0 && !last) {
        evaluate("val", tc.eval_tokens);
        paused = true;
      }
      if (tc.checkpoint_every > 0 && step % tc.checkpoint_every == 0 && !last) {
        save_checkpoint();
        paused = true;
      }
      if (paused) restart_timer();
    }
    if (last_eval_step != step) evaluate("val", tc.eval_tokens);
    if (heldout_bpb < 0) evaluate("heldout", tc.heldout_tokens);
    auto ck = list_checkpoints(store.dir());
    if (ck.empty() || ck.back().step != step) save_checkpoint();
    if (obs) obs->on_finished(finish("completed", "completed " + std::to_string(step) + " steps"));
  }
};

}  // namespace

struct Trainer::Impl {
  std::thread worker;
  std::atomic<bool> cancel{false};
  std::atomic<bool> running{false};
  std::string dir;
  mutable std::mutex mu;

  void launch(std::unique_ptr<Session> s, bool resuming) {
    if (worker.joinable()) worker.join();
    cancel = false;
    running = true;
    s->cancel = &cancel;
    {
      std::lock_guard<std::mutex> lk(mu);
      dir = s->store.dir();
    }
    worker = std::thread([this, s = std::move(s), resuming]() mutable {
      try {
        s->run(resuming);
      } catch (const std::exception& e) {
        std::string msg = e.what();
        // c10::Error messages carry a backtrace after the first line; keep the first line.
        if (auto nl = msg.find('\n');
            nl != std::string::npos && dynamic_cast<const Error*>(&e) == nullptr)
          msg = msg.substr(0, nl);
        if (s->dist) s->dist->abort("rank " + std::to_string(s->dist->rank()) + " failed: " + msg);
        try {
          const auto& seg = s->segment;
          if (dist::launched_child()) {
            // ranks other than 0 write nothing in the run folder
          } else if (seg.extends_completed) {
            restore_completed_run(s->store, seg);
            msg += " (the extension was discarded: " + s->store.dir() +
                   " is left as it was, completed at step " + std::to_string(seg.start_step) + ")";
          } else if (seg.restore_on_failure && s->step <= seg.start_step) {
            // Nothing was trained in this segment: the folder keeps the summary (and config) it
            // had, so a failed resume never turns a completed run into a failed one.
            if (!seg.prior_config.empty())
              write_file_atomic(s->store.config_path(), seg.prior_config);
            std::error_code ec;
            if (!seg.prior_summary.empty())
              write_file_atomic(s->store.summary_path(), seg.prior_summary);
            else
              std::filesystem::remove(s->store.summary_path(), ec);
          } else {
            s->store.write_summary({{"status", "failed"},
                                    {"message", msg},
                                    {"name", s->config.name},
                                    {"step", s->step}});
          }
        } catch (...) {
        }
        if (s->obs) s->obs->on_error(msg);
      }
      s.reset();  // closes the run folder's lock before running() turns false
      running = false;
    });
  }
};

Trainer::Trainer() : impl_(std::make_unique<Impl>()) {}

Trainer::~Trainer() {
  cancel();
  wait();
}

namespace {

// The analytic memory estimate against this machine's memory, for runs on the CPU: a preset far
// too large is refused before anything is allocated.
void check_memory(const RunConfig& c) {
  const bool cpu = c.train.device == "cpu" || (c.train.device == "auto" && !dist::cuda_available());
  if (!cpu) return;
  const CostEstimate e = estimate_cost(c, c.data.vocab_size);
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page <= 0) return;
  const double have_mib =
      static_cast<double>(pages) * static_cast<double>(page) / (1024.0 * 1024.0);
  if (!(e.total_mib <= have_mib)) {
    char line[320];
    std::snprintf(line, sizeof line,
                  "%s needs about %.0f MiB by the analytic estimate (%.3g parameters) but this "
                  "machine has %.0f MiB of memory; choose a smaller model (model.depth, n_layer, "
                  "n_embd) or a smaller train.device_batch",
                  c.name.c_str(), e.total_mib, static_cast<double>(e.params), have_mib);
    throw Error(line);
  }
}

// Keys whose edit between checkpoint and resume changes no trained number: names, how long
// (train.steps, set with --steps), how often to evaluate or checkpoint, and CPU threads.
const std::set<std::string>& result_neutral_keys() {
  static const std::set<std::string> keys{"name",
                                          "description",
                                          "train.steps",
                                          "train.eval_every",
                                          "train.checkpoint_every",
                                          "train.keep_checkpoints",
                                          "train.threads"};
  return keys;
}

// The result-changing differences between the config a checkpoint was trained with (its weights'
// metadata) and `now`: [{key, from, to}]; null when the checkpoint carries no readable config.
nlohmann::json config_changes(const CheckpointInfo& ck, const RunConfig& now,
                              std::vector<std::string>& notes) {
  std::map<std::string, std::string> meta;
  RunConfig then;
  try {
    meta = read_safetensors_metadata(ck.weights_path);
    if (!meta.count("config")) {
      notes.push_back(ck.weights_path + " carries no config; config edits were not checked");
      return nullptr;
    }
    then = RunConfig::from_json(
        parse_json(meta.at("config"), ck.weights_path + " (stored config)", ""));
  } catch (const Error& e) {
    notes.push_back(std::string("config edits were not checked: ") + e.what());
    return nullptr;
  }
  std::map<std::string, nlohmann::json> a, b;
  // A moved run tree is no edit: both sides' files are found from the run folder, then compared.
  const std::string run_dir =
      std::filesystem::path(ck.weights_path).parent_path().parent_path().string();
  nlohmann::json tj = then.to_json(), nj = now.to_json();
  resolve_run_files(tj, run_dir);
  resolve_run_files(nj, run_dir);
  flatten_config(portable_config(tj), "", a);
  flatten_config(portable_config(nj), "", b);
  nlohmann::json changes = nlohmann::json::array();
  for (const auto& [key, value] : b) {
    if (result_neutral_keys().count(key)) continue;
    auto it = a.find(key);
    if (it == a.end() || it->second != value)
      changes.push_back({{"key", key},
                         {"from", it == a.end() ? nlohmann::json(nullptr) : it->second},
                         {"to", value}});
  }
  return changes;
}

std::string list_changes(const nlohmann::json& changes) {
  std::string s;
  for (const auto& c : changes) {
    if (s.size() > 600) {
      s += ", …";
      break;
    }
    s += (s.empty() ? "" : ", ") + c["key"].get<std::string>() + " " + json_brief(c["from"], 40) +
         " → " + json_brief(c["to"], 40);
  }
  return s;
}

// Why a run folder without a committed checkpoint must have written one (empty when nothing
// says so): metrics past the first checkpoint step, a final held-out evaluation or a divergence
// (each followed by a checkpoint), or a summary that the trainer writes only after a checkpoint.
// Such a folder lost its sidecars; it is not restarted over its weights.
std::string checkpoint_evidence(const RunStore& store, const RunConfig& c,
                                const std::string& status) {
  if (status == "cancelled" || status == "diverged")
    return store.summary_path() + " says the run was " + status +
           ", which is recorded only after a checkpoint";
  int64_t last = -1;
  for (const auto& r : read_metrics(store.metrics_path()).records) {
    const int64_t step = json_int_or(r, "step", -1);
    last = std::max(last, step);
    if (r.contains("heldout_bpb"))
      return store.metrics_path() + " records the final held-out evaluation (step " +
             std::to_string(step) + "), after which a checkpoint is always written";
    if (json_string_or(r, "event", "") == "diverged")
      return store.metrics_path() + " records a divergence at step " + std::to_string(step) +
             ", recorded after its checkpoint";
  }
  const int64_t every = c.train.checkpoint_every;
  if (every > 0 && last > every)
    return store.metrics_path() + " records step " + std::to_string(last) +
           " and train.checkpoint_every is " + std::to_string(every) +
           ", so the checkpoint of step " + std::to_string(every) + " was committed";
  return {};
}

// Range checks of the resume state a checkpoint's sidecar and optimizer file carry, before
// anything is loaded: a tampered or corrupted value is refused, never trained on.
void check_resume_state(const CheckpointInfo& ck) {
  const auto& s = ck.sidecar;
  const std::string where = ck.sidecar_path;
  const std::string fix =
      "; the checkpoint's state is damaged — restore the sidecar from a copy, or move checkpoint "
      "step " +
      std::to_string(ck.step) + " aside to resume from an earlier one";
  constexpr int64_t kMaxTokens = int64_t(1) << 53;  // exact in a double, no overflow when added
  if (ck.step < 0) throw Error(where + ": step " + std::to_string(ck.step) + " is negative" + fix);
  const int64_t tokens = json_int_or(s, "tokens", -1);
  if (tokens < 0 || tokens > kMaxTokens || (ck.step > 0 && tokens == 0) ||
      (ck.step == 0 && tokens != 0))
    throw Error(where + ": \"tokens\" is " +
                (s.contains("tokens") ? json_brief(s["tokens"]) : "missing") +
                ", not a token count for step " + std::to_string(ck.step) + fix);
  if (s.contains("wall_s")) {
    const double w = json_number_or(s, "wall_s", -1);
    if (!(w >= 0 && w < 1e10))
      throw Error(where + ": \"wall_s\" is " + json_brief(s["wall_s"]) +
                  ", not a number of seconds" + fix);
  }
  if (s.contains("last_eval_step")) {
    const int64_t e = json_int_or(s, "last_eval_step", INT64_MIN);
    if (e < -1 || e > ck.step)
      throw Error(where + ": \"last_eval_step\" is " + json_brief(s["last_eval_step"]) +
                  ", outside [-1, " + std::to_string(ck.step) + "]" + fix);
  }
  if (s.contains("last_val_bpb")) {
    const double v = json_number_or(s, "last_val_bpb", NAN);
    if (!(v == -1 || (v >= 0 && v < 1e6)))
      throw Error(where + ": \"last_val_bpb\" is " + json_brief(s["last_val_bpb"]) +
                  ", neither -1 nor a bits-per-byte figure" + fix);
  }
  const auto& loader = s["loader"];
  const int64_t batches = json_int_or(loader, "batches", -1);
  if (batches < 0 || batches > kMaxTokens || (ck.step > 0) != (batches > 0))
    throw Error(where + ": the loader state's \"batches\" is " +
                (loader.contains("batches") ? json_brief(loader["batches"]) : "missing") +
                ", not a batch count for step " + std::to_string(ck.step) + fix);
  // The optimizer's per-parameter step counters: each update counts once, so 0 … step.
  std::map<std::string, std::string> meta;
  try {
    meta = read_safetensors_metadata(ck.optimizer_path);
  } catch (const Error& e) {
    throw Error(std::string(e.what()) + fix);
  }
  if (!meta.count("scalar_state"))
    throw Error(ck.optimizer_path + " has no scalar optimizer state" + fix);
  const nlohmann::json st =
      parse_json(meta.at("scalar_state"), ck.optimizer_path + " (scalar_state)", fix.substr(2));
  if (!st.is_object() || !st.contains("steps") || !st["steps"].is_object())
    throw Error(ck.optimizer_path + ": the scalar optimizer state has no \"steps\"" + fix);
  for (auto it = st["steps"].begin(); it != st["steps"].end(); ++it) {
    const int64_t t = json_int_or(st["steps"], it.key().c_str(), -1);
    if (!it->is_number_integer() || t < 0 || t > ck.step)
      throw Error(ck.optimizer_path + ": the optimizer step counter of '" +
                  brief_text(it.key(), 80) + "' is " + json_brief(*it) + ", outside [0, " +
                  std::to_string(ck.step) + "]" + fix);
  }
}

}  // namespace

void Trainer::start(const RunConfig& config, const std::string& run_dir, RunObserver* observer,
                    const TrainerOptions& options) {
  if (running())
    throw Error("this trainer is already running a run; cancel it or use another Trainer");
  RunConfig c = RunConfig::from_json(config.to_json());  // validates
  if (options.steps_override > 0) c.train.steps = options.steps_override;
  check_memory(c);
  auto s = std::make_unique<Session>(run_dir);
  s->config = c;
  s->obs = observer;
  s->options = options;
  if (!options.fork_from.empty())
    s->fork = std::make_unique<ForkPoint>(resolve_fork(options.fork_from, c));
  if (!dist::launched_child()) {  // rank 0 alone writes (and owns) the run folder
    make_directories(run_dir);
    RunOwner previous;
    s->segment.lock = RunLock::acquire(run_dir, "train", &previous);
    s->store.create(portable_config(c.to_json()));
    if (s->fork)
      write_file_atomic(join_path(run_dir, "parent.json"),
                        portable_fork_record(s->fork->record, run_dir).dump(2) + "\n");
  }
  impl_->launch(std::move(s), false);
}

void Trainer::resume(const std::string& run_dir, RunObserver* observer,
                     const TrainerOptions& options) {
  if (running())
    throw Error("this trainer is already running a run; cancel it or use another Trainer");
  RunStore store(run_dir);
  if (!file_exists(store.config_path()))
    throw Error(run_dir +
                " is not a run folder (no config.json); give the folder `gllm train` wrote");
  SegmentStart seg;
  RunOwner previous;
  seg.lock = RunLock::acquire(run_dir, "resume", &previous);
  if (previous.pid > 0)
    seg.notes.push_back("took over the run folder from " + previous.describe() +
                        ", which is no longer running");
  // A lost store (a link to an unmounted disk, a file copied over it) is never taken for an
  // empty one: that would restart the run from step 0 over whatever it held.
  check_checkpoint_store(run_dir);
  const auto removed = store.remove_temporaries();
  if (removed.files > 0)
    seg.notes.push_back("removed " + std::to_string(removed.files) + " temporary file(s) (" +
                        std::to_string(removed.bytes >> 20) + " MiB) left by an interrupted write");
  const JsonLimits limits{4ull << 20, 16};
  const std::string config_text = read_file_limited(
      store.config_path(), limits.max_bytes, "the run folder is damaged; restore config.json");
  RunConfig c;
  try {
    c = RunConfig::from_json(
        parse_json(config_text, store.config_path(), "restore config.json", limits));
  } catch (const ConfigError& e) {
    throw Error(store.config_path() + ": " + e.what() +
                " (the run folder's config is damaged or was edited)");
  }
  resolve_run_files(c, run_dir);  // ladders, profiles and corpora from wherever the run now lies
  std::string summary_text;
  nlohmann::json summary;
  if (file_exists(store.summary_path())) {
    summary_text = read_file_limited(store.summary_path(), 16ull << 20, "");
    try {
      summary = parse_json(summary_text, store.summary_path(), "");
    } catch (const Error& e) {
      seg.notes.push_back(std::string(e.what()) + "; the summary will be rewritten");
    }
  }
  const std::string status = json_string_or(summary, "status", "");

  // A run killed before its first checkpoint starts again from step 0 in its own folder. Weights
  // without a sidecar were never committed and do not count; a sidecar that does not parse does
  // (it is damage to look at, not something to delete).
  std::vector<std::string> problems;
  const auto ckpts = list_checkpoints(run_dir, &problems);
  const bool any_checkpoint = !ckpts.empty() || !problems.empty();
  const bool extend = options.steps_override > 0 && options.steps_override != c.train.steps;
  if (!any_checkpoint) {
    if (status == "completed")
      throw Error(run_dir +
                  " says it is completed but holds no checkpoint; start a new run with gllm train");
    const std::string evidence = checkpoint_evidence(store, c, status);
    if (!evidence.empty())
      throw Error(
          run_dir + " has no committed checkpoint (no checkpoints/step_*.json sidecar), yet " +
          evidence +
          ": its checkpoints were written and their sidecars are lost. Nothing was "
          "changed. Restore the sidecars from a copy; or, to discard the run's progress and "
          "train it again from step 0, remove " +
          store.metrics_path() + " and the files in " + store.checkpoints_dir() + ", then resume");
    if (extend) {
      c.train.steps = options.steps_override;
      write_file_atomic(store.config_path(), portable_config(c.to_json()).dump(2) + "\n");
    }
    check_memory(c);
    store.reset_for_restart();
    seg.notes.push_back(
        "no checkpoint was written before the run stopped: starting it again from step 0 in " +
        run_dir);
    auto s = std::make_unique<Session>(run_dir);
    s->config = c;
    s->obs = observer;
    s->options = options;
    s->segment = std::move(seg);
    // A forked run that stopped before its first checkpoint starts again from its fork point.
    const nlohmann::json parent = read_parent_record(run_dir);
    if (parent.is_object() && parent.contains("checkpoint") && parent["checkpoint"].is_string()) {
      std::string ck = parent["checkpoint"].get<std::string>();  // relative to the run folder
      if (!std::filesystem::path(ck).is_absolute()) ck = join_path(run_dir, ck);
      s->fork = std::make_unique<ForkPoint>(resolve_fork(ck, c));
    }
    impl_->launch(std::move(s), false);
    return;
  }
  const CheckpointInfo ck = last_valid_checkpoint(run_dir);  // fails early, naming the problem
  check_resume_state(ck);
  const int64_t target = extend ? options.steps_override : c.train.steps;
  if (status == "completed" && json_int_or(summary, "step", ck.step) >= target)
    throw Error(run_dir + " is completed (step " +
                std::to_string(json_int_or(summary, "step", ck.step)) + " of " +
                std::to_string(c.train.steps) +
                "); nothing to resume. To train it further, give "
                "--steps N with N above " +
                std::to_string(c.train.steps));
  if ((summary_text.empty() || !summary.is_object()) && ck.step >= target && !extend)
    seg.notes.push_back(
        store.summary_path() + (summary_text.empty() ? " is missing" : " is damaged") +
        ", and the last checkpoint is the run's final step " + std::to_string(ck.step) +
        ": the run is finished again from it (final evaluation and a new summary; no step is "
        "trained)");
  if (target < ck.step)
    throw Error("--steps " + std::to_string(target) + " is below the last checkpoint's step " +
                std::to_string(ck.step) + " in " + run_dir + "; give more steps than that");
  seg.config_changes = config_changes(ck, c, seg.notes);
  if (seg.config_changes.is_array() && !seg.config_changes.empty() && !options.allow_config_change)
    throw Error(
        store.config_path() + " was edited after checkpoint step " + std::to_string(ck.step) +
        ": " + list_changes(seg.config_changes) +
        ". These change the run's results; undo the edit, or resume with --allow-config-change "
        "to accept it (recorded in metrics.jsonl)");
  seg.restore_on_failure = true;
  seg.start_step = ck.step;
  seg.prior_summary = summary_text;
  seg.extends_completed = status == "completed" && !summary_text.empty();
  if (extend) {
    // Extending a run changes its schedule from here on; record the new length.
    seg.prior_config = config_text;
    c.train.steps = options.steps_override;
    write_file_atomic(store.config_path(), portable_config(c.to_json()).dump(2) + "\n");
  }
  check_memory(c);
  auto s = std::make_unique<Session>(run_dir);
  s->config = c;
  s->obs = observer;
  s->options = options;
  s->segment = std::move(seg);
  impl_->launch(std::move(s), true);
}

void Trainer::cancel() {
  impl_->cancel = true;
}

void Trainer::wait() {
  if (impl_->worker.joinable()) impl_->worker.join();
}

bool Trainer::running() const {
  return impl_->running;
}

std::string Trainer::run_dir() const {
  std::lock_guard<std::mutex> lk(impl_->mu);
  return impl_->dir;
}

std::string new_run_dir(const std::string& parent, const std::string& name) {
  std::time_t now = std::time(nullptr);
  std::tm tm{};
  localtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y%m%d-%H%M%S", &tm);
  std::string base = join_path(parent, folder_name(name) + "-" + buf);
  std::string dir = base;
  for (int i = 2; std::filesystem::exists(dir); ++i) dir = base + "-" + std::to_string(i);
  return dir;
}

}  // namespace gllm
