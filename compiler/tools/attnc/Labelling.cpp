// attnc run for taggers and classifiers: each validation example with its predicted tags or
// label and whether they are right (attn::app::runLabeller).
#include "Verbs.h"

#include "compiler/Driver/TaskConfig.h"

#include "attn/app/Verbs.h"

namespace attnc {

int runLabeller(attn::driver::Session &session, const RunOptions &o) {
  const attn::task::PairData &data = session.compiledData(/*withValidation=*/true);
  std::unique_ptr<attn::driver::Model> m = session.loadModel(o.seed);
  if (!m)
    return 1;
  return attn::app::runLabeller(attn::driver::modelConfig(session.spec()),
                                {*m->program, m->params, m->origin}, data, o.count.value_or(8));
}

} // namespace attnc
