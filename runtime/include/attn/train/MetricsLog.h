// The training metrics log: one JSON object per line (JSON Lines), appended as training runs.
//
//   {"step": 10, "loss": 0.5, "lr": 0.001, "grad_norm": 1.2, "time": 3.25, "valid_loss": 0.61}
//
// Numbers are written with 9 significant digits (%.9g, locale-independent), which round-trips
// any float and is within 1e-9 relative of a double; NaN and +-Inf are written as null (JSON has
// no spelling for them) and read back as NaN. Each line is flushed as soon as it is written, so
// the log of a killed run is complete up to its last step (the plot and tests read it back).
#ifndef ATTN_TRAIN_METRICSLOG_H
#define ATTN_TRAIN_METRICSLOG_H

#include <cstdint>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

namespace attn::train {

// One line of the log. `extra` holds further numeric fields ("valid_loss", ...) in file order;
// their names must differ from the fixed ones.
struct Record {
  int64_t step = 0;
  double loss = 0;
  double lr = 0;
  double gradNorm = 0; // "grad_norm" in the file
  double time = 0;     // seconds since the start of training
  std::vector<std::pair<std::string, double>> extra;

  // The value of extra field `name`, or NaN when the record has none.
  double get(const std::string &name) const;
};

// The JSON line for `record`, without the trailing newline.
std::string formatRecord(const Record &record);

class MetricsLog {
public:
  // Opens `path` for appending (a resumed run continues its log), or truncates it first when
  // `truncate` is set. Throws std::runtime_error "PATH: error: cannot open file: REASON".
  explicit MetricsLog(const std::string &path, bool truncate = false);
  ~MetricsLog();
  MetricsLog(const MetricsLog &) = delete;
  MetricsLog &operator=(const MetricsLog &) = delete;

  // Appends one line and flushes it. Throws std::runtime_error if the write fails.
  void write(const Record &record);
  // Convenience form of write().
  void write(int64_t step, double loss, double lr, double gradNorm, double time,
             const std::vector<std::pair<std::string, double>> &extra = {});

  const std::string &path() const { return path_; }

private:
  std::string path_;
  std::FILE *file_ = nullptr;
};

// Reads a log written by MetricsLog. Blank lines are skipped; fields other than the fixed five
// go to Record::extra and null reads as NaN. A malformed *last* line is skipped (a run killed in
// the middle of a write); any other malformed line, or a missing file, throws
// std::runtime_error ("PATH:LINE: error: ...").
std::vector<Record> readMetrics(const std::string &path);

} // namespace attn::train

#endif // ATTN_TRAIN_METRICSLOG_H
