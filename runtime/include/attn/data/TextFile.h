// Plain-text datasets: one example per line, whitespace-separated numbers.
#ifndef ATTN_DATA_TEXTFILE_H
#define ATTN_DATA_TEXTFILE_H

#include "attn/Tensor.h"

#include <cstdint>
#include <string>
#include <vector>

namespace attn::data {

// Reads `path` into an f32 tensor [examples, width]. Format: each non-blank line holds exactly
// `width` floats separated by spaces, tabs or commas; '#' starts a comment that runs to the end of
// the line; lines that are blank after removing comments are skipped. Errors (std::runtime_error)
// use compiler style, with 1-based line numbers:
//   "data.txt:3: error: expected 16 numbers, got 3"
//   "data.txt:5: error: expected a number, got 'abc'"
//   "data.txt: error: cannot open file: No such file or directory"
//   "data.txt: error: no examples"
Tensor readNumbers(const std::string &path, int64_t width);

// Reads one time series from `path`, in file order: one value per line, or the first field of
// each line of a CSV file (fields separated by commas; later fields, such as dates, are
// ignored: the value must come first). A first line
// whose first field is not a number is a header and skipped; '#' comments and blank lines are
// skipped. Errors as readNumbers's ("series.csv:7: error: expected a number, got 'n/a'",
// "series.csv: error: no values").
std::vector<float> readSeries(const std::string &path);

} // namespace attn::data

#endif // ATTN_DATA_TEXTFILE_H
