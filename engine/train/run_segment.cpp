// The run segment's work: the model, data and optimizer set up on the run's device, the training
// step with gradient accumulation, evaluation, checkpoints (weights, optimizer, loader, RNG).
#include "engine/train/run_segment.h"

#include <ATen/CPUGeneratorImpl.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <thread>

#include "engine/data/bpb.h"
#include "engine/dataset/prepared_data.h"
#include "engine/dist/device.h"
#include "engine/dist/launcher.h"
#include "engine/io/atomic_file.h"
#include "engine/io/error.h"
#include "engine/io/json_read.h"
#include "engine/io/paths.h"
#include "engine/io/safetensors.h"
#include "engine/model/checkpoint_tensors.h"
#include "engine/ops/pointwise.h"
#include "engine/runtime/runtime.h"
#include "engine/train/events_json.h"

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

}  // namespace

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

void RunSegment::setup() {
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
  auto say = [this](const std::string& s) { log(s); };
  data = std::make_unique<Dataset>(open_configured_dataset(config.data, say));
  if (writer()) dist->barrier();
  int64_t vocab = data->tokenizer.vocab_size();
  torch::manual_seed(config.train.seed);
  // The estimate's base: libraries and data as resident now, before any training tensor exists
  // (the CUDA allocator's peak counts tensors only).
  if (!cuda) {
    // One small product on the run's threads first: the BLAS maps its per-thread buffers and the
    // kernels' pages at its first GEMM, and they are the library's share, not the training's.
    auto a = torch::ones({256, 256});
    (void)torch::mm(a, a).sum().item<float>();
    resident_start_mib = dist::resident_mib();
  }
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
    step_fn->visit_sink = [this, table_rows](const std::string& table, const torch::Tensor& rows) {
      visits.add(table, rows, table_rows.at(table));
    };
  train_loader = std::make_unique<PackingLoader>(
      data->loader("train", config.train.device_batch, config.model.sequence_len,
                   PackingLoader::Mode::Train, static_cast<uint64_t>(config.train.seed),
                   config.data.windows == "contiguous" ? PackingLoader::Windows::Contiguous
                                                       : PackingLoader::Windows::Documents));
  cost = estimate_cost(config, vocab, !cuda && ops::fused_ops_enabled());
  unigram = unigram_bpb(*data);
  char line[160];
  std::snprintf(
      line, sizeof line,
      "data: %zu train / %zu val / %zu held-out documents; unigram entropy %.4f bits/byte",
      data->splits.train.size(), data->splits.val.size(), data->splits.heldout.size(), unigram);
  log(line);
}

void RunSegment::save_checkpoint() {
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
  nlohmann::json side = {
      {"tokens", tokens},
      {"total_steps", config.train.steps},
      {"loader", train_loader->state()},
      {"wall_s", wall()},
      {"last_loss", std::isfinite(last_loss) ? nlohmann::json(last_loss) : nlohmann::json(nullptr)},
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

void RunSegment::load_checkpoint(const CheckpointInfo& ck, const std::set<std::string>& own) {
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
  opt->load_scalar_state(parse_json(ometa.at("scalar_state"), ck.optimizer_path + " (scalar_state)",
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

EvalRecord RunSegment::evaluate(const std::string& split, int64_t max_tokens) {
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

bool RunSegment::train_step(int64_t inject_nan) {
  auto ts = Clock::now();
  const int accum = config.train.grad_accum;
  int64_t step_tokens = 0;  // counted once the step is taken
  Batch batch;
  const bool dp = dist->distributed();
  for (int micro = 0; micro < accum; ++micro) {
    const auto loader_start = Clock::now();
    train_loader->next(batch);
    step_tokens += batch.rows * batch.T;
    if (!plan.owns(micro)) {  // another rank computes this micro-batch of the global batch
      loader_seconds += seconds_since(loader_start);
      continue;
    }
    auto x = to_tensor(batch.inputs_int64(), batch.rows, batch.T, device);   // (B, T)
    auto y = to_tensor(batch.targets_int64(), batch.rows, batch.T, device);  // (B, T)
    loader_seconds += seconds_since(loader_start);
    if (plan.split_rows) {
      x = x.narrow(0, plan.row_begin, plan.row_end - plan.row_begin);  // (B/N, T)
      y = y.narrow(0, plan.row_begin, plan.row_end - plan.row_begin);  // (B/N, T)
    }
    // No host sync inside a micro-step: the losses stay on the device until read_losses().
    step_fn->micro_step(x, y, static_cast<double>(plan.local_micro_steps), inject_nan == step + 1);
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
  r.estimate_mem_mib = estimate_mem_mib();
  nlohmann::json rec = to_json(r);
  if (total_sum / local_micro != last_loss) rec["loss_total"] = total_sum / local_micro;
  if (writer()) store.append_metric(rec);
  if (obs) obs->on_step(r);
  return true;
}

FinishedRecord RunSegment::finish(const std::string& status, const std::string& message,
                                  bool write) {
  FinishedRecord f;
  f.run_dir = store.dir();
  f.status = status;
  f.step = step;
  f.tokens = tokens;
  f.final_loss = last_loss;
  f.val_bpb = last_val_bpb;
  f.val_bpb_step = last_val_bpb >= 0 ? last_eval_step : -1;
  f.heldout_bpb = heldout_bpb;
  f.tokens_per_s = tokens_per_s();
  f.peak_mem_mib = dist::measured_peak_mib(device);
  f.analytic_mem_mib = cost.total_mib;
  f.resident_start_mib = resident_start_mib;
  f.estimate_mem_mib = estimate_mem_mib();
  f.wall_s = wall();
  f.train_s = train_seconds;
  f.loader_s = loader_seconds;
  f.message = message;
  if (!writer() || !write) return f;
  nlohmann::json summary = to_json(f);
  summary.erase("run_dir");  // the folder may move; the summary is read from inside it
  summary.update(
      {{"name", config.name},
       {"seed", config.train.seed},
       {"total_steps", config.train.steps},
       {"memory_estimate", to_json(cost)},
       {"unigram_bpb", std::isfinite(unigram) ? nlohmann::json(unigram) : nlohmann::json(nullptr)},
       {"flops", cost.flops_per_token * static_cast<double>(tokens)},
       {"device", cuda ? "cuda" : "cpu"},
       {"parent", fork ? fork->record : nlohmann::json(nullptr)},
       {"threads", runtime_info().threads}});
  store.write_summary(summary);
  return f;
}

void RunSegment::run(bool resuming) {
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
  int64_t inject_nan =
      options.inject_nan_step > 0 ? options.inject_nan_step : env_int("GLLM_TEST_INJECT_NAN_STEP");
  // Tests that steer a run mid-way (cancel, requeue, a warning signal) slow its steps down so
  // that "mid-way" exists on a fast machine too; the numbers are untouched.
  const int64_t step_delay_ms = env_int("GLLM_TEST_STEP_DELAY_MS");
  const auto& tc = config.train;
  model->train();
  while (step < tc.steps) {
    if (step_delay_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(step_delay_ms));
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

}  // namespace gllm
