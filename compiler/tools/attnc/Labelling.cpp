// attnc run for taggers and classifiers: each validation example with its predicted tags or
// label (attn::task::forEachPrediction) and whether they are right.
#include "Verbs.h"

#include "attn/task/Data.h"
#include "attn/task/Labelling.h"

#include <algorithm>
#include <iostream>

namespace attnc {

int runLabeller(attn::driver::Session &session, const RunOptions &o) {
  const attn::yaml::Spec &s = session.spec();
  const attn::task::PairData &data = session.compiledData(/*withValidation=*/true);
  std::unique_ptr<attn::driver::Model> m = session.loadModel(o.seed);
  if (!m)
    return 1;
  const attn::Program &program = *m->program;
  const std::vector<attn::Tensor> &params = m->params;
  std::vector<attn::data::Pair> pairs(
      data.valid.begin(),
      data.valid.begin() + std::min<int64_t>(o.count.value_or(8), (int64_t)data.valid.size()));
  attn::train::Split split =
      attn::task::pairSplit(attn::task::parseTask(attn::yaml::nameOf(s.task)), data, pairs);
  std::cout << s.name << ": " << split[0].shape()[0] << " validation examples, parameters "
            << m->origin << "\n";
  // Each example as the model saw it: its tokens (unknown ones as <unk>), the predicted
  // tags or label, and whether they match the reference.
  bool tagged = s.task == attn::yaml::Task::Tag;
  int64_t steps = split[0].shape()[1];
  auto words = [&](const std::vector<int32_t> &ids) {
    return attn::data::detokenize(data.target.decode(ids), attn::data::Tokenize::Word);
  };
  attn::task::forEachPrediction(program, params, split, split[0].shape()[0],
                    [&](int64_t row, const attn::Tensor &scores, int64_t r) {
                      const int32_t *src = split[0].data<int32_t>() + row * steps;
                      std::vector<int32_t> tokens(src, src + steps), got, want;
                      int64_t n = tagged ? (int64_t)data.source.decode(tokens).size() : 1;
                      for (int64_t k = 0; k < n; ++k) {
                        got.push_back(attn::task::argmaxAt(scores, tagged ? r * steps + k : r));
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
