// task: seq2seq with a recurrent encoder and decoder (model.rnn): the context as the initial
// state, at every step, or through an attention mechanism (model.attention).
#include "frontends/yaml/Family.h"

namespace attn::yaml {
namespace {

bool claims(const Spec &s) { return s.task == "seq2seq"; }

// The attention mechanism's keys against the cells it reads.
void validateAttention(const Spec &s, const AttentionSpec &a, Problems &p) {
  if (s.model.seq2seq.context != "initial")
    p.error(a.loc, "model.attention replaces model.seq2seq.context '" + s.model.seq2seq.context +
                       "': the context is the attention's",
            "remove model.seq2seq.context");
  const RnnSpec &r = *s.model.rnn;
  int64_t hidden = s.model.seq2seq.decoderHidden ? s.model.seq2seq.decoderHidden : r.hidden;
  int64_t out = r.cell == "lstm" && r.projection > 0 ? r.projection : hidden;
  int64_t encoded = r.cell == "lstm" && r.projection > 0 ? r.projection : r.hidden;
  int64_t memory = encoded * (r.bidirectional && r.merge == "concat" ? 2 : 1);
  bool dotLike = a.score == "dot" || a.score == "cosine";
  if (a.type != "bahdanau" && dotLike && memory != out)
    p.error(a.loc, "score '" + a.score + "' needs encoder states as wide as the decoder's (" +
                       std::to_string(out) + "), but the encoder's are " +
                       std::to_string(memory) + " wide",
            "use score: general or concat, or model.rnn.merge: sum");
  AttentionSpec defaults;
  bool cosine = a.type != "bahdanau" && a.score == "cosine";
  if (!cosine && (a.temperature != defaults.temperature || a.learnTemperature))
    p.error("model.attention.temperature",
            s.locOf("model.attention.learn_temperature", a.loc),
            "model.attention.temperature and learn_temperature scale the cosine score, but this "
            "attention's score is " +
                (a.type == "bahdanau" ? std::string("bahdanau's additive one")
                                      : "'" + a.score + "'"),
            "remove them, or set type: luong (or local) with score: cosine");
  if (cosine && !(a.temperature > 0))
    p.error("model.attention.temperature", a.loc,
            "model.attention.temperature must be above 0 for the cosine score, got " +
                std::to_string(a.temperature),
            "e.g. temperature: 10 (a cosine lies in [-1, 1])");
}

void validate(const Spec &s, Problems &p) {
  checkSeq2SeqData(s, p);
  checkDecoding(s, p);
  if (!s.model.rnn) {
    p.error(s.model.loc, "task 'seq2seq' needs model.rnn (the encoder and decoder cells) or "
                         "model.transformer",
            "replace model.mlp by model.rnn or model.transformer");
    return;
  }
  const RnnSpec &r = *s.model.rnn;
  if (r.bidirectional && !s.model.attention)
    p.error(r.loc, "a seq2seq encoder without attention hands its final states to a "
                   "unidirectional decoder, so it cannot be bidirectional",
            "remove model.rnn.bidirectional, or add model.attention");
  if (s.model.seq2seq.decoderHidden > 0 && !s.model.attention &&
      s.model.seq2seq.decoderHidden != r.hidden)
    p.error(s.model.seq2seq.loc,
            "model.seq2seq.decoder_hidden differs from model.rnn.hidden, but without attention "
            "the decoder starts from the encoder's states",
            "add model.attention, or remove decoder_hidden");
  if (s.model.attention)
    validateAttention(s, *s.model.attention, p);
}

} // namespace

const Family kSeq2SeqFamily = {
    "seq2seq",
    "recurrent encoder-decoders: context as the initial state, at every step, or by attention",
    claims, validate, importSeq2Seq};

} // namespace attn::yaml
