// Early stopping on the validation loss.
//
// After each evaluation the loop calls update(); it returns true when the loss beat the best one
// so far by more than minDelta (save the checkpoint then). shouldStop() turns true once `patience`
// evaluations in a row have not improved. NaN never counts as an improvement.
#ifndef ATTN_TRAIN_EARLYSTOPPING_H
#define ATTN_TRAIN_EARLYSTOPPING_H

#include <cstdint>

namespace attn::train {

class EarlyStopping {
public:
  // Throws std::invalid_argument if patience < 1 or minDelta < 0 (or NaN).
  explicit EarlyStopping(int64_t patience, double minDelta = 0);

  // Records one evaluation; true if validLoss < best() - minDelta (the first finite loss always
  // improves on the initial +inf).
  bool update(double validLoss);
  // True once badEvaluations() >= patience.
  bool shouldStop() const { return bad_ >= patience_; }

  // The best loss seen so far (+inf before the first improvement).
  double best() const { return best_; }
  // Evaluations since the last improvement.
  int64_t badEvaluations() const { return bad_; }

  // Continues a run that stopped with these values (they are saved in checkpoints).
  void restore(double best, int64_t badEvaluations) {
    best_ = best;
    bad_ = badEvaluations;
  }

private:
  int64_t patience_;
  double minDelta_;
  double best_;
  int64_t bad_ = 0;
};

} // namespace attn::train

#endif // ATTN_TRAIN_EARLYSTOPPING_H
