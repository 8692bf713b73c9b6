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

} // namespace
