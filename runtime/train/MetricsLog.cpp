#include "attn/train/MetricsLog.h"

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <optional>
#include <stdexcept>

namespace attn::train {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

[[noreturn]] void error(const std::string &path, int64_t line, const std::string &msg) {
  std::string where = path + (line > 0 ? ":" + std::to_string(line) : std::string());
  throw std::runtime_error(where + ": error: " + msg);
}

// %.9g without the locale: printf would write "0,5" under a German LC_NUMERIC.
void appendNumber(std::string &out, double v) {
  if (!std::isfinite(v)) {
    out += "null";
    return;
  }
  char buf[32];
  auto res = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::general, 9);
  out.append(buf, res.ptr);
}

void appendString(std::string &out, const std::string &s) {
  out += '"';
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  out += '"';
}

void appendField(std::string &out, const std::string &name, double v) {
  out += ", ";
  appendString(out, name);
  out += ": ";
  appendNumber(out, v);
}

// A parser for exactly the flat objects formatRecord writes: string keys, number or null values.
// Every method returns false (leaving the parser in an unspecified position) on malformed input.
class LineParser {
public:
  explicit LineParser(const std::string &line) : s_(line) {}

  bool parse(Record &rec) {
    rec = Record{};
    rec.loss = rec.lr = rec.gradNorm = rec.time = kNaN; // fields absent from the line read as NaN
    bool haveStep = false;
    if (!eat('{'))
      return false;
    bool first = true;
    while (!eat('}')) {
      if (!first && !eat(','))
        return false;
      first = false;
      std::string key;
      if (!parseString(key) || !eat(':'))
        return false;
      if (key == "step") {
        if (!parseInteger(rec.step))
          return false;
        haveStep = true;
        continue;
      }
      double v;
      if (!parseValue(v))
        return false;
      store(rec, key, v);
    }
    skipSpace();
    return haveStep && pos_ == s_.size();
  }

private:
  static void store(Record &rec, const std::string &key, double v) {
    if (key == "loss")
      rec.loss = v;
    else if (key == "lr")
      rec.lr = v;
    else if (key == "grad_norm")
      rec.gradNorm = v;
    else if (key == "time")
      rec.time = v;
    else
      rec.extra.emplace_back(key, v);
  }

  void skipSpace() {
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\r'))
      ++pos_;
  }

  bool eat(char c) {
    skipSpace();
    if (pos_ < s_.size() && s_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }

  bool parseString(std::string &out) {
    if (!eat('"'))
      return false;
    while (pos_ < s_.size()) {
      char c = s_[pos_++];
      if (c == '"')
        return true;
      if (c != '\\') {
        out += c;
        continue;
      }
      if (pos_ >= s_.size())
        return false;
      char e = s_[pos_++];
      if (e == 'u') { // only the \u00XX escapes appendString writes
        unsigned code = 0;
        if (pos_ + 4 > s_.size() ||
            std::from_chars(&s_[pos_], &s_[pos_] + 4, code, 16).ptr != &s_[pos_] + 4 || code > 0x7f)
          return false;
        out += static_cast<char>(code);
        pos_ += 4;
      } else if (e == '"' || e == '\\' || e == '/') {
        out += e;
      } else {
        return false;
      }
    }
    return false; // unterminated: the typical torn last line
  }

  bool parseInteger(int64_t &out) {
    skipSpace();
    const char *begin = s_.data() + pos_, *end = s_.data() + s_.size();
    auto res = std::from_chars(begin, end, out);
    if (res.ec != std::errc())
      return false;
    pos_ += static_cast<size_t>(res.ptr - begin);
    return true;
  }

  bool parseValue(double &out) {
    skipSpace();
    if (s_.compare(pos_, 4, "null") == 0) {
      pos_ += 4;
      out = kNaN;
      return true;
    }
    const char *begin = s_.data() + pos_, *end = s_.data() + s_.size();
    auto res = std::from_chars(begin, end, out);
    // Out-of-range values are not something MetricsLog writes; treat them as malformed too.
    if (res.ec != std::errc())
      return false;
    pos_ += static_cast<size_t>(res.ptr - begin);
    return true;
  }

  const std::string &s_;
  size_t pos_ = 0;
};

bool isBlank(const std::string &line) {
  return line.find_first_not_of(" \t\r") == std::string::npos;
}

} // namespace

double Record::get(const std::string &name) const {
  for (const auto &[key, value] : extra)
    if (key == name)
      return value;
  return kNaN;
}

std::string formatRecord(const Record &r) {
  std::string out = "{\"step\": " + std::to_string(r.step);
  appendField(out, "loss", r.loss);
  appendField(out, "lr", r.lr);
  appendField(out, "grad_norm", r.gradNorm);
  appendField(out, "time", r.time);
  for (const auto &[name, value] : r.extra)
    appendField(out, name, value);
  out += '}';
  return out;
}

MetricsLog::MetricsLog(const std::string &path, bool truncate) : path_(path) {
  file_ = std::fopen(path.c_str(), truncate ? "w" : "a");
  if (!file_)
    error(path, 0, std::string("cannot open file: ") + std::strerror(errno));
}

MetricsLog::~MetricsLog() {
  if (file_)
    std::fclose(file_);
}

void MetricsLog::write(const Record &record) {
  std::string line = formatRecord(record) + '\n';
  // Flush per line: the log must survive the process being killed between steps.
  if (std::fwrite(line.data(), 1, line.size(), file_) != line.size() || std::fflush(file_) != 0)
    error(path_, 0, std::string("cannot write metrics: ") + std::strerror(errno));
}

void MetricsLog::write(int64_t step, double loss, double lr, double gradNorm, double time,
                       const std::vector<std::pair<std::string, double>> &extra) {
  write(Record{step, loss, lr, gradNorm, time, extra});
}

std::vector<Record> readMetrics(const std::string &path) {
  std::ifstream in(path);
  if (!in)
    error(path, 0, std::string("cannot open file: ") + std::strerror(errno));
  std::vector<Record> records;
  std::string line;
  int64_t lineNo = 0;
  std::optional<int64_t> badLine; // a malformed line is an error only if another one follows it
  while (std::getline(in, line)) {
    ++lineNo;
    if (isBlank(line))
      continue;
    if (badLine)
      error(path, *badLine, "malformed metrics line");
    Record rec;
    if (LineParser(line).parse(rec))
      records.push_back(std::move(rec));
    else
      badLine = lineNo;
  }
  return records;
}

} // namespace attn::train
