#include "attn/train/EarlyStopping.h"

#include <limits>
#include <stdexcept>
#include <string>

namespace attn::train {

EarlyStopping::EarlyStopping(int64_t patience, double minDelta)
    : patience_(patience), minDelta_(minDelta), best_(std::numeric_limits<double>::infinity()) {
  if (patience < 1)
    throw std::invalid_argument("early stopping: patience must be >= 1, got " +
                                std::to_string(patience));
  if (!(minDelta >= 0)) // also rejects NaN
    throw std::invalid_argument("early stopping: minDelta must be >= 0");
}

bool EarlyStopping::update(double validLoss) {
  // Written so that a NaN loss compares false and lands in the "no improvement" branch.
  if (validLoss < best_ - minDelta_) {
    best_ = validLoss;
    bad_ = 0;
    return true;
  }
  ++bad_;
  return false;
}

} // namespace attn::train
