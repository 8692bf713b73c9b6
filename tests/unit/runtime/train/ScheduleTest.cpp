#include "attn/train/Schedule.h"

#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>

using attn::train::learningRate;
using attn::train::ScheduleSpec;

namespace {

ScheduleSpec spec(const char *type, double lr, int64_t warmup = 0) {
  ScheduleSpec s;
  s.type = type;
  s.lr = lr;
  s.warmup = warmup;
  return s;
}

constexpr double kPi = 3.14159265358979323846;

} // namespace

TEST(Schedule, Constant) {
  ScheduleSpec s = spec("constant", 0.01, 100); // warmup is ignored by "constant"
  EXPECT_DOUBLE_EQ(learningRate(s, 1), 0.01);
  EXPECT_DOUBLE_EQ(learningRate(s, 1000000), 0.01);
}

TEST(Schedule, LinearWarmupBoundaries) {
  ScheduleSpec s = spec("linear_warmup", 0.1, 10);
  EXPECT_DOUBLE_EQ(learningRate(s, 1), 0.01);
  EXPECT_DOUBLE_EQ(learningRate(s, 5), 0.05);
  EXPECT_DOUBLE_EQ(learningRate(s, 10), 0.1); // reaches lr exactly at step == warmup
  EXPECT_DOUBLE_EQ(learningRate(s, 11), 0.1);
  EXPECT_DOUBLE_EQ(learningRate(s, 5000), 0.1);
  EXPECT_DOUBLE_EQ(learningRate(spec("linear_warmup", 0.1, 0), 1), 0.1); // no warm-up
}

TEST(Schedule, InverseSqrt) {
  ScheduleSpec s = spec("inverse_sqrt", 1e-3, 4000);
  EXPECT_DOUBLE_EQ(learningRate(s, 1), 1e-3 / 4000);
  EXPECT_DOUBLE_EQ(learningRate(s, 2000), 0.5e-3);
  EXPECT_DOUBLE_EQ(learningRate(s, 4000), 1e-3); // peak
  EXPECT_DOUBLE_EQ(learningRate(s, 4001), 1e-3 * std::sqrt(4000.0 / 4001.0));
  EXPECT_DOUBLE_EQ(learningRate(s, 16000), 0.5e-3); // sqrt(4000 / 16000) = 1/2
  // Without warm-up: lr / sqrt(step).
  EXPECT_DOUBLE_EQ(learningRate(spec("inverse_sqrt", 1.0), 1), 1.0);
  EXPECT_DOUBLE_EQ(learningRate(spec("inverse_sqrt", 1.0), 4), 0.5);
}

TEST(Schedule, Cosine) {
  ScheduleSpec s = spec("cosine", 1.0, 10);
  s.totalSteps = 110;
  s.minLr = 0.1;
  EXPECT_DOUBLE_EQ(learningRate(s, 1), 0.1);
  EXPECT_DOUBLE_EQ(learningRate(s, 10), 1.0);                     // end of warm-up
  EXPECT_DOUBLE_EQ(learningRate(s, 60), 0.1 + 0.9 * 0.5);         // half-way: cos(pi/2) = 0
  EXPECT_DOUBLE_EQ(learningRate(s, 35), 0.1 + 0.9 * 0.5 * (1 + std::cos(kPi * 0.25)));
  EXPECT_NEAR(learningRate(s, 110), 0.1, 1e-15);                  // reaches minLr at totalSteps
  EXPECT_DOUBLE_EQ(learningRate(s, 500), 0.1);                    // and stays there
  EXPECT_LT(learningRate(s, 11), 1.0);
  s.totalSteps = 10;
  EXPECT_THROW(learningRate(s, 1), std::invalid_argument);
}

TEST(Schedule, CosineWithoutWarmup) {
  ScheduleSpec s = spec("cosine", 2.0);
  s.totalSteps = 100;
  EXPECT_DOUBLE_EQ(learningRate(s, 50), 1.0);
  EXPECT_NEAR(learningRate(s, 100), 0.0, 1e-15);
}

TEST(Schedule, StepDecay) {
  ScheduleSpec s = spec("step", 1.0);
  s.gamma = 0.5;
  s.stepSize = 100;
  EXPECT_DOUBLE_EQ(learningRate(s, 1), 1.0);
  EXPECT_DOUBLE_EQ(learningRate(s, 99), 1.0);
  EXPECT_DOUBLE_EQ(learningRate(s, 100), 0.5); // floor(100 / 100) = 1
  EXPECT_DOUBLE_EQ(learningRate(s, 250), 0.25);
  s.stepSize = 0;
  EXPECT_THROW(learningRate(s, 1), std::invalid_argument);
}

TEST(Schedule, Errors) {
  try {
    learningRate(spec("exponential", 1.0), 1);
    FAIL() << "expected std::invalid_argument";
  } catch (const std::invalid_argument &e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("'exponential'"), std::string::npos) << msg;
    for (const char *type : {"constant", "inverse_sqrt", "cosine", "step", "linear_warmup"})
      EXPECT_NE(msg.find(type), std::string::npos) << msg;
  }
  EXPECT_THROW(learningRate(spec("constant", 1.0), 0), std::invalid_argument);
  EXPECT_THROW(learningRate(spec("linear_warmup", 1.0, -1), 1), std::invalid_argument);
}
