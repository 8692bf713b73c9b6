// task: tag (a label per token) or classify (a label per sequence) over a recurrent encoder.
#include "frontends/yaml/Family.h"

namespace attn::yaml {
namespace {

bool claims(const Spec &s) { return s.task == "tag" || s.task == "classify"; }

void validate(const Spec &s, Problems &p) {
  checkLabelledData(s, p);
  if (s.model.mlp)
    p.error(s.model.loc, "task '" + s.task + "' needs model.rnn or model.transformer",
            "replace model.mlp by model.rnn or model.transformer");
}

} // namespace

const Family kLabellerFamily = {"labeller",
                                "recurrent taggers (tag) and sequence classifiers (classify)",
                                claims, validate, importLabeller};

} // namespace attn::yaml
