// task: lm, a recurrent character language model that samples text.
#include "frontends/yaml/Family.h"
#include "frontends/yaml/RecurrentImporter.h"

namespace attn::yaml::recurrent {
namespace {

class LanguageModelImporter : public RecurrentImporter {
public:
  using RecurrentImporter::RecurrentImporter;

  // A character-level language model: embeddings, the rnn over every position, a dense head
  // giving next-character logits.
  //   @loss(tokens [B, T], next [B, T]) -> cross-entropy over every position
  //   @step(token [1], state_l [1, H]...) -> (logits [1, V], state_l'...), for sampling
  void entries(ModuleOp module) {
    int64_t batch = spec.train.batchSize, window = spec.data.window, vocab = options.vocabSize;
    auto ids = RankedTensorType::get({batch, window}, b.getI32Type());
    auto scalar = RankedTensorType::get({}, b.getF32Type());
    Location l = loc(spec.model.loc);

    b.setInsertionPointToEnd(module.getBody());
    auto loss = lossEntry({ids, ids}, {"tokens", "next"}, {{"rnn", window}}, l);
    Value embedded = b.create<mlir::attn::EmbeddingOp>(l, embeddingTable(), loss.getArgument(0));
    Value outputs = rnn(*spec.model.rnn, embedded, /*allSteps=*/true);
    dropout.clear();
    Value logits = dense("output", outputs, vocab, loc(spec.model.output.loc));
    b.create<func::ReturnOp>(
        l, b.create<mlir::attn::CrossEntropyOp>(l, logits, loss.getArgument(1),
                                                b.getI64IntegerAttr(-1),
                                                b.getF32FloatAttr(spec.train.labelSmoothing))
               .getResult());

    // One position for one sequence, the states of every layer in and out.
    const RnnSpec &r = *spec.model.rnn;
    SmallVector<Type> states = stateTypes(r, 1);
    b.setInsertionPointToEnd(module.getBody());
    auto step = statefulEntry("step", r, 1, RankedTensorType::get({1}, b.getI32Type()), "token",
                              RankedTensorType::get({1, vocab}, b.getF32Type()), "logits", l);
    Value x = b.create<mlir::attn::EmbeddingOp>(l, embeddingTable(), step.getArgument(0));
    SmallVector<Value> outs = {Value()};
    unsigned arg = 1;
    for (int64_t layer = 0; layer < r.layers; ++layer) {
      int64_t in = cast<RankedTensorType>(x.getType()).getShape()[1];
      LayerParams w = layerParams(r, "rnn", layer, in, /*reverse=*/false, l);
      SmallVector<Value> state(step.getArguments().slice(arg, states.size()));
      arg += states.size();
      SmallVector<Value> next = cellStep(r, w, x, state, l);
      outs.append(next.begin(), next.end());
      x = next[0];
    }
    outs[0] = dense("output", x, vocab, loc(spec.model.output.loc));
    b.create<func::ReturnOp>(l, outs);
  }

};

} // namespace
} // namespace attn::yaml::recurrent

namespace attn::yaml {
namespace {

bool claims(const Spec &s) { return s.task == Task::Lm; }

void validate(const Spec &s, Problems &p) {
  checkTextData(s, p);
  if (s.model.mlp)
    p.error(s.model.loc, "task 'lm' needs model.rnn or model.transformer",
            "replace model.mlp by model.rnn or model.transformer");
  if (s.model.rnn && s.model.rnn->bidirectional)
    p.error(s.model.rnn->loc,
            "task 'lm' predicts the next token, so its rnn must not read ahead",
            "remove model.rnn.bidirectional");
}

} // namespace

mlir::OwningOpRef<mlir::ModuleOp> importLanguageModel(const Spec &spec, mlir::MLIRContext &context,
                                      const ImportOptions &options) {
  return recurrent::RecurrentImporter::import<recurrent::LanguageModelImporter>(spec, options, context);
}

const Family kLanguageModelFamily = {"language model",
                                     "recurrent character language models (lm)", claims,
                                     validate, importLanguageModel};

} // namespace attn::yaml
