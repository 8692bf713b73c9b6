// task: lm, a recurrent character language model that samples text.
#include "frontends/yaml/Family.h"

namespace attn::yaml {
namespace {

bool claims(const Spec &s) { return s.task == "lm"; }

void validate(const Spec &s, Problems &p) {
  checkTextData(s, p);
  if (s.model.mlp)
    p.error(s.model.loc, "task 'lm' needs model.rnn or model.transformer",
            "replace model.mlp by model.rnn or model.transformer");
  if (s.model.rnn && s.model.rnn->bidirectional)
    p.error(s.model.rnn->loc,
            "task 'lm' predicts the next character, so its rnn must not read ahead",
            "remove model.rnn.bidirectional");
}

} // namespace

const Family kLanguageModelFamily = {"language model",
                                     "recurrent character language models (lm)", claims,
                                     validate, importLanguageModel};

} // namespace attn::yaml
