#include "attn/Numbers.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <stdexcept>

namespace attn {

namespace {

[[noreturn]] void invalid(const std::string &what, const std::string &expected,
                          const std::string &text) {
  throw std::invalid_argument(what + " must be " + expected + ", got '" + text + "'");
}

std::string number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.10g", v);
  return buf;
}

} // namespace

int64_t parseInt(const std::string &text, int64_t min, int64_t max, const std::string &what) {
  std::string expected = "an integer from " + std::to_string(min) + " to " + std::to_string(max);
  int64_t v = 0;
  const char *end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, v);
  if (text.empty() || ec != std::errc() || ptr != end || v < min || v > max)
    invalid(what, expected, text);
  return v;
}

uint64_t parseUnsigned(const std::string &text, const std::string &what) {
  uint64_t v = 0;
  const char *end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, v);
  if (text.empty() || ec != std::errc() || ptr != end)
    invalid(what, "an integer from 0 to 18446744073709551615", text);
  return v;
}

double parseFinite(const std::string &text, double min, double max, const std::string &what) {
  double v = 0;
  const char *end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, v);
  if (text.empty() || ec != std::errc() || ptr != end || !std::isfinite(v) || v < min || v > max)
    invalid(what, "a finite number from " + number(min) + " to " + number(max), text);
  return v;
}

std::string exactText(double value) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.17g", value);
  return buf;
}

} // namespace attn
