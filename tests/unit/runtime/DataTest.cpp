// The builtin sine dataset and text-file reader.
#include "attn/Random.h"
#include "attn/data/Sine.h"
#include "attn/data/TextFile.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <stdexcept>
#include <string>

namespace {

TEST(Sine, MatchesFormula) {
  const int64_t window = 16, count = 5;
  attn::data::Examples ex = attn::data::makeSine(window, count, 123);
  ASSERT_EQ(ex.x.shape(), (std::vector<int64_t>{count, window}));
  ASSERT_EQ(ex.y.shape(), (std::vector<int64_t>{count, 1}));
  attn::Rng rng(123);
  for (int64_t i = 0; i < count; ++i) {
    double phi = 2 * M_PI * rng.nextDouble();
    ASSERT_GE(phi, 0);
    ASSERT_LT(phi, 2 * M_PI);
    for (int64_t t = 0; t < window; ++t)
      EXPECT_NEAR(ex.x.data<float>()[i * window + t], std::sin(phi + 0.1 * t), 1e-6);
    EXPECT_NEAR(ex.y.data<float>()[i], std::sin(phi + 0.1 * window), 1e-6);
  }
  // Deterministic per seed, different across seeds.
  attn::data::Examples again = attn::data::makeSine(window, count, 123);
  attn::data::Examples other = attn::data::makeSine(window, count, 124);
  EXPECT_EQ(again.x.data<float>()[0], ex.x.data<float>()[0]);
  EXPECT_NE(other.x.data<float>()[0], ex.x.data<float>()[0]);
}

// With a horizon, the targets continue the same wave; horizon 1 is the one-step data exactly.
TEST(Sine, HorizonContinuesTheWave) {
  const int64_t window = 6, count = 4, horizon = 5;
  attn::data::Examples one = attn::data::makeSine(window, count, 9);
  attn::data::Examples many = attn::data::makeSine(window, count, 9, horizon);
  ASSERT_EQ(many.y.shape(), (std::vector<int64_t>{count, horizon}));
  attn::Rng rng(9);
  for (int64_t i = 0; i < count; ++i) {
    double phi = 2 * M_PI * rng.nextDouble();
    EXPECT_EQ(many.y.data<float>()[i * horizon], one.y.data<float>()[i]);
    for (int64_t k = 0; k < horizon; ++k)
      EXPECT_NEAR(many.y.data<float>()[i * horizon + k], std::sin(phi + 0.1 * (window + k)), 1e-6);
  }
  EXPECT_THROW(attn::data::makeSine(window, count, 9, 0), std::runtime_error);
}

// The noisy mixture: the documented generator, drawn in order, and its noise level (the
// residual from the noise-free mixture has a standard deviation of about 0.05).
TEST(Sines, MatchesFormulaAndNoiseLevel) {
  const int64_t window = 40, horizon = 8, count = 50;
  attn::data::Examples ex = attn::data::makeSines(window, horizon, count, 4);
  ASSERT_EQ(ex.x.shape(), (std::vector<int64_t>{count, window}));
  ASSERT_EQ(ex.y.shape(), (std::vector<int64_t>{count, horizon}));
  attn::Rng rng(4);
  auto uniform = [&](double lo, double hi) { return lo + (hi - lo) * rng.nextDouble(); };
  double squares = 0;
  for (int64_t i = 0; i < count; ++i) {
    double a[3], w[3], phi[3];
    for (int c = 0; c < 3; ++c) {
      a[c] = uniform(0.2, 0.6);
      w[c] = uniform(0.05, 0.35);
      phi[c] = uniform(0.0, 2 * M_PI);
    }
    for (int64_t t = 0; t < window + horizon; ++t) {
      double clean = 0;
      for (int c = 0; c < 3; ++c)
        clean += a[c] * std::sin(w[c] * t + phi[c]);
      double value = t < window ? ex.x.data<float>()[i * window + t]
                                : ex.y.data<float>()[i * horizon + t - window];
      double u = 1.0 - rng.nextDouble(), v = rng.nextDouble();
      EXPECT_NEAR(value, clean + 0.05 * std::sqrt(-2 * std::log(u)) * std::cos(2 * M_PI * v), 1e-6);
      squares += (value - clean) * (value - clean);
    }
  }
  double sd = std::sqrt(squares / (count * (window + horizon)));
  EXPECT_GT(sd, 0.045);
  EXPECT_LT(sd, 0.055);
  attn::data::Examples other = attn::data::makeSines(window, horizon, count, 5);
  EXPECT_NE(other.x.data<float>()[0], ex.x.data<float>()[0]);
}

// One vector, one wave: the documented features and samples.
TEST(Wave, MatchesFormula) {
  const int64_t horizon = 7, count = 6;
  attn::data::Examples ex = attn::data::makeWave(horizon, count, 2);
  ASSERT_EQ(ex.x.shape(), (std::vector<int64_t>{count, attn::data::kWaveFeatures}));
  ASSERT_EQ(ex.y.shape(), (std::vector<int64_t>{count, horizon}));
  attn::Rng rng(2);
  for (int64_t i = 0; i < count; ++i) {
    double a = 0.5 + 0.5 * rng.nextDouble(), w = 0.1 + 0.4 * rng.nextDouble();
    double phi = 2 * M_PI * rng.nextDouble();
    const float *x = ex.x.data<float>() + i * 4;
    EXPECT_NEAR(x[0], a, 1e-6);
    EXPECT_NEAR(x[1], w, 1e-6);
    EXPECT_NEAR(x[2], std::cos(phi), 1e-6);
    EXPECT_NEAR(x[3], std::sin(phi), 1e-6);
    for (int64_t t = 0; t < horizon; ++t)
      EXPECT_NEAR(ex.y.data<float>()[i * horizon + t], a * std::sin(w * t + phi), 1e-6);
  }
  EXPECT_THROW(attn::data::makeWave(0, count, 2), std::runtime_error);
}

// A temporary file that removes itself.
struct TempFile {
  std::string path;
  explicit TempFile(const std::string &contents) {
    path = ::testing::TempDir() + "attn_text_" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".txt";
    std::ofstream(path) << contents;
  }
  ~TempFile() { std::remove(path.c_str()); }
};

std::string errorOf(const std::string &path, int64_t width) {
  try {
    attn::data::readNumbers(path, width);
  } catch (const std::runtime_error &e) {
    return e.what();
  }
  return "<no error>";
}

TEST(TextFile, ReadsExamples) {
  TempFile f("# header comment\n"
             "1 2 3\n"
             "\n"
             "   \t\n"
             "4.5\t-5e-1  6  # trailing comment\n"
             "7 8 9");
  attn::Tensor t = attn::data::readNumbers(f.path, 3);
  ASSERT_EQ(t.shape(), (std::vector<int64_t>{3, 3}));
  const float want[] = {1, 2, 3, 4.5f, -0.5f, 6, 7, 8, 9};
  for (int i = 0; i < 9; ++i)
    EXPECT_EQ(t.data<float>()[i], want[i]);
}

TEST(TextFile, WrongCount) {
  TempFile f("1 2 3 4\n\n1 2 3\n");
  EXPECT_EQ(errorOf(f.path, 4), f.path + ":3: error: expected 4 numbers, got 3");
}

TEST(TextFile, NotANumber) {
  TempFile f("1 2\n3 abc\n");
  EXPECT_EQ(errorOf(f.path, 2), f.path + ":2: error: expected a number, got 'abc'");
  TempFile g("1 2x\n");
  EXPECT_EQ(errorOf(g.path, 2), g.path + ":1: error: expected a number, got '2x'");
}

TEST(TextFile, MissingFile) {
  std::string path = ::testing::TempDir() + "attn_does_not_exist.txt";
  EXPECT_EQ(errorOf(path, 2), path + ": error: cannot open file: No such file or directory");
}

TEST(TextFile, EmptyFile) {
  TempFile f("# only a comment\n\n");
  EXPECT_EQ(errorOf(f.path, 2), f.path + ": error: no examples");
}

std::string seriesErrorOf(const std::string &path) {
  try {
    attn::data::readSeries(path);
  } catch (const std::runtime_error &e) {
    return e.what();
  }
  return "";
}

// A series: one value per line or a CSV's first field, a header skipped, comments and blank
// lines too; anything else that is not a number is an error at its line.
TEST(TextFile, ReadsASeries) {
  TempFile plain("1.5\n-2\n\n# note\n3e-1\n");
  EXPECT_EQ(attn::data::readSeries(plain.path), (std::vector<float>{1.5f, -2.0f, 0.3f}));
  TempFile csv("value,date\n4,2026-01-01\n5, 2026-01-02\n");
  EXPECT_EQ(attn::data::readSeries(csv.path), (std::vector<float>{4.0f, 5.0f}));
  TempFile bad("value\n1\nn/a\n");
  EXPECT_EQ(seriesErrorOf(bad.path), bad.path + ":3: error: expected a number, got 'n/a'");
  TempFile two("0\n1 2\n");
  EXPECT_EQ(seriesErrorOf(two.path), two.path + ":2: error: expected a number, got '1 2'");
  TempFile inf("inf\n1\n");
  EXPECT_EQ(seriesErrorOf(inf.path), inf.path + ":1: error: expected a finite number, got 'inf'");
  TempFile empty("value\n");
  EXPECT_EQ(seriesErrorOf(empty.path), empty.path + ": error: no values");
}

} // namespace
