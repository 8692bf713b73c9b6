#include "attn/train/MetricsLog.h"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <unistd.h>

using namespace attn::train;

namespace {

std::string tempPath(const std::string &name) {
  return ::testing::TempDir() + "attn_train_" + std::to_string(getpid()) + "_" + name;
}

std::string slurp(const std::string &path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void spit(const std::string &path, const std::string &text) { std::ofstream(path) << text; }

} // namespace

TEST(MetricsLog, FormatsTheDocumentedLine) {
  Record r{10, 0.5, 0.001, 1.2, 3.25, {{"valid_loss", 0.61}}};
  EXPECT_EQ(formatRecord(r), "{\"step\": 10, \"loss\": 0.5, \"lr\": 0.001, \"grad_norm\": 1.2, "
                             "\"time\": 3.25, \"valid_loss\": 0.61}");
  Record bad{1, NAN, std::numeric_limits<double>::infinity(), -INFINITY, 1e-05, {}};
  EXPECT_EQ(formatRecord(bad),
            "{\"step\": 1, \"loss\": null, \"lr\": null, \"grad_norm\": null, \"time\": 1e-05}");
}

TEST(MetricsLog, RoundTripsIncludingNaN) {
  std::string path = tempPath("metrics.jsonl");
  double loss = 0.123456789012345;
  {
    MetricsLog log(path, /*truncate=*/true);
    log.write(1, loss, 1e-3, 2.5, 0.01);
    log.write(2, NAN, 3e-4, INFINITY, 0.02, {{"valid_loss", 0.75}, {"acc", 0.5}});
    // Flushed per line: the file is complete before the log is closed.
    EXPECT_EQ(readMetrics(path).size(), 2u);
  }
  std::vector<Record> rs = readMetrics(path);
  ASSERT_EQ(rs.size(), 2u);
  EXPECT_EQ(rs[0].step, 1);
  EXPECT_NEAR(rs[0].loss, loss, loss * 1e-8); // 9 significant digits
  EXPECT_DOUBLE_EQ(rs[0].lr, 1e-3);
  EXPECT_DOUBLE_EQ(rs[0].gradNorm, 2.5);
  EXPECT_DOUBLE_EQ(rs[0].time, 0.01);
  EXPECT_TRUE(rs[0].extra.empty());
  EXPECT_TRUE(std::isnan(rs[1].loss));
  EXPECT_TRUE(std::isnan(rs[1].gradNorm)); // Inf is written as null too
  ASSERT_EQ(rs[1].extra.size(), 2u);
  EXPECT_EQ(rs[1].extra[0].first, "valid_loss");
  EXPECT_DOUBLE_EQ(rs[1].get("valid_loss"), 0.75);
  EXPECT_DOUBLE_EQ(rs[1].get("acc"), 0.5);
  EXPECT_TRUE(std::isnan(rs[1].get("missing")));
  EXPECT_NE(slurp(path).find("\"loss\": null"), std::string::npos);

  // A float survives exactly (what the training loop logs).
  float f = 0.3f;
  {
    MetricsLog log(path, true);
    log.write(7, f, f, f, f);
  }
  EXPECT_EQ(static_cast<float>(readMetrics(path)[0].loss), f);
  std::remove(path.c_str());
}

TEST(MetricsLog, AppendsByDefault) {
  std::string path = tempPath("append.jsonl");
  MetricsLog(path, true).write(1, 1, 1, 1, 1);
  MetricsLog(path).write(2, 1, 1, 1, 1);
  std::vector<Record> rs = readMetrics(path);
  ASSERT_EQ(rs.size(), 2u);
  EXPECT_EQ(rs[1].step, 2);
  std::remove(path.c_str());
}

TEST(MetricsLog, SkipsATornLastLine) {
  std::string path = tempPath("torn.jsonl");
  spit(path, "{\"step\": 1, \"loss\": 0.5, \"lr\": 0.1, \"grad_norm\": 1, \"time\": 0.5}\n"
             "\n"
             "{\"step\": 2, \"loss\": 0.4, \"lr\": 0.1, \"grad_n");
  std::vector<Record> rs = readMetrics(path);
  ASSERT_EQ(rs.size(), 1u);
  EXPECT_DOUBLE_EQ(rs[0].loss, 0.5);
  std::remove(path.c_str());
}

TEST(MetricsLog, MalformedMiddleLineThrows) {
  std::string path = tempPath("bad.jsonl");
  spit(path, "{\"step\": 1, \"loss\": 0.5}\n{\"step\": x}\n{\"step\": 3, \"loss\": 0.5}\n");
  try {
    readMetrics(path);
    FAIL() << "expected std::runtime_error";
  } catch (const std::runtime_error &e) {
    EXPECT_NE(std::string(e.what()).find("bad.jsonl:2: error:"), std::string::npos) << e.what();
  }
  std::remove(path.c_str());
  EXPECT_THROW(readMetrics(path), std::runtime_error); // missing file
}

TEST(MetricsLog, EscapesFieldNames) {
  std::string path = tempPath("escape.jsonl");
  MetricsLog(path, true).write(1, 1, 1, 1, 1, {{"we\"ird\\name\t", 2}});
  std::vector<Record> rs = readMetrics(path);
  ASSERT_EQ(rs.size(), 1u);
  EXPECT_DOUBLE_EQ(rs[0].get("we\"ird\\name\t"), 2);
  std::remove(path.c_str());
}

TEST(MetricsLog, CannotOpen) {
  EXPECT_THROW(MetricsLog("/nonexistent-dir/x/metrics.jsonl"), std::runtime_error);
}
