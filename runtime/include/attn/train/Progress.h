// The training progress display.
//
// On a terminal it keeps one status line up to date in place (carriage return, no scrolling):
//   step 120/3000  loss 0.4321  12.3 steps/s  ETA 3m54s
// redrawn at most every 0.1 s (a fast loop would otherwise spend its time in the terminal), and
// ends it with a newline in finish(). Anywhere else (a log file, a pipe, CI) the same text is
// printed as a plain line every `every` steps and at the last step, so logs stay grep-able.
#ifndef ATTN_TRAIN_PROGRESS_H
#define ATTN_TRAIN_PROGRESS_H

#include <cstdint>
#include <cstdio>
#include <functional>
#include <optional>
#include <string>

namespace attn::train {

// "45s", "3m54s", "1h02m" (rounded to whole seconds; hours drop the seconds); "--" for a
// negative or non-finite duration.
std::string formatDuration(double seconds);

// One status line: "step 120/3000  loss 0.4321  12.3 steps/s  ETA 3m54s". The loss uses 4
// significant digits (%.4g), the rate 3 (%.3g); a rate <= 0 or unknown prints "-- steps/s" and
// "ETA --".
std::string formatProgressLine(int64_t step, int64_t total, double loss, double stepsPerSecond);

// Whether progress on file descriptor `fd` redraws in place: a terminal, unless this process
// is a rank that mpirun started (Open MPI gives its ranks a pseudo-terminal for stdout
// whatever mpirun's own stdout is, so a redrawn line would reach a pipe or a log as one line).
bool redrawsInPlace(int fd);

struct ProgressOptions {
  // Non-terminal mode: print every `every` steps (and at the last one). Values < 1 act as 1.
  int64_t every = 100;
  // Seconds from an arbitrary origin; defaults to std::chrono::steady_clock. Tests inject one.
  std::function<double()> clock;
  // Overrides the redrawsInPlace() check on the stream's file descriptor (tests,
  // --progress=plain).
  std::optional<bool> terminal;
  // The step the run starts after (non-zero for a resumed run), so the rate counts only the steps
  // this process did.
  int64_t startStep = 0;
  // Terminal mode: minimum seconds between redraws.
  double redrawInterval = 0.1;
};

class Progress {
public:
  // Reports on `out` (not owned; usually stderr) for a run of `totalSteps` steps.
  Progress(std::FILE *out, int64_t totalSteps, ProgressOptions options = {});
  // Calls finish().
  ~Progress();
  Progress(const Progress &) = delete;
  Progress &operator=(const Progress &) = delete;

  // Reports that `step` (1-based) finished with `loss`.
  void update(int64_t step, double loss);
  // Ends the display: a terminal gets the final state and a newline; a plain stream gets the last
  // update's line if it was not printed yet (a run that stopped early). Idempotent.
  void finish();

  bool isTerminal() const { return terminal_; }

private:
  double stepsPerSecond(int64_t step, double now) const;
  void emit(const std::string &line);

  std::FILE *out_;
  int64_t total_;
  ProgressOptions opts_;
  bool terminal_;
  double start_;
  double lastDraw_ = 0;
  bool drawnAny_ = false;
  size_t lastWidth_ = 0; // terminal: length of the line on screen, to blank a longer old one
  // The most recent update, and whether the stream already shows it.
  int64_t lastStep_ = 0;
  double lastLoss_ = 0;
  bool lastShown_ = true;
  bool finished_ = false;
};

} // namespace attn::train

#endif // ATTN_TRAIN_PROGRESS_H
