#include "attn/train/Progress.h"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

using namespace attn::train;

namespace {

// Everything written to `f` so far.
std::string contents(std::FILE *f) {
  std::fflush(f);
  long size = std::ftell(f);
  std::rewind(f);
  std::string s(static_cast<size_t>(size), '\0');
  size_t n = std::fread(s.data(), 1, s.size(), f);
  s.resize(n);
  std::fseek(f, 0, SEEK_END);
  return s;
}

struct FakeClock {
  double now = 100.0;
  std::function<double()> fn() {
    return [this] { return now; };
  }
};

} // namespace

TEST(Progress, FormatDuration) {
  EXPECT_EQ(formatDuration(0), "0s");
  EXPECT_EQ(formatDuration(45), "45s");
  EXPECT_EQ(formatDuration(45.4), "45s");
  EXPECT_EQ(formatDuration(59.6), "1m00s"); // rounds first
  EXPECT_EQ(formatDuration(234), "3m54s");
  EXPECT_EQ(formatDuration(3599), "59m59s");
  EXPECT_EQ(formatDuration(3600), "1h00m");
  EXPECT_EQ(formatDuration(3720), "1h02m");
  EXPECT_EQ(formatDuration(3779), "1h02m"); // hours drop the seconds
  EXPECT_EQ(formatDuration(100 * 3600.0), "100h00m");
  EXPECT_EQ(formatDuration(-1), "--");
  EXPECT_EQ(formatDuration(NAN), "--");
  EXPECT_EQ(formatDuration(INFINITY), "--");
}

TEST(Progress, FormatLine) {
  // 2880 steps left at 12.3 steps/s = 234.1 s.
  EXPECT_EQ(formatProgressLine(120, 3000, 0.4321, 12.3),
            "step 120/3000  loss 0.4321  12.3 steps/s  ETA 3m54s");
  EXPECT_EQ(formatProgressLine(1, 10, 1.5, 0), "step 1/10  loss 1.5  -- steps/s  ETA --");
  EXPECT_EQ(formatProgressLine(1, 10, NAN, 1), "step 1/10  loss nan  1 steps/s  ETA 9s");
}

TEST(Progress, PlainModePrintsEveryNSteps) {
  std::FILE *f = std::tmpfile();
  ASSERT_NE(f, nullptr);
  FakeClock clock;
  {
    ProgressOptions opts;
    opts.every = 4;
    opts.clock = clock.fn();
    Progress p(f, 10, opts);
    EXPECT_FALSE(p.isTerminal()); // a tmpfile is not a terminal
    for (int step = 1; step <= 10; ++step) {
      clock.now += 0.5; // 2 steps/s
      p.update(step, 1.0 / step);
    }
    p.finish();
  }
  EXPECT_EQ(contents(f), "step 4/10  loss 0.25  2 steps/s  ETA 3s\n"
                         "step 8/10  loss 0.125  2 steps/s  ETA 1s\n"
                         "step 10/10  loss 0.1  2 steps/s  ETA 0s\n");
  std::fclose(f);
}

TEST(Progress, PlainModeFinishPrintsAnEarlyStop) {
  std::FILE *f = std::tmpfile();
  FakeClock clock;
  {
    ProgressOptions opts;
    opts.every = 5;
    opts.clock = clock.fn();
    Progress p(f, 100, opts);
    for (int step = 1; step <= 7; ++step) {
      clock.now += 1;
      p.update(step, 2.0);
    }
    // The destructor finishes: the last update (step 7) was not printed yet.
  }
  EXPECT_EQ(contents(f), "step 5/100  loss 2  1 steps/s  ETA 1m35s\n"
                         "step 7/100  loss 2  1 steps/s  ETA 1m33s\n");
  std::fclose(f);
}

TEST(Progress, ResumedRunCountsOnlyItsOwnSteps) {
  std::FILE *f = std::tmpfile();
  FakeClock clock;
  ProgressOptions opts;
  opts.every = 1;
  opts.clock = clock.fn();
  opts.startStep = 500;
  Progress p(f, 1000, opts);
  clock.now += 10;
  p.update(510, 0.5); // 10 steps in 10 s, not 510
  EXPECT_EQ(contents(f), "step 510/1000  loss 0.5  1 steps/s  ETA 8m10s\n");
  p.finish();
  std::fclose(f);
}

TEST(Progress, TerminalModeRedrawsThrottled) {
  std::FILE *f = std::tmpfile();
  FakeClock clock;
  {
    ProgressOptions opts;
    opts.terminal = true;
    opts.clock = clock.fn();
    Progress p(f, 100, opts);
    EXPECT_TRUE(p.isTerminal());
    for (int step = 1; step <= 100; ++step) {
      clock.now += 0.01; // 100 steps/s: a redraw every 10 steps at most
      p.update(step, step == 1 ? 10.0 : 1.0);
    }
    p.finish();
  }
  std::string out = contents(f);
  size_t redraws = 0;
  for (char c : out)
    redraws += c == '\r';
  EXPECT_GE(redraws, 9u);
  EXPECT_LE(redraws, 12u); // 1 s of training, ~10 per second (+ first and last)
  EXPECT_EQ(out.find('\n'), out.size() - 1) << out; // one line, ended by finish()
  EXPECT_NE(out.find("\rstep 100/100  loss 1  100 steps/s  ETA 0s"), std::string::npos) << out;
  std::fclose(f);
}

TEST(Progress, TerminalModePadsOverALongerLine) {
  std::FILE *f = std::tmpfile();
  FakeClock clock;
  ProgressOptions opts;
  opts.terminal = true;
  opts.clock = clock.fn();
  opts.redrawInterval = 0; // draw every update
  Progress p(f, 10, opts);
  clock.now += 1;
  p.update(1, 123.5);
  clock.now += 1;
  p.update(2, 1);
  p.finish();
  std::string first = "step 1/10  loss 123.5  1 steps/s  ETA 9s";
  std::string second = "step 2/10  loss 1  1 steps/s  ETA 8s";
  std::string pad(first.size() - second.size(), ' ');
  EXPECT_EQ(contents(f), "\r" + first + "\r" + second + pad + "\n");
  std::fclose(f);
}

// A rank under mpirun writes to the pseudo-terminal Open MPI gives it, wherever mpirun's own
// output goes: redrawn lines ran together in a piped log. Ranks print plain lines.
TEST(Progress, RanksUnderMpirunPrintPlainLines) {
  for (const char *launched : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK"})
    ASSERT_EQ(std::getenv(launched), nullptr) << "the test runs outside mpirun";
  int master = posix_openpt(O_RDWR | O_NOCTTY);
  ASSERT_GE(master, 0);
  ASSERT_EQ(grantpt(master), 0);
  ASSERT_EQ(unlockpt(master), 0);
  int pty = open(ptsname(master), O_RDWR | O_NOCTTY);
  ASSERT_GE(pty, 0);
  EXPECT_TRUE(redrawsInPlace(pty));
  setenv("OMPI_COMM_WORLD_SIZE", "2", 1);
  EXPECT_FALSE(redrawsInPlace(pty));
  unsetenv("OMPI_COMM_WORLD_SIZE");
  setenv("PMIX_RANK", "0", 1);
  EXPECT_FALSE(redrawsInPlace(pty));
  unsetenv("PMIX_RANK");
  EXPECT_TRUE(redrawsInPlace(pty));
  EXPECT_FALSE(redrawsInPlace(fileno(std::tmpfile()))); // a plain file
  close(pty);
  close(master);
}
