// What the end-to-end tests share: attnc run as a user runs it (a subprocess), and a fresh
// scratch directory per test.
#pragma once

#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <regex>
#include <sstream>
#include <string>

namespace e2e {

// "exact match 99.2%" in attnc's report (train, eval) -> 99.2; NaN when absent.
inline double exactMatch(const std::string &out) {
  std::smatch m;
  if (!std::regex_search(out, m, std::regex("exact match ([0-9.]+)%")))
    return NAN;
  return std::stod(m[1]);
}

// A fresh directory for one test's runs, under the build tree.
inline std::string scratch(const std::string &group, const std::string &name) {
  std::string dir = std::string(ATTN_E2E_DIR) + "/" + group + "/" + name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

// Runs `command` through the shell; returns its exit status and appends its output (stdout
// and stderr) to `out`.
inline int shell(const std::string &command, std::string *out = nullptr) {
  std::string cmd = command + " 2>&1";
  FILE *pipe = popen(cmd.c_str(), "r");
  std::string text;
  char buf[4096];
  while (size_t n = fread(buf, 1, sizeof buf, pipe))
    text.append(buf, n);
  int status = pclose(pipe);
  if (out)
    *out += text;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// Runs `attnc args` through the shell (so args may redirect stdin), as shell() does.
inline int attnc(const std::string &args, std::string *out = nullptr) {
  return shell(std::string(ATTNC) + " " + args, out);
}

// The same with `input` on stdin (through a file in `dir`, named after this process: tests
// of one binary may run at once).
inline int attncWithInput(const std::string &args, const std::string &input,
                          const std::string &dir, std::string *out = nullptr) {
  std::string file = dir + "/stdin-" + std::to_string(getpid()) + ".txt";
  std::FILE *f = std::fopen(file.c_str(), "w");
  std::fputs(input.c_str(), f);
  std::fclose(f);
  return attnc(args + " < " + file, out);
}

// `count` dates between 1950 and 2029, one per line, in the formats the builtin dates data
// writes (its held-out-like inputs: a decoder's outputs on them are compared, not graded).
inline std::string datesInputs(int count) {
  static const char *kFormats[] = {"%d %B %Y",  "%m/%d/%y", "%A, %B %d %Y", "%b %d, %Y",
                                   "%B %d, %Y", "%d.%m.%y", "%a, %d %b %Y", "%d %b %Y"};
  std::string lines;
  for (int i = 0; i < count; ++i) {
    std::tm day{};
    day.tm_year = 50 + (i * 7919) % 80, day.tm_mon = (i * 31) % 12, day.tm_mday = 1 + (i * 13) % 28;
    day.tm_hour = 12;
    std::mktime(&day); // fills in the weekday
    char buf[64];
    std::strftime(buf, sizeof buf, kFormats[i % 8], &day);
    lines += std::string(buf) + "\n";
  }
  return lines;
}

// The share of lines of `a` equal to the same line of `b` (1 when both are empty).
inline double sameLines(const std::string &a, const std::string &b) {
  std::istringstream x(a), y(b);
  std::string l, r;
  int same = 0, total = 0;
  while (std::getline(x, l)) {
    ++total;
    same += std::getline(y, r) && l == r;
  }
  return total ? double(same) / total : 1.0;
}

// A checkpoint decoded in f32 and in `precision` (docs/precision.md's decoding gates): eval's
// reports and the translations of `inputs` (written to a file in `dir`) each way. `refused`:
// this CPU lacks the instructions (the run is to be skipped); else `rc` is the first failing
// command's status and `log` its output.
struct Decodings {
  bool refused = false;
  int rc = 0;
  std::string log, f32Eval, eval, f32, translated;
};
inline Decodings decodeBothWays(const std::string &dir, const std::string &precision,
                                const std::string &inputs) {
  Decodings d;
  std::string flag = " --precision " + precision;
  struct Run {
    std::string args, *out;
    bool input;
  };
  for (const Run &run : {Run{"eval --ckpt " + dir, &d.f32Eval, false},
                         Run{"eval --ckpt " + dir + flag, &d.eval, false},
                         Run{"translate --ckpt " + dir, &d.f32, true},
                         Run{"translate --ckpt " + dir + flag, &d.translated, true}}) {
    d.rc = run.input ? attncWithInput(run.args, inputs, dir, run.out) : attnc(run.args, run.out);
    if (d.rc != 0) {
      d.refused = run.out->find(" instructions (avx512") != std::string::npos;
      d.log = run.args + ":\n" + *run.out;
      break;
    }
  }
  return d;
}

// The decoding gate itself: `precision`'s exact match within 1 point of f32's, and the same
// tokens on >= 98% of the translated lines.
inline void expectTheF32Decoding(const Decodings &d) {
  EXPECT_NEAR(exactMatch(d.eval), exactMatch(d.f32Eval), 1.0) << d.f32Eval << d.eval;
  EXPECT_GE(sameLines(d.translated, d.f32), 0.98) << "translated:\n"
                                                  << d.translated << "f32:\n"
                                                  << d.f32;
}

} // namespace e2e
