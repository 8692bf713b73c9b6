// attnc run for taggers and classifiers, and their accuracy (shared with train / eval).
#include "Labelling.h"
#include "Data.h"
#include "Verbs.h"


#include "attn/Init.h"

#include <algorithm>
#include <cstring>
#include <iostream>

namespace attnc {
namespace {

// Rows [first, first + rows) of each tensor of `split`, zero-padded to `batch` rows.
std::vector<attn::Tensor> batchOf(const attn::train::Split &split, int64_t first, int64_t rows,
                                  int64_t batch) {
  std::vector<attn::Tensor> out;
  for (const attn::Tensor &t : split) {
    std::vector<int64_t> shape = t.shape();
    size_t rowBytes = t.nbytes() / (size_t)shape[0];
    shape[0] = batch;
    attn::Tensor b(t.dtype(), shape);
    std::memcpy(b.raw(), static_cast<const char *>(t.raw()) + first * rowBytes, rows * rowBytes);
    out.push_back(std::move(b));
  }
  return out;
}

// argmax over the last axis of scores [..., V] at `position` (a flat index over [...]).
int32_t best(const attn::Tensor &scores, int64_t position) {
  int64_t v = scores.shape().back();
  const float *row = scores.data<float>() + position * v;
  return (int32_t)(std::max_element(row, row + v) - row);
}

// Calls @forward on each batch of `split`; `visit(row, scores, rowInBatch)` per example.
template <typename Visit>
void forEachPrediction(const attn::Program &program, const std::vector<attn::Tensor> &params,
                       const attn::train::Split &split, int64_t count, Visit visit) {
  int64_t batch = program.entry("forward").inputs[0].shape[0];
  for (int64_t first = 0; first < count; first += batch) {
    int64_t rows = std::min(batch, count - first);
    std::vector<attn::Tensor> in = batchOf(split, first, rows, batch);
    in.pop_back(); // the labels
    attn::Tensor scores = program.call("forward", params, in)[0];
    for (int64_t r = 0; r < rows; ++r)
      visit(first + r, scores, r);
  }
}

} // namespace

double labelAccuracy(const attn::Program &program, const std::vector<attn::Tensor> &params,
                     const attn::train::Split &split) {
  const attn::Tensor &labels = split[2];
  bool tagged = labels.rank() == 2;
  int64_t perRow = tagged ? labels.shape()[1] : 1, right = 0, total = 0;
  forEachPrediction(program, params, split, labels.shape()[0],
                    [&](int64_t row, const attn::Tensor &scores, int64_t r) {
                      for (int64_t k = 0; k < perRow; ++k) {
                        int32_t want = labels.data<int32_t>()[row * perRow + k];
                        if (want == attn::data::Vocab::kPad)
                          continue;
                        right += best(scores, r * perRow + k) == want;
                        ++total;
                      }
                    });
  return total ? (double)right / (double)total : 0.0;
}

int runLabeller(Compiler &c, const Options &o) {
  const attn::yaml::Spec &s = c.spec();
  std::unique_ptr<PairModel> m = loadPairModel(c, o);
  if (!m)
    return 1;
  const PairData &data = m->data;
  const attn::Program &program = *m->program;
  const std::vector<attn::Tensor> &params = m->params;
  std::vector<attn::data::Pair> pairs(
      data.valid.begin(),
      data.valid.begin() + std::min<int64_t>(o.count.value_or(8), (int64_t)data.valid.size()));
  attn::train::Split split = pairSplit(s, data, pairs);
  std::cout << s.name << ": " << split[0].shape()[0] << " validation examples, parameters "
            << m->origin << "\n";
  // Each example as the model saw it: its tokens (unknown ones as <unk>), the predicted
  // tags or label, and whether they match the reference.
  bool tagged = s.task == "tag";
  int64_t steps = split[0].shape()[1];
  auto words = [&](const std::vector<int32_t> &ids) {
    return attn::data::detokenize(data.target.decode(ids), attn::data::Tokenize::Word);
  };
  forEachPrediction(program, params, split, split[0].shape()[0],
                    [&](int64_t row, const attn::Tensor &scores, int64_t r) {
                      const int32_t *src = split[0].data<int32_t>() + row * steps;
                      std::vector<int32_t> tokens(src, src + steps), got, want;
                      int64_t n = tagged ? (int64_t)data.source.decode(tokens).size() : 1;
                      for (int64_t k = 0; k < n; ++k) {
                        got.push_back(best(scores, tagged ? r * steps + k : r));
                        want.push_back(split[2].data<int32_t>()[tagged ? row * steps + k : row]);
                      }
                      std::cout << "  "
                                << attn::data::detokenize(data.source.decode(tokens),
                                                          data.tokenize)
                                << "  ->  " << words(got)
                                << (got == want ? "   (right)"
                                                : "   (expected " + words(want) + ")")
                                << "\n";
                    });
  std::cout.flush();
  return 0;
}

} // namespace attnc
