// A compiled encoder-decoder program as a StepModel (attn/decode/Beam.h).
//
// The program has two entries, with K the batch size it was compiled for:
//   encode(src: i32 [K, S], src_mask: f32 [K, S]) -> (named results ...)
//   decode_step(token: i32 [K] (or [K, 1]), named inputs ...)
//       -> (log_probs: f32 [K, V], named results ...)
// Every decode_step input after `token` is matched BY NAME to an encode result and starts as
// that result, or, if encode has no such result, is one of encode's own inputs (e.g.
// "src_mask", which attention reads at every step) and starts as that input. After each step, a
// decode_step result named like one of its inputs replaces that input (recurrent state, e.g. "h");
// inputs it does not return keep their value (e.g. "context", an encoder "memory"); results named
// like no input are ignored. reorder() gathers dim 0 (the rows) of every decode_step input. All of
// them must have K rows.
#ifndef ATTN_DECODE_SEQ2SEQ_H
#define ATTN_DECODE_SEQ2SEQ_H

#include "attn/Program.h"
#include "attn/Tensor.h"
#include "attn/decode/Beam.h"

#include <cstdint>
#include <vector>

namespace attn::decode {

class ProgramStepModel : public StepModel {
public:
  // Checks the two entries against the contract above (std::runtime_error naming the model,
  // the entry and the tensor) and runs encode once on src i32 [K, S] / srcMask f32 [K, S].
  // `program` and `params` are referenced, not copied: they must outlive this object.
  ProgramStepModel(const Program &program, const std::vector<Tensor> &params, const Tensor &src,
                   const Tensor &srcMask);

  int64_t rows() const override { return rows_; }
  int64_t vocab() const override { return vocab_; }
  void step(const std::vector<int32_t> &tokens, std::vector<float> &logProbs) override;
  // For a program compiled with --device cuda: the GPU picks each row's token from the
  // log-probabilities it computed, and only the K choices come back (attn/cuda/Offload.h,
  // attn_cuda_argmax_rows). False for a CPU program.
  bool stepGreedy(const std::vector<int32_t> &tokens, std::vector<int32_t> &best,
                  std::vector<float> &bestLogProbs) override;
  // Likewise for beam search: the GPU ranks each row's tokens and only K x k candidates come
  // back (attn_cuda_top_k_rows). False for a CPU program.
  bool stepTopK(const std::vector<int32_t> &tokens, int64_t k, std::vector<int32_t> &ids,
                std::vector<float> &idLogProbs) override;
  // Gathers the rows of the state; on the GPU for a --device cuda program (attn_cuda_gather_rows).
  void reorder(const std::vector<int32_t> &parents) override;

  // decode_step's result `name` from the latest step (e.g. "attention", the weights [K, S]
  // each row gave the source), or null before the first step or if there is no such result.
  const Tensor *result(const std::string &name) const;

private:
  // Runs decode_step on `tokens`, feeding its state back; returns its log-probabilities.
  const Tensor &run(const std::vector<int32_t> &tokens);

  const Program &program_;
  const std::vector<Tensor> &params_;
  int64_t rows_ = 0, vocab_ = 0;
  // decode_step's inputs: inputs_[0] is the token, the rest the state read by name.
  std::vector<Tensor> inputs_;
  // For each decode_step result j >= 1: the index of the input it replaces, or -1.
  std::vector<int> feedback_;
  // The latest step's results (those fed back are moved into inputs_ instead).
  std::vector<Tensor> results_;
};

// Decoding without a cache, for models that also have
//   decode_full(src: i32 [K, S], src_mask: f32 [K, S], tgt_in: i32 [K, L])
//       -> (log_probs: f32 [K, L, V])
// (a Transformer's decoder over all L positions at once, causally masked). Step t writes the
// tokens at position t of tgt_in (bos first, zeros after), runs decode_full and reads its
// position t: the whole prefix is recomputed at every step. It checks cached decoding and
// measures what the cache saves; at most L steps.
class ProgramPrefixModel : public StepModel {
public:
  ProgramPrefixModel(const Program &program, const std::vector<Tensor> &params, const Tensor &src,
                     const Tensor &srcMask);

  int64_t rows() const override { return rows_; }
  int64_t vocab() const override { return vocab_; }
  void step(const std::vector<int32_t> &tokens, std::vector<float> &logProbs) override;
  void reorder(const std::vector<int32_t> &parents) override;

private:
  const Program &program_;
  const std::vector<Tensor> &params_;
  std::vector<Tensor> inputs_; // src, src_mask, tgt_in (the tokens so far)
  int64_t rows_ = 0, vocab_ = 0, length_ = 0, position_ = 0;
};

} // namespace attn::decode

#endif // ATTN_DECODE_SEQ2SEQ_H
