#include "attn/train/Progress.h"

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <unistd.h>

namespace attn::train {

namespace {

double steadySeconds() {
  using namespace std::chrono;
  return duration<double>(steady_clock::now().time_since_epoch()).count();
}

std::string format(const char *fmt, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, fmt, v);
  return buf;
}

} // namespace

bool redrawsInPlace(int fd) {
  // OMPI_COMM_WORLD_SIZE: Open MPI's mpirun; PMI_SIZE / PMIX_RANK: other launchers (MPICH's
  // Hydra, Slurm's srun), which forward output the same way.
  for (const char *launched : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK"})
    if (std::getenv(launched))
      return false;
  return fd >= 0 && isatty(fd);
}

std::string formatDuration(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0)
    return "--";
  long long s = std::llround(seconds);
  char buf[64];
  if (s < 60)
    std::snprintf(buf, sizeof buf, "%llds", s);
  else if (s < 3600)
    std::snprintf(buf, sizeof buf, "%lldm%02llds", s / 60, s % 60);
  else
    std::snprintf(buf, sizeof buf, "%lldh%02lldm", s / 3600, s % 3600 / 60);
  return buf;
}

std::string formatProgressLine(int64_t step, int64_t total, double loss, double stepsPerSecond) {
  std::string line = "step " + std::to_string(step) + "/" + std::to_string(total);
  line += "  loss " + format("%.4g", loss);
  if (stepsPerSecond > 0 && std::isfinite(stepsPerSecond)) {
    line += "  " + format("%.3g", stepsPerSecond) + " steps/s";
    line += "  ETA " + formatDuration(static_cast<double>(total - step) / stepsPerSecond);
  } else {
    line += "  -- steps/s  ETA --";
  }
  return line;
}

Progress::Progress(std::FILE *out, int64_t totalSteps, ProgressOptions options)
    : out_(out), total_(totalSteps), opts_(std::move(options)) {
  if (!opts_.clock)
    opts_.clock = steadySeconds;
  if (opts_.every < 1)
    opts_.every = 1;
  terminal_ = opts_.terminal ? *opts_.terminal : redrawsInPlace(fileno(out_));
  start_ = opts_.clock();
}

Progress::~Progress() { finish(); }

double Progress::stepsPerSecond(int64_t step, double now) const {
  double elapsed = now - start_;
  return elapsed > 0 ? static_cast<double>(step - opts_.startStep) / elapsed : 0.0;
}

void Progress::emit(const std::string &line) {
  if (terminal_) {
    // Pad with spaces so that a shorter line fully covers the previous one.
    std::string padded = line;
    if (padded.size() < lastWidth_)
      padded.append(lastWidth_ - padded.size(), ' ');
    lastWidth_ = line.size();
    std::fprintf(out_, "\r%s", padded.c_str());
  } else {
    std::fprintf(out_, "%s\n", line.c_str());
  }
  std::fflush(out_);
  lastShown_ = true;
}

void Progress::update(int64_t step, double loss) {
  double now = opts_.clock();
  lastStep_ = step;
  lastLoss_ = loss;
  lastShown_ = false;
  bool last = step >= total_;
  bool due = terminal_ ? (!drawnAny_ || now - lastDraw_ >= opts_.redrawInterval)
                       : step % opts_.every == 0;
  if (!due && !last)
    return;
  emit(formatProgressLine(step, total_, loss, stepsPerSecond(step, now)));
  lastDraw_ = now;
  drawnAny_ = true;
}

void Progress::finish() {
  if (finished_)
    return;
  finished_ = true;
  if (!lastShown_) {
    emit(formatProgressLine(lastStep_, total_, lastLoss_, stepsPerSecond(lastStep_, opts_.clock())));
    drawnAny_ = true;
  }
  if (terminal_ && drawnAny_) { // leave the cursor on a fresh line for whatever prints next
    std::fputc('\n', out_);
    std::fflush(out_);
  }
}

} // namespace attn::train
