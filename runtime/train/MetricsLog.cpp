#include "attn/train/MetricsLog.h"

#include <nlohmann/json.hpp>

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

void appendField(std::string &out, const std::string &name, double v) {
  out += ", ";
  out += nlohmann::json(name).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  out += ": ";
  appendNumber(out, v);
}

// A record from one line: a JSON object with an integer "step" and numbers (or null, read as
// NaN) for the other fields; false for anything else (a torn last line, say).
bool parseRecord(const std::string &line, Record &rec) {
  nlohmann::ordered_json j = nlohmann::ordered_json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object())
    return false;
  rec = Record{};
  rec.loss = rec.lr = rec.gradNorm = rec.time = kNaN; // fields absent from the line read as NaN
  bool haveStep = false;
  for (const auto &field : j.items()) {
    const std::string &key = field.key();
    const auto &value = field.value();
    if (key == "step") {
      if (!value.is_number_integer())
        return false;
      rec.step = value.get<int64_t>();
      haveStep = true;
      continue;
    }
    if (!value.is_number() && !value.is_null())
      return false;
    double v = value.is_null() ? kNaN : value.get<double>();
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
  return haveStep;
}

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
    if (parseRecord(line, rec))
      records.push_back(std::move(rec));
    else
      badLine = lineNo;
  }
  return records;
}

} // namespace attn::train
