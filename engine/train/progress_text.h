// The CLI's progress display as text: a redrawn bar on a terminal, and where standard error is a
// log (SLURM's, a pipe, a file) one whole line every few percent instead of a carriage return a
// step.
#pragma once
#include <string>

#include "engine/train/events.h"

namespace gllm {

class ProgressText {
 public:
  // `terminal`: redraw one bar in place (every step); else print a line whenever the run passes
  // the next multiple of `percent_every` percent, and at its first and last step.
  explicit ProgressText(bool terminal, int percent_every = 5);
  // What to write for this step ("" = nothing). A terminal's text starts with '\r' and ends
  // without a newline (barShown() is then true); a log's is one line ending in '\n'.
  std::string step(const StepRecord& r);
  // Whether the terminal bar is on screen without a newline after it (a message printed now
  // must start on a new line; the caller clears it with lineEnded()).
  bool barShown() const { return bar_shown_; }
  void lineEnded() { bar_shown_ = false; }

  // "[#####.....] 50/100 loss 3.1234  1200 tok/s  peak 512 MiB  eta 12s" and its log form
  // "step 50/100 (50%)  loss 3.1234  1200 tok/s  peak 512 MiB  eta 12s".
  static std::string barText(const StepRecord& r, int width = 30);
  static std::string lineText(const StepRecord& r);

 private:
  bool terminal_;
  int percent_every_;
  int64_t next_percent_ = 0;  // log mode: the next percentage that prints a line
  bool bar_shown_ = false;
};

// Whether the C stream's file descriptor is a terminal (isatty), so a caller picks the mode.
bool stream_is_terminal(int fd);

}  // namespace gllm
