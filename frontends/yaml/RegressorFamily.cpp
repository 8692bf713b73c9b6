// task: regress, an mlp or rnn that maps a window of numbers to the next one.
#include "frontends/yaml/Family.h"

namespace attn::yaml {
namespace {

bool claims(const Spec &s) { return s.task == "regress"; }

void validate(const Spec &s, Problems &p) {
  if (!s.data.path.empty())
    p.error(s.data.loc, "data.path (TSV pairs) is for task 'seq2seq', not '" + s.task + "'",
            "set task: seq2seq");
  else if (s.data.builtin != "sine")
    p.error(s.data.loc,
            "task 'regress' learns from numbers, but data.builtin is '" + s.data.builtin + "'",
            "set data.builtin: sine, or task: lm");
  if (s.model.output.size != 1)
    p.error(s.model.output.loc,
            "data.builtin sine has one target per example, but model.output.size is " +
                std::to_string(s.model.output.size),
            "set model.output.size to 1");
}

} // namespace

const Family kRegressorFamily = {"regressor",
                                 "mlp and rnn regressors of the next value of a sequence",
                                 claims, validate, importRegressor};

} // namespace attn::yaml
