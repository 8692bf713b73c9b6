// ProgramStepModel (runtime/decode/Seq2Seq) over hand-written entry functions standing in for
// a compiled encoder-decoder: K = 3 rows, S = 2 source positions, V = 4, no parameters.
//   encode(src, src_mask) -> (h = sum of masked ids [K, 1], context = mask count [K, 1])
//   decode_step(token, h, context) -> (log_probs[k, v] = 100 h' + 10 context + v,
//                                      h' = h + token, attn = h' (ignored: no such input))
#include "attn/decode/Seq2Seq.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

namespace {

constexpr int K = 3, S = 2, V = 4;

void encodeFn(void **args) {
  const int32_t *src = static_cast<const int32_t *>(args[0]);
  const float *mask = static_cast<const float *>(args[1]);
  float *h = static_cast<float *>(args[2]), *context = static_cast<float *>(args[3]);
  for (int k = 0; k < K; ++k) {
    h[k] = context[k] = 0;
    for (int j = 0; j < S; ++j) {
      h[k] += (float)src[k * S + j] * mask[k * S + j];
      context[k] += mask[k * S + j];
    }
  }
}

void decodeStepFn(void **args) {
  const int32_t *token = static_cast<const int32_t *>(args[0]);
  const float *h = static_cast<const float *>(args[1]);
  const float *context = static_cast<const float *>(args[2]);
  float *logProbs = static_cast<float *>(args[3]);
  float *hOut = static_cast<float *>(args[4]), *attn = static_cast<float *>(args[5]);
  for (int k = 0; k < K; ++k) {
    hOut[k] = attn[k] = h[k] + (float)token[k];
    for (int v = 0; v < V; ++v)
      logProbs[k * V + v] = 100 * hOut[k] + 10 * context[k] + (float)v;
  }
}

const attn_tensor_info kEncodeIn[] = {{"src", ATTN_I32, 2, {K, S}, nullptr, 0.f},
                                      {"src_mask", ATTN_F32, 2, {K, S}, nullptr, 0.f}};
const attn_tensor_info kEncodeOut[] = {{"h", ATTN_F32, 2, {K, 1}, nullptr, 0.f},
                                       {"context", ATTN_F32, 2, {K, 1}, nullptr, 0.f}};
// decode_step reads its inputs in another order than encode returns them: matched by name.
const attn_tensor_info kStepIn[] = {{"token", ATTN_I32, 1, {K}, nullptr, 0.f},
                                    {"h", ATTN_F32, 2, {K, 1}, nullptr, 0.f},
                                    {"context", ATTN_F32, 2, {K, 1}, nullptr, 0.f}};
const attn_tensor_info kStepOut[] = {{"log_probs", ATTN_F32, 2, {K, V}, nullptr, 0.f},
                                     {"h", ATTN_F32, 2, {K, 1}, nullptr, 0.f},
                                     {"attn", ATTN_F32, 2, {K, 1}, nullptr, 0.f}};
const attn_entry_info kEntries[] = {{"encode", encodeFn, 2, kEncodeIn, 2, kEncodeOut},
                                    {"decode_step", decodeStepFn, 3, kStepIn, 3, kStepOut}};
const attn_program_info kProgram = {"toy_s2s", 0, nullptr, 2, kEntries};

// The same, but decode_step wants a "memory" that encode does not return.
const attn_tensor_info kBadStepIn[] = {{"token", ATTN_I32, 1, {K}, nullptr, 0.f},
                                       {"h", ATTN_F32, 2, {K, 1}, nullptr, 0.f},
                                       {"memory", ATTN_F32, 2, {K, 1}, nullptr, 0.f}};
const attn_entry_info kBadEntries[] = {{"encode", encodeFn, 2, kEncodeIn, 2, kEncodeOut},
                                       {"decode_step", decodeStepFn, 3, kBadStepIn, 3, kStepOut}};
const attn_program_info kBadProgram = {"toy_s2s", 0, nullptr, 2, kBadEntries};

std::vector<float> row(const std::vector<float> &lp, int k) {
  return std::vector<float>(lp.begin() + k * V, lp.begin() + (k + 1) * V);
}

TEST(ProgramStepModel, StepsCarryStateAndReorderGathersRows) {
  attn::Program program(&kProgram);
  std::vector<attn::Tensor> params;
  attn::Tensor src = attn::Tensor::i32({K, S}, {1, 2, 3, 0, 4, 4});
  attn::Tensor mask = attn::Tensor::f32({K, S}, {1, 1, 1, 0, 0, 1});
  attn::decode::ProgramStepModel model(program, params, src, mask);
  EXPECT_EQ(model.rows(), K);
  EXPECT_EQ(model.vocab(), V);

  // h = [3, 3, 4], context = [2, 1, 1]; feeding 1 everywhere gives h' = [4, 4, 5].
  std::vector<float> lp;
  model.step({1, 1, 1}, lp);
  ASSERT_EQ(lp.size(), size_t(K * V));
  EXPECT_EQ(row(lp, 0), (std::vector<float>{420, 421, 422, 423}));
  EXPECT_EQ(row(lp, 1), (std::vector<float>{410, 411, 412, 413}));
  EXPECT_EQ(row(lp, 2), (std::vector<float>{510, 511, 512, 513}));

  // Rows <- [2, 0, 0]: h = [5, 4, 4], context = [1, 2, 2] (state and encoder results alike).
  model.reorder({2, 0, 0});
  model.step({0, 1, 2}, lp);
  EXPECT_EQ(row(lp, 0), (std::vector<float>{510, 511, 512, 513}));
  EXPECT_EQ(row(lp, 1), (std::vector<float>{520, 521, 522, 523}));
  EXPECT_EQ(row(lp, 2), (std::vector<float>{620, 621, 622, 623}));

  EXPECT_THROW(model.step({1, 1}, lp), std::runtime_error);
  EXPECT_THROW(model.reorder({0, 1, 3}), std::runtime_error);

  // Beam search runs on it (the log-probabilities are not normalised, which only matters for
  // the early stop; maxLength bounds the search).
  attn::decode::BeamOptions o;
  o.beam = 2;
  o.maxLength = 3;
  attn::decode::ProgramStepModel fresh(program, params, src, mask);
  std::vector<attn::decode::Hypothesis> best = attn::decode::beamSearch(fresh, o);
  ASSERT_EQ(best.size(), 1u);
  EXPECT_EQ(best[0].tokens, (std::vector<int32_t>{3, 3, 3}));
}

TEST(ProgramStepModel, NamesMustMatch) {
  attn::Program program(&kBadProgram);
  std::vector<attn::Tensor> params;
  attn::Tensor src(ATTN_I32, {K, S}), mask(ATTN_F32, {K, S});
  try {
    attn::decode::ProgramStepModel model(program, params, src, mask);
    FAIL() << "expected an exception";
  } catch (const std::runtime_error &e) {
    EXPECT_STREQ(e.what(), "attn: model 'toy_s2s': decode_step input 'memory' matches no result "
                           "of encode by name (encode returns: h, context)");
  }
  // Wrong source shapes are reported by Program::call.
  attn::Program good(&kProgram);
  EXPECT_THROW(attn::decode::ProgramStepModel(good, params, attn::Tensor(ATTN_I32, {K, 3}), mask),
               std::runtime_error);
}

} // namespace
