#include "attn/data/TextFile.h"

#include "attn/File.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <vector>

namespace attn::data {

namespace {

[[noreturn]] void error(const std::string &path, int64_t line, const std::string &msg) {
  std::string where = path + (line > 0 ? ":" + std::to_string(line) : std::string());
  throw std::runtime_error(where + ": error: " + msg);
}

// Parses a whole token as a float; false if anything is left over or the value overflows.
bool parseFloat(const std::string &token, float &out) {
  const char *begin = token.c_str();
  char *end = nullptr;
  errno = 0;
  float v = std::strtof(begin, &end);
  if (end == begin || *end != '\0')
    return false;
  // ERANGE with a finite result is underflow (a denormal/zero): acceptable. Overflow is not.
  if (errno == ERANGE && std::isinf(v))
    return false;
  out = v;
  return true;
}

// `path` opened for reading, after checking it is a regular file of a sane size.
std::ifstream openDataFile(const std::string &path, const char *what) {
  checkRegularFile(path, kMaxDataFileBytes, what);
  std::ifstream in(path);
  if (!in)
    error(path, 0, std::string("cannot open file: ") + std::strerror(errno));
  return in;
}

// The line without its '#' comment.
void stripComment(std::string &line) {
  if (size_t hash = line.find('#'); hash != std::string::npos)
    line.erase(hash);
}

} // namespace

Tensor readNumbers(const std::string &path, int64_t width) {
  if (width < 1)
    error(path, 0, "width must be at least 1, got " + std::to_string(width));
  std::ifstream in = openDataFile(path, "input file");
  std::vector<float> values;
  std::string line;
  int64_t lineNo = 0;
  while (std::getline(in, line)) {
    ++lineNo;
    stripComment(line);
    std::replace(line.begin(), line.end(), ',', ' '); // CSV lines read like spaced ones
    std::istringstream tokens(line);
    std::string token;
    int64_t count = 0;
    while (tokens >> token) {
      float v;
      if (!parseFloat(token, v))
        error(path, lineNo, "expected a number, got '" + token + "'");
      values.push_back(v);
      ++count;
    }
    if (count == 0)
      continue; // blank or comment-only line
    if (count != width)
      error(path, lineNo,
            "expected " + std::to_string(width) + " numbers, got " + std::to_string(count));
  }
  if (in.bad())
    error(path, 0, "read error");
  if (values.empty())
    error(path, 0, "no examples");
  int64_t rows = static_cast<int64_t>(values.size()) / width;
  return Tensor::f32({rows, width}, values);
}

std::vector<float> readSeries(const std::string &path) {
  std::ifstream in = openDataFile(path, "series file");
  std::vector<float> values;
  std::string line;
  int64_t lineNo = 0;
  bool first = true;
  while (std::getline(in, line)) {
    ++lineNo;
    stripComment(line);
    std::string field = line.substr(0, line.find(','));
    std::istringstream tokens(field);
    std::string token, extra;
    if (!(tokens >> token))
      continue; // blank or comment-only line
    float v;
    bool number = parseFloat(token, v) && !(tokens >> extra);
    if (!number && first && values.empty()) { // a header: "value", "value,date", ...
      first = false;
      continue;
    }
    first = false;
    if (!number)
      error(path, lineNo, "expected a number, got '" + field + "'");
    if (!std::isfinite(v))
      error(path, lineNo, "expected a finite number, got '" + token + "'");
    values.push_back(v);
  }
  if (in.bad())
    error(path, 0, "read error");
  if (values.empty())
    error(path, 0, "no values");
  return values;
}

} // namespace attn::data
