// model.transformer: an encoder-decoder (seq2seq), a decoder-only stack (lm) or an
// encoder-only one (tag, classify); Transformer.cpp imports it.
#include "frontends/yaml/Family.h"
#include "frontends/yaml/ScoreExpr.h"

namespace attn::yaml {
namespace {

bool claims(const Spec &s) { return s.model.transformer.has_value(); }

void validate(const Spec &s, Problems &p) {
  const TransformerSpec &t = *s.model.transformer;
  if (t.dModel % t.heads != 0)
    p.error(t.loc, "model.transformer.heads (" + std::to_string(t.heads) +
                       ") must divide d_model (" + std::to_string(t.dModel) + ")",
            "every head attends over d_model / heads of the width");
  if (t.dropout >= 1.0)
    p.error(t.loc, "model.transformer.dropout must be below 1, got " + std::to_string(t.dropout),
            "it is the probability of dropping an element");
  if (s.task == Task::Regress) {
    p.error(t.loc, "model.transformer reads tokens; task 'regress' reads numbers",
            "use task: seq2seq, lm, tag or classify, or model.rnn / model.mlp");
    return; // nothing else about a Transformer regressor means anything
  }
  if (s.task != Task::Seq2seq && (t.shareEmbeddings || t.decoderLayers > 0))
    p.error(t.loc,
            "share_embeddings and decoder_layers are for task 'seq2seq' (an encoder and a "
            "decoder), not '" +
                nameOf(s.task) + "'",
            "remove them, or set task: seq2seq");
  if (s.task == Task::Seq2seq)
    checkTeacherForced(s, p, "the Transformer's decoder");
  if (t.tieOutput && (s.task == Task::Tag || s.task == Task::Classify))
    p.error(t.loc,
            "tie_output shares the embedding table with the output layer, but task '" +
                nameOf(s.task) + "' predicts labels, not tokens",
            "remove tie_output");
  int64_t decoderLayers = t.decoderLayers > 0 ? t.decoderLayers : t.layers;
  if (s.decode.attentionLayer > decoderLayers)
    p.error("decode.attention_layer", s.decode.loc,
            "decode.attention_layer is " + std::to_string(s.decode.attentionLayer) +
                ", but the decoder has " + std::to_string(decoderLayers) + " layers",
            "layers count from 1; 0 plots the last");
  if (s.decode.attentionHead > t.heads)
    p.error("decode.attention_head", s.decode.loc,
            "decode.attention_head is " + std::to_string(s.decode.attentionHead) +
                ", but there are " + std::to_string(t.heads) + " heads",
            "heads count from 1; 0 plots their mean");
  expr::read(s, p); // model.transformer.attention's params and expressions
  if (s.model.attention)
    p.error(s.model.attention->loc,
            "model.attention is the recurrent decoder's attention; the Transformer has its own",
            "remove model.attention");
  if (s.task == Task::Seq2seq) {
    checkSeq2SeqData(s, p);
    checkDecoding(s, p);
  } else if (s.task == Task::Tag || s.task == Task::Classify) {
    checkLabelledData(s, p);
  } else {
    checkTextData(s, p);
  }
}

} // namespace

const Family kTransformerFamily = {
    "transformer",
    "Transformer stacks: encoder-decoder (seq2seq), decoder-only (lm), encoder-only (tag, "
    "classify)",
    claims, validate, importTransformer};

} // namespace attn::yaml
