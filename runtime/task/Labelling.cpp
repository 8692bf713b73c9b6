#include "attn/task/Labelling.h"

#include "attn/data/Parallel.h"
#include "attn/data/Vocab.h"

#include <algorithm>
#include <cstring>

namespace attn::task {
namespace {

// Rows [first, first + rows) of each tensor of `split`, zero-padded to `batch` rows.
std::vector<Tensor> batchOf(const train::Split &split, int64_t first, int64_t rows,
                            int64_t batch) {
  std::vector<Tensor> out;
  for (const Tensor &t : split) {
    std::vector<int64_t> shape = t.shape();
    size_t rowBytes = t.nbytes() / (size_t)shape[0];
    shape[0] = batch;
    Tensor b(t.dtype(), shape);
    std::memcpy(b.raw(), static_cast<const char *>(t.raw()) + first * rowBytes, rows * rowBytes);
    out.push_back(std::move(b));
  }
  return out;
}

} // namespace

int32_t argmaxAt(const Tensor &scores, int64_t position) {
  int64_t v = scores.shape().back();
  const float *row = scores.data<float>() + position * v;
  return (int32_t)(std::max_element(row, row + v) - row);
}

void forEachPrediction(const Program &program, const std::vector<Tensor> &params,
                       const train::Split &split, int64_t count, const PredictionVisitor &visit) {
  int64_t batch = program.entry("forward").inputs[0].shape[0];
  for (int64_t first = 0; first < count; first += batch) {
    int64_t rows = std::min(batch, count - first);
    std::vector<Tensor> in = batchOf(split, first, rows, batch);
    in.pop_back(); // the labels
    Tensor scores = program.call("forward", params, in)[0];
    for (int64_t r = 0; r < rows; ++r)
      visit(first + r, scores, r);
  }
}

double labelAccuracy(const Program &program, const std::vector<Tensor> &params,
                     const train::Split &split) {
  const Tensor &labels = split[2];
  bool tagged = labels.rank() == 2;
  int64_t perRow = tagged ? labels.shape()[1] : 1, right = 0, total = 0;
  forEachPrediction(program, params, split, labels.shape()[0],
                    [&](int64_t row, const Tensor &scores, int64_t r) {
                      for (int64_t k = 0; k < perRow; ++k) {
                        int32_t want = labels.data<int32_t>()[row * perRow + k];
                        if (want == data::Vocab::kPad)
                          continue;
                        right += argmaxAt(scores, r * perRow + k) == want;
                        ++total;
                      }
                    });
  return total ? (double)right / (double)total : 0.0;
}

Labeller::Labeller(const Program &program, const std::vector<Tensor> &params, const PairData &data)
    : program(program), params(params), data(data) {
  const attn_entry_info &forward = program.entry("forward");
  rows = forward.inputs[0].shape[0];
  sourceLength = forward.inputs[0].shape[1];
  tagged = forward.outputs[0].rank == 3; // scores [B, S, V]; a classifier's are [B, V]
}

Encoded Labeller::encode(const std::string &line) const {
  Encoded e;
  e.ids = data::encodeSource(line, data.source, data.sourceTokens, sourceLength,
                             /*reverseSource=*/false, e.mask);
  if (std::count(e.ids.begin(), e.ids.end(), data::Vocab::kUnk))
    e.unknown = unknownTokens(line, data.source, data.sourceTokens);
  return e;
}

std::vector<std::string> Labeller::label(const std::vector<Encoded> &sources) const {
  std::vector<std::string> out;
  for (size_t first = 0; first < sources.size(); first += (size_t)rows) {
    size_t count = std::min(sources.size() - first, (size_t)rows);
    // src i32 [B, S], src_mask f32 [B, S]; rows past `count` stay padding.
    Tensor src(ATTN_I32, {rows, sourceLength}), mask(ATTN_F32, {rows, sourceLength});
    for (size_t r = 0; r < count; ++r) {
      const Encoded &e = sources[first + r];
      std::copy(e.ids.begin(), e.ids.end(), src.data<int32_t>() + r * sourceLength);
      std::copy(e.mask.begin(), e.mask.end(), mask.data<float>() + r * sourceLength);
    }
    Tensor scores = program.call("forward", params, {src, mask})[0];
    for (size_t r = 0; r < count; ++r) {
      const Encoded &e = sources[first + r];
      int64_t n = tagged ? (int64_t)std::count(e.mask.begin(), e.mask.end(), 1.0f) : 1;
      std::vector<int32_t> ids;
      for (int64_t k = 0; k < n; ++k)
        ids.push_back(argmaxAt(scores, tagged ? (int64_t)r * sourceLength + k : (int64_t)r));
      out.push_back(data::detokenize(data.target.decode(ids), data::Tokenize::Word));
    }
  }
  return out;
}

} // namespace attn::task
