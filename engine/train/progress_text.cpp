// ProgressText: the bar and the log line of a training step, and when a log gets one (every few
// percent, at the first and the last step).
#include "engine/train/progress_text.h"

#include <unistd.h>

#include <algorithm>
#include <cstdarg>
#include <cstdio>

namespace gllm {
namespace {

double eta_seconds(const StepRecord& r) {
  return r.tokens_per_s > 0 && r.step > 0
             ? r.wall_s / double(r.step) * double(r.total_steps - r.step)
             : 0;
}

std::string format(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
std::string format(const char* fmt, ...) {
  char buf[512];
  va_list args;
  va_start(args, fmt);
  std::vsnprintf(buf, sizeof buf, fmt, args);
  va_end(args);
  return buf;
}

}  // namespace

ProgressText::ProgressText(bool terminal, int percent_every)
    : terminal_(terminal), percent_every_(std::clamp(percent_every, 1, 100)) {}

std::string ProgressText::barText(const StepRecord& r, int width) {
  const double frac =
      r.total_steps > 0 ? std::clamp(double(r.step) / double(r.total_steps), 0.0, 1.0) : 0;
  const int fill = int(frac * width + 0.5);
  const std::string bar = std::string(fill, '#') + std::string(width - fill, '.');
  return format("[%s] %lld/%lld loss %.4f  %.0f tok/s  peak %.0f MiB  eta %.0fs", bar.c_str(),
                (long long)r.step, (long long)r.total_steps, r.loss, r.tokens_per_s, r.peak_mem_mib,
                eta_seconds(r));
}

std::string ProgressText::lineText(const StepRecord& r) {
  const int percent = r.total_steps > 0 ? int(100.0 * double(r.step) / double(r.total_steps)) : 0;
  return format("step %lld/%lld (%d%%)  loss %.4f  %.0f tok/s  peak %.0f MiB  eta %.0fs",
                (long long)r.step, (long long)r.total_steps, percent, r.loss, r.tokens_per_s,
                r.peak_mem_mib, eta_seconds(r));
}

std::string ProgressText::step(const StepRecord& r) {
  if (terminal_) {
    bar_shown_ = true;
    return "\r" + barText(r) + "   ";
  }
  // Integer percent so a run of any length prints the same lines: 100·step/total, rounded down.
  const int64_t percent = r.total_steps > 0 ? 100 * r.step / r.total_steps : 0;
  const bool first = next_percent_ == 0;
  const bool last = r.total_steps > 0 && r.step >= r.total_steps;
  if (!first && !last && percent < next_percent_) return {};
  next_percent_ = (percent / percent_every_ + 1) * percent_every_;
  return lineText(r) + "\n";
}

bool stream_is_terminal(int fd) {
  return ::isatty(fd) == 1;
}

}  // namespace gllm
