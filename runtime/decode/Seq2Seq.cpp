#include "attn/decode/Seq2Seq.h"

#include <cstring>
#include <stdexcept>
#include <string>

// attn/cuda/Offload.h's decoding functions, defined where attnc's CUDA runtime is linked (a
// --device cuda program pulls them in); null elsewhere. Weak, so that the CPU runtime never
// needs the CUDA one.
extern "C" void attn_cuda_argmax_rows(const float *x, int64_t rows, int64_t cols, int32_t *index,
                                      float *value) __attribute__((weak));
extern "C" void attn_cuda_top_k_rows(const float *x, int64_t rows, int64_t cols, int64_t k,
                                     int32_t *index, float *value) __attribute__((weak));
extern "C" void attn_cuda_gather_rows(const void *from, void *to, int64_t row_bytes,
                                      const int32_t *parents, int64_t rows) __attribute__((weak));

namespace attn::decode {

namespace {

std::string nameOf(const attn_tensor_info &info) { return info.name ? info.name : ""; }

std::string describe(const attn_tensor_info &info) {
  return dtypeName(info.dtype) + shapeToString(infoShape(info));
}

// Index of the tensor named `name` in infos[0, count), or -1.
int findByName(const attn_tensor_info *infos, int32_t count, const std::string &name) {
  for (int32_t i = 0; i < count; ++i)
    if (nameOf(infos[i]) == name)
      return i;
  return -1;
}

// Row k of `t` (dim 0, `rows` of them) becomes row parents[k]: beam search's reorder, on the
// GPU with `onDevice` (a --device cuda program's state, which then stays there).
void gatherRows(Tensor &t, const std::vector<int32_t> &parents, int64_t rows, bool onDevice) {
  if ((int64_t)parents.size() != rows)
    throw std::runtime_error("attn: reorder: expected " + std::to_string(rows) + " parents, got " +
                             std::to_string(parents.size()));
  for (int32_t p : parents)
    if (p < 0 || p >= rows)
      throw std::runtime_error("attn: reorder: parent row " + std::to_string(p) +
                               " is outside [0, " + std::to_string(rows) + ")");
  size_t rowBytes = t.nbytes() / (size_t)rows;
  if (rowBytes == 0)
    return;
  // Every row is written: no zero fill (which, for the GPU's rows, would be the host's pages).
  Tensor gathered = Tensor::uninitialized(t.dtype(), t.shape());
  const char *from = static_cast<const char *>(t.raw());
  char *to = static_cast<char *>(gathered.raw());
  if (onDevice)
    attn_cuda_gather_rows(from, to, (int64_t)rowBytes, parents.data(), rows);
  else
    for (int64_t k = 0; k < rows; ++k)
      std::memcpy(to + k * rowBytes, from + parents[k] * rowBytes, rowBytes);
  t = std::move(gathered);
}

} // namespace

ProgramStepModel::ProgramStepModel(const Program &program, const std::vector<Tensor> &params,
                                   const Tensor &src, const Tensor &srcMask)
    : program_(program), params_(params) {
  const std::string where = "attn: model '" + program.name() + "'";
  const attn_entry_info &enc = program.entry("encode");
  const attn_entry_info &dec = program.entry("decode_step");
  if (enc.num_inputs != 2)
    throw std::runtime_error(where + ": entry 'encode' must take (src, src_mask), it takes " +
                             std::to_string(enc.num_inputs) + " inputs");
  if (dec.num_inputs < 1 || dec.num_outputs < 1)
    throw std::runtime_error(where + ": entry 'decode_step' must take a token and return "
                                     "log-probabilities first");
  const attn_tensor_info &token = dec.inputs[0], &logProbs = dec.outputs[0];
  // (A graph's decoder reads its tokens as [K, 1], one position of tgt_in.)
  if (token.dtype != ATTN_I32 || token.shape[0] < 1 ||
      !(token.rank == 1 || (token.rank == 2 && token.shape[1] == 1)))
    throw std::runtime_error(where + ": decode_step's first input '" + nameOf(token) +
                             "' must be the token, i32 [K] or [K, 1], but it is " +
                             describe(token));
  rows_ = token.shape[0];
  if (logProbs.dtype != ATTN_F32 || logProbs.rank != 2 || logProbs.shape[0] != rows_)
    throw std::runtime_error(where + ": decode_step's first result '" + nameOf(logProbs) +
                             "' must be the log-probabilities, f32 [" + std::to_string(rows_) +
                             ", V], but it is " + describe(logProbs));
  vocab_ = logProbs.shape[1];

  // Program::call checks src / srcMask against the manifest ("input 'src' is ...").
  std::vector<Tensor> encoded = program.call("encode", params, {src, srcMask});

  std::string encodeNames;
  for (int32_t i = 0; i < enc.num_outputs; ++i)
    encodeNames += (i ? ", " : "") + nameOf(enc.outputs[i]);
  inputs_.push_back(makeTensor(token));
  for (int32_t i = 1; i < dec.num_inputs; ++i) {
    const attn_tensor_info &in = dec.inputs[i];
    std::string name = nameOf(in);
    // An encode input (the source mask, for attention) is handed on as it was given.
    int given = name.empty() ? -1 : findByName(enc.inputs, enc.num_inputs, name);
    if (given >= 0 && findByName(enc.outputs, enc.num_outputs, name) < 0) {
      const Tensor &t = given == 0 ? src : srcMask;
      if (t.dtype() != in.dtype || t.shape() != infoShape(in))
        throw std::runtime_error(where + ": encode takes '" + name + "' as " +
                                 describe(enc.inputs[given]) + ", but decode_step takes it as " +
                                 describe(in));
      inputs_.push_back(t);
      continue;
    }
    int found = name.empty() ? -1 : findByName(enc.outputs, enc.num_outputs, name);
    if (found < 0)
      throw std::runtime_error(where + ": decode_step input '" + name +
                               "' matches no result of encode by name (encode returns: " +
                               (encodeNames.empty() ? "nothing" : encodeNames) + ")");
    const attn_tensor_info &out = enc.outputs[found];
    if (out.dtype != in.dtype || infoShape(out) != infoShape(in))
      throw std::runtime_error(where + ": encode returns '" + name + "' as " + describe(out) +
                               ", but decode_step takes it as " + describe(in));
    if (in.rank < 1 || in.shape[0] != rows_)
      throw std::runtime_error(where + ": decode_step input '" + name + "' is " + describe(in) +
                               "; beam search reorders rows, so its first dimension must be " +
                               std::to_string(rows_));
    inputs_.push_back(encoded[found]); // a copy: two inputs may read one result
  }
  feedback_.assign(dec.num_outputs, -1);
  for (int32_t j = 1; j < dec.num_outputs; ++j) {
    const attn_tensor_info &out = dec.outputs[j];
    std::string name = nameOf(out);
    int i = name.empty() ? -1 : findByName(dec.inputs, dec.num_inputs, name);
    if (i < 1)
      continue; // not state: ignored (a result named like the token is not fed back either)
    if (out.dtype != dec.inputs[i].dtype || infoShape(out) != infoShape(dec.inputs[i]))
      throw std::runtime_error(where + ": decode_step returns '" + name + "' as " + describe(out) +
                               ", but takes it as " + describe(dec.inputs[i]));
    feedback_[j] = i;
  }
}

const Tensor &ProgramStepModel::run(const std::vector<int32_t> &tokens) {
  if ((int64_t)tokens.size() != rows_)
    throw std::runtime_error("attn: decode_step: expected " + std::to_string(rows_) +
                             " tokens, got " + std::to_string(tokens.size()));
  std::memcpy(inputs_[0].data<int32_t>(), tokens.data(), tokens.size() * sizeof(int32_t));
  std::vector<Tensor> outputs = program_.call("decode_step", params_, inputs_);
  for (size_t j = 1; j < outputs.size(); ++j)
    if (feedback_[j] > 0)
      inputs_[feedback_[j]] = std::move(outputs[j]);
  results_ = std::move(outputs);
  return results_[0];
}

void ProgramStepModel::step(const std::vector<int32_t> &tokens, std::vector<float> &logProbs) {
  const Tensor &lp = run(tokens);
  logProbs.assign(lp.data<float>(), lp.data<float>() + lp.numel());
}

bool ProgramStepModel::stepGreedy(const std::vector<int32_t> &tokens, std::vector<int32_t> &best,
                                  std::vector<float> &bestLogProbs) {
  if (!program_.info().device || !attn_cuda_argmax_rows)
    return false;
  const Tensor &lp = run(tokens);
  best.resize(rows_);
  bestLogProbs.resize(rows_);
  attn_cuda_argmax_rows(lp.data<float>(), rows_, vocab_, best.data(), bestLogProbs.data());
  return true;
}

const Tensor *ProgramStepModel::result(const std::string &name) const {
  const attn_entry_info &dec = program_.entry("decode_step");
  int j = findByName(dec.outputs, dec.num_outputs, name);
  if (j < 0 || (size_t)j >= results_.size())
    return nullptr;
  // A result fed back was moved into the inputs (a reorder since may have permuted its rows).
  return feedback_[j] > 0 ? &inputs_[feedback_[j]] : &results_[j];
}

bool ProgramStepModel::stepTopK(const std::vector<int32_t> &tokens, int64_t k,
                                std::vector<int32_t> &ids, std::vector<float> &idLogProbs) {
  if (!program_.info().device || !attn_cuda_top_k_rows || k < 1 || k > vocab_ ||
      k > kMostRankedOnDevice)
    return false;
  const Tensor &lp = run(tokens);
  ids.resize(size_t(rows_ * k));
  idLogProbs.resize(size_t(rows_ * k));
  attn_cuda_top_k_rows(lp.data<float>(), rows_, vocab_, k, ids.data(), idLogProbs.data());
  return true;
}

void ProgramStepModel::reorder(const std::vector<int32_t> &parents) {
  bool onDevice = program_.info().device && attn_cuda_gather_rows;
  for (size_t i = 1; i < inputs_.size(); ++i)
    gatherRows(inputs_[i], parents, rows_, onDevice);
}

ProgramPrefixModel::ProgramPrefixModel(const Program &program, const std::vector<Tensor> &params,
                                       const Tensor &src, const Tensor &srcMask)
    : program_(program), params_(params) {
  const std::string where = "attn: model '" + program.name() + "'";
  const attn_entry_info &full = program.entry("decode_full");
  if (full.num_inputs != 3 || full.num_outputs != 1 || full.inputs[2].dtype != ATTN_I32 ||
      full.inputs[2].rank != 2 || full.outputs[0].rank != 3)
    throw std::runtime_error(where + ": entry 'decode_full' must take (src, src_mask, tgt_in "
                                     "i32 [K, L]) and return log_probs f32 [K, L, V]");
  rows_ = full.inputs[2].shape[0];
  length_ = full.inputs[2].shape[1];
  vocab_ = full.outputs[0].shape[2];
  inputs_ = {src, srcMask, makeTensor(full.inputs[2])};
}

void ProgramPrefixModel::step(const std::vector<int32_t> &tokens, std::vector<float> &logProbs) {
  if ((int64_t)tokens.size() != rows_)
    throw std::runtime_error("attn: decode_full: expected " + std::to_string(rows_) +
                             " tokens, got " + std::to_string(tokens.size()));
  if (position_ >= length_)
    throw std::runtime_error("attn: decode_full holds " + std::to_string(length_) +
                             " positions; decoding asked for more");
  int32_t *tgt = inputs_[2].data<int32_t>();
  for (int64_t k = 0; k < rows_; ++k)
    tgt[k * length_ + position_] = tokens[k];
  std::vector<Tensor> outputs = program_.call("decode_full", params_, inputs_);
  const float *all = outputs[0].data<float>();
  logProbs.resize(rows_ * vocab_);
  for (int64_t k = 0; k < rows_; ++k)
    std::memcpy(logProbs.data() + k * vocab_, all + (k * length_ + position_) * vocab_,
                vocab_ * sizeof(float));
  ++position_;
}

void ProgramPrefixModel::reorder(const std::vector<int32_t> &parents) {
  gatherRows(inputs_[2], parents, rows_, /*onDevice=*/false); // tokens, which the host writes
}

} // namespace attn::decode
