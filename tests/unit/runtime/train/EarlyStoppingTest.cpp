#include "attn/train/EarlyStopping.h"

#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>

using attn::train::EarlyStopping;

TEST(EarlyStopping, StopsAfterPatienceWithoutImprovement) {
  EarlyStopping es(2);
  EXPECT_FALSE(es.shouldStop());
  EXPECT_TRUE(es.update(1.0)); // the first loss always improves on +inf
  EXPECT_TRUE(es.update(0.8));
  EXPECT_FALSE(es.update(0.9));
  EXPECT_FALSE(es.shouldStop());
  EXPECT_TRUE(es.update(0.7)); // an improvement resets the count
  EXPECT_EQ(es.badEvaluations(), 0);
  EXPECT_FALSE(es.update(0.7)); // equal is not better
  EXPECT_FALSE(es.update(0.75));
  EXPECT_TRUE(es.shouldStop());
  EXPECT_DOUBLE_EQ(es.best(), 0.7);
}

TEST(EarlyStopping, MinDelta) {
  EarlyStopping es(1, 0.1);
  EXPECT_TRUE(es.update(1.0));
  EXPECT_FALSE(es.update(0.95)); // better, but not by more than minDelta
  EXPECT_TRUE(es.shouldStop());
  EXPECT_DOUBLE_EQ(es.best(), 1.0);
  EarlyStopping es2(3, 0.1);
  es2.update(1.0);
  EXPECT_TRUE(es2.update(0.85));
}

TEST(EarlyStopping, NaNNeverImproves) {
  EarlyStopping es(2);
  EXPECT_FALSE(es.update(NAN));
  EXPECT_TRUE(es.update(3.0));
  EXPECT_FALSE(es.update(NAN));
  EXPECT_FALSE(es.update(NAN));
  EXPECT_TRUE(es.shouldStop());
}

TEST(EarlyStopping, RejectsBadArguments) {
  EXPECT_THROW(EarlyStopping(0), std::invalid_argument);
  EXPECT_THROW(EarlyStopping(1, -0.5), std::invalid_argument);
  EXPECT_THROW(EarlyStopping(1, NAN), std::invalid_argument);
}
