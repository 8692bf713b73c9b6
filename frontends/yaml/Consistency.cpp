// Combinations of keys that the schema alone cannot rule out (Spec.h: checkConsistency).
#include "frontends/yaml/Spec.h"

namespace attn::yaml {

// Combinations the schema alone cannot rule out, reported like the parser's errors.
bool checkConsistency(const Spec &s, std::vector<Diagnostic> &diags) {
  auto error = [&](const Loc &loc, const std::string &msg, const std::string &hint) {
    diags.push_back({loc, msg, hint});
    return false;
  };
  if (s.model.rnn && s.model.rnn->dropout >= 1.0)
    return error(s.model.rnn->loc, "model.rnn.dropout must be below 1, got " +
                                       std::to_string(s.model.rnn->dropout),
                 "it is the probability of dropping an element");
  // Keys that do not apply to the model are errors rather than silently ignored. A key at its
  // default passes (a checkpoint's stored spec spells every key out).
  if (const auto &r = s.model.rnn) {
    RnnSpec defaults;
    if (r->projection != defaults.projection && r->cell != "lstm")
      return error(r->loc, "model.rnn.projection is for the lstm cell, not '" + r->cell + "'",
                   "remove projection, or set cell: lstm");
    if (r->peephole && r->cell != "lstm")
      return error(r->loc, "model.rnn.peephole is for the lstm cell, not '" + r->cell + "'",
                   "remove peephole, or set cell: lstm");
    if (r->gruForm != defaults.gruForm && r->cell != "gru")
      return error(r->loc, "model.rnn.gru_form is for the gru cell, not '" + r->cell + "'",
                   "remove gru_form, or set cell: gru");
  }
  if (s.model.transformer && s.model.embedding.dim != EmbeddingSpec().dim)
    return error(s.model.embedding.loc,
                 "model.embedding.dim does not apply to a Transformer: its embeddings are "
                 "d_model wide",
                 "remove model.embedding, and set model.transformer.d_model");
  const auto &tf = s.train.teacherForcing;
  if (s.task != "seq2seq" && (tf.schedule != "constant" || tf.ratio != 1.0))
    return error(tf.loc, "train.teacher_forcing is for the decoder of task 'seq2seq', not '" +
                             s.task + "'",
                 "remove train.teacher_forcing");
  if (tf.schedule == "exponential" && !(tf.k > 0 && tf.k < 1))
    return error(tf.loc, "train.teacher_forcing.k must be between 0 and 1 for the exponential "
                         "schedule (p = k^i), got " + std::to_string(tf.k),
                 "e.g. k: 0.999");
  if (tf.schedule == "inverse_sigmoid" && tf.k < 1)
    return error(tf.loc, "train.teacher_forcing.k must be >= 1 for the inverse_sigmoid schedule "
                         "(p = k / (k + exp(i / k))), got " + std::to_string(tf.k),
                 "e.g. k: 500");
  std::string source = s.data.builtin.empty() ? "data.path" : "data.builtin: " + s.data.builtin;
  if (const auto &t = s.model.transformer) {
    if (t->dModel % t->heads != 0)
      return error(t->loc, "model.transformer.heads (" + std::to_string(t->heads) +
                               ") must divide d_model (" + std::to_string(t->dModel) + ")",
                   "every head attends over d_model / heads of the width");
    if (t->dropout >= 1.0)
      return error(t->loc, "model.transformer.dropout must be below 1, got " +
                               std::to_string(t->dropout),
                   "it is the probability of dropping an element");
    if (s.task == "regress")
      return error(t->loc, "model.transformer reads tokens; task 'regress' reads numbers",
                   "use task: seq2seq, lm, tag or classify, or model.rnn / model.mlp");
    if (s.task != "seq2seq" && (t->shareEmbeddings || t->decoderLayers > 0))
      return error(t->loc, "share_embeddings and decoder_layers are for task 'seq2seq' (an "
                           "encoder and a decoder), not '" + s.task + "'",
                   "remove them, or set task: seq2seq");
    if (s.task == "seq2seq" && (s.train.teacherForcing.schedule != "constant" ||
                                s.train.teacherForcing.ratio < 1.0))
      return error(s.train.teacherForcing.loc,
                   "scheduled sampling feeds a recurrent decoder its own predictions step by "
                   "step; the Transformer's decoder trains on all positions at once",
                   "remove train.teacher_forcing (teacher forcing is what it trains with)");
    if (t->tieOutput && (s.task == "tag" || s.task == "classify"))
      return error(t->loc, "tie_output shares the embedding table with the output layer, but "
                           "task '" + s.task + "' predicts labels, not tokens",
                   "remove tie_output");
    int64_t decoderLayers = t->decoderLayers > 0 ? t->decoderLayers : t->layers;
    if (s.decode.attentionLayer > decoderLayers)
      return error(s.locOf("decode.attention_layer", s.decode.loc), "decode.attention_layer is " +
                                     std::to_string(s.decode.attentionLayer) +
                                     ", but the decoder has " + std::to_string(decoderLayers) +
                                     " layers",
                   "layers count from 1; 0 plots the last");
    if (s.decode.attentionHead > t->heads)
      return error(s.locOf("decode.attention_head", s.decode.loc), "decode.attention_head is " +
                                     std::to_string(s.decode.attentionHead) + ", but there are " +
                                     std::to_string(t->heads) + " heads",
                   "heads count from 1; 0 plots their mean");
    if (s.model.attention)
      return error(s.model.attention->loc, "model.attention is the recurrent decoder's "
                                           "attention; the Transformer has its own",
                   "remove model.attention");
  }
  if (s.task == "seq2seq") {
    if (s.data.builtin == "sine" || s.data.builtin == "text")
      return error(s.data.loc, "task 'seq2seq' learns from pairs of sequences, but the data is '" +
                                   source + "'",
                   "set data.builtin to copy, reverse or dates, or data.path to a TSV file");
    if (!s.model.rnn && !s.model.transformer)
      return error(s.model.loc, "task 'seq2seq' needs model.rnn (the encoder and decoder cells) "
                                "or model.transformer",
                   "replace model.mlp by model.rnn or model.transformer");
    if (s.model.rnn && s.model.rnn->bidirectional && !s.model.attention)
      return error(s.model.rnn->loc,
                   "a seq2seq encoder without attention hands its final states to a "
                   "unidirectional decoder, so it cannot be bidirectional",
                   "remove model.rnn.bidirectional, or add model.attention");
    if (s.model.rnn && s.model.seq2seq.decoderHidden > 0 && !s.model.attention &&
        s.model.seq2seq.decoderHidden != s.model.rnn->hidden)
      return error(s.model.seq2seq.loc,
                   "model.seq2seq.decoder_hidden differs from model.rnn.hidden, but without "
                   "attention the decoder starts from the encoder's states",
                   "add model.attention, or remove decoder_hidden");
    if (const auto &a = s.model.attention) {
      if (s.model.seq2seq.context != "initial")
        return error(a->loc, "model.attention replaces model.seq2seq.context '" +
                                 s.model.seq2seq.context + "': the context is the attention's",
                     "remove model.seq2seq.context");
      const RnnSpec &r = *s.model.rnn;
      int64_t hidden = s.model.seq2seq.decoderHidden ? s.model.seq2seq.decoderHidden : r.hidden;
      int64_t out = r.cell == "lstm" && r.projection > 0 ? r.projection : hidden;
      int64_t encoded = r.cell == "lstm" && r.projection > 0 ? r.projection : r.hidden;
      int64_t memory = encoded * (r.bidirectional && r.merge == "concat" ? 2 : 1);
      bool dotLike = a->score == "dot" || a->score == "cosine";
      if (a->type != "bahdanau" && dotLike && memory != out)
        return error(a->loc, "score '" + a->score + "' needs encoder states as wide as the "
                                 "decoder's (" + std::to_string(out) + "), but the encoder's are " +
                                 std::to_string(memory) + " wide",
                     "use score: general or concat, or model.rnn.merge: sum");
      AttentionSpec defaults;
      bool cosine = a->type != "bahdanau" && a->score == "cosine";
      if (!cosine && (a->temperature != defaults.temperature || a->learnTemperature))
        return error(s.locOf("model.attention.temperature",
                             s.locOf("model.attention.learn_temperature", a->loc)),
                     "model.attention.temperature and learn_temperature scale the cosine score, "
                     "but this attention's score is " +
                         (a->type == "bahdanau" ? std::string("bahdanau's additive one")
                                                : "'" + a->score + "'"),
                     "remove them, or set type: luong (or local) with score: cosine");
      if (cosine && !(a->temperature > 0))
        return error(s.locOf("model.attention.temperature", a->loc),
                     "model.attention.temperature must be above 0 for the cosine score, got " +
                         std::to_string(a->temperature),
                     "e.g. temperature: 10 (a cosine lies in [-1, 1])");
    }
    if (s.data.builtin == "dates" && s.data.tokens != "char")
      return error(s.data.loc, "the dates data is written character by character",
                   "set data.tokens: char");
    if ((s.data.builtin == "copy" || s.data.builtin == "reverse") &&
        s.data.minLen > s.data.maxLen)
      return error(s.data.loc, "data.min_len (" + std::to_string(s.data.minLen) +
                                   ") is larger than data.max_len (" +
                                   std::to_string(s.data.maxLen) + ")",
                   "");
    if (s.decode.sample && s.decode.beam > 1)
      return error(s.locOf("decode.sample", s.locOf("decode.beam", s.decode.loc)), "decode.sample draws one output per row; beam search keeps "
                                 "the likeliest " + std::to_string(s.decode.beam),
                   "set decode.beam: 1 (or --beam 1) to sample, or drop decode.sample");
    if (s.decode.nbest > s.decode.beam)
      return error(s.locOf("decode.nbest", s.locOf("decode.beam", s.decode.loc)), "decode.nbest (" + std::to_string(s.decode.nbest) +
                                     ") cannot exceed decode.beam (" +
                                     std::to_string(s.decode.beam) + ")",
                   "raise decode.beam or lower decode.nbest");
    return true;
  }
  if (s.model.attention)
    return error(s.model.attention->loc, "model.attention is for task 'seq2seq', not '" +
                                             s.task + "'",
                 "remove model.attention, or set task: seq2seq");
  if (s.task == "tag" || s.task == "classify") {
    std::string wants = s.task == "tag" ? "pos" : "majority";
    if (!s.data.builtin.empty() && s.data.builtin != wants)
      return error(s.data.loc, "task '" + s.task + "' learns from labelled sequences, but the "
                                   "data is '" + source + "'",
                   "set data.builtin: " + wants + ", or data.path to a TSV file");
    if (s.model.mlp)
      return error(s.model.loc, "task '" + s.task + "' needs model.rnn or model.transformer",
                   "replace model.mlp by model.rnn or model.transformer");
    if (s.data.builtin == "majority" && s.data.minLen > s.data.maxLen)
      return error(s.data.loc, "data.min_len (" + std::to_string(s.data.minLen) +
                                   ") is larger than data.max_len (" +
                                   std::to_string(s.data.maxLen) + ")",
                   "");
    return true;
  }
  if (!s.data.path.empty())
    return error(s.data.loc, "data.path (TSV pairs) is for task 'seq2seq', not '" + s.task + "'",
                 "set task: seq2seq");
  if (s.task == "lm" && s.data.builtin != "text")
    return error(s.data.loc, "task 'lm' learns from text, but data.builtin is '" +
                                 s.data.builtin + "'",
                 "set data.builtin: text");
  if (s.task == "lm" && s.model.mlp)
    return error(s.model.loc, "task 'lm' needs model.rnn or model.transformer",
                 "replace model.mlp by model.rnn or model.transformer");
  if (s.task == "lm" && s.model.rnn && s.model.rnn->bidirectional)
    return error(s.model.rnn->loc,
                 "task 'lm' predicts the next character, so its rnn must not read ahead",
                 "remove model.rnn.bidirectional");
  if (s.task == "regress" && s.data.builtin != "sine")
    return error(s.data.loc, "task 'regress' learns from numbers, but data.builtin is '" +
                                 s.data.builtin + "'",
                 "set data.builtin: sine, or task: lm");
  if (s.task == "regress" && s.model.output.size != 1)
    return error(s.model.output.loc, "data.builtin sine has one target per example, but "
                                     "model.output.size is " + std::to_string(s.model.output.size),
                 "set model.output.size to 1");
  return true;
}

} // namespace attn::yaml
