// task: tag (a label per token) or classify (a label per sequence) over a recurrent encoder.
#include "frontends/yaml/Family.h"
#include "frontends/yaml/RecurrentImporter.h"

namespace attn::yaml::recurrent {
namespace {

class LabellerImporter : public RecurrentImporter {
public:
  using RecurrentImporter::RecurrentImporter;

  //===------------------------------------------------------------------------------------===//
  // Sequence labelling (task: tag) and classification (task: classify)
  //===------------------------------------------------------------------------------------===//

  // Right-padded tokens through the embedding, the masked (bidirectional) rnn and a dense
  // head: scores for every token's tag [B, S, V] or for the sequence's label [B, V].
  //   @loss(src [B,S], src_mask [B,S], labels [B,S] | [B]) -> cross-entropy (padding ignored)
  //   @forward(src, src_mask) -> scores
  void entries(ModuleOp module) {
    const RnnSpec &r = *spec.model.rnn;
    bool tagging = spec.task == Task::Tag;
    int64_t batch = spec.train.batchSize, steps = options.sourceLength;
    Location l = loc(spec.model.loc);
    Type f32 = b.getF32Type(), i32 = b.getI32Type();
    auto srcType = RankedTensorType::get({batch, steps}, i32);
    auto maskType = RankedTensorType::get({batch, steps}, f32);
    auto labelType = tagging ? RankedTensorType::get({batch, steps}, i32)
                             : RankedTensorType::get({batch}, i32);
    auto scoresType = tagging ? RankedTensorType::get({batch, steps, options.targetVocab}, f32)
                              : RankedTensorType::get({batch, options.targetVocab}, f32);
    auto network = [&](Value src, Value mask) {
      Value table = param(loc(spec.model.embedding.loc), "embedding",
                          {options.sourceVocab, spec.model.embedding.dim}, Init::normal, 1.0f);
      Value x = b.create<mlir::attn::EmbeddingOp>(l, table, src);
      auto [perToken, final] = maskedRnn(r, x, perStep(mask, l), l);
      return dense("output", tagging ? perToken : final, options.targetVocab,
                   loc(spec.model.output.loc));
    };

    b.setInsertionPointToEnd(module.getBody());
    auto loss = lossEntry({srcType, maskType, labelType},
                          {"src", "src_mask", tagging ? "tags" : "label"}, {{"rnn", steps}}, l);
    Value scores = network(loss.getArgument(0), loss.getArgument(1));
    dropout.clear();
    returnPaddedCrossEntropy(scores, loss.getArgument(2), l);

    b.setInsertionPointToEnd(module.getBody());
    auto forward = entry("forward", {srcType, maskType}, {"src", "src_mask"}, {scoresType},
                         {"scores"}, l);
    b.create<func::ReturnOp>(l, network(forward.getArgument(0), forward.getArgument(1)));
  }

};

} // namespace
} // namespace attn::yaml::recurrent

namespace attn::yaml {
namespace {

bool claims(const Spec &s) { return s.task == Task::Tag || s.task == Task::Classify; }

void validate(const Spec &s, Problems &p) {
  checkLabelledData(s, p);
  if (s.model.mlp)
    p.error(s.model.loc, "task '" + nameOf(s.task) + "' needs model.rnn or model.transformer",
            "replace model.mlp by model.rnn or model.transformer");
}

} // namespace

mlir::OwningOpRef<mlir::ModuleOp> importLabeller(const Spec &spec, mlir::MLIRContext &context,
                                      const ImportOptions &options) {
  return recurrent::RecurrentImporter::import<recurrent::LabellerImporter>(spec, options, context);
}

const Family kLabellerFamily = {"labeller",
                                "recurrent taggers (tag) and sequence classifiers (classify)",
                                claims, validate, importLabeller};

} // namespace attn::yaml
