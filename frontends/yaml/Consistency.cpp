// Combinations of keys that the schema alone cannot rule out (Spec.h: checkConsistency): the
// checks every model shares, then its family's (Family.h). Every problem is reported.
#include "frontends/yaml/Family.h"

namespace attn::yaml {
namespace {

// Keys that do not apply to the model are errors rather than silently ignored. A key at its
// default passes (a checkpoint's stored spec spells every key out).
// data.tokens and the keys that only some of its values read.
void checkTokens(const Spec &s, Problems &p) {
  const DataSpec &d = s.data;
  bool subwords = d.tokens == Tokens::Unigram || d.tokens == Tokens::Bpe ||
                  d.tokens == Tokens::Sentencepiece;
  if (subwords && s.task != Task::Seq2seq && s.task != Task::Classify && s.task != Task::Lm)
    p.error("data.tokens", d.loc,
            "data.tokens: " + nameOf(d.tokens) + " splits words into subwords, which task '" +
                nameOf(s.task) + "' cannot read" +
                (s.task == Task::Tag ? ": a tagger's file gives one tag per word" : ""),
            "set data.tokens: word (or char)");
  if (d.tokens == Tokens::Sentencepiece && d.spmModel.empty())
    p.error("data.tokens", d.loc, "data.tokens: sentencepiece reads the model in data.spm_model",
            "set data.spm_model to a SentencePiece .model file, or data.tokens: unigram | bpe "
            "to train one");
  if (!d.spmModel.empty() && d.tokens != Tokens::Sentencepiece)
    p.error("data.spm_model", d.loc,
            "data.spm_model is read with data.tokens: sentencepiece, not '" + nameOf(d.tokens) +
                "'",
            "set data.tokens: sentencepiece, or remove data.spm_model");
  // (Compared with the default, not looked up as written: a checkpoint's spec writes every key.)
  if (d.vocabSize != DataSpec().vocabSize && d.tokens != Tokens::Unigram && d.tokens != Tokens::Bpe)
    p.error("data.vocab_size", d.loc,
            "data.vocab_size sizes the subword models of data.tokens: unigram | bpe, not '" +
                nameOf(d.tokens) + "'",
            "remove data.vocab_size (data.max_vocab caps a word or character vocabulary)");
  if (d.stream && (d.path.empty() || !(s.task == Task::Seq2seq || s.task == Task::Tag ||
                                         s.task == Task::Classify || s.task == Task::Lm)))
    p.error("data.stream", d.loc,
            "data.stream reads the text (pairs) of data.path" +
                std::string(d.path.empty() ? ", but there is none" : "; task '" + nameOf(s.task) +
                                                                          "' reads none"),
            "set data.path to a TSV file of a seq2seq, tag or classify task, or a text file "
            "of a language model, or remove data.stream");
  if (d.skipBadLines && d.path.empty())
    p.error("data.skip_bad_lines", d.loc, "data.skip_bad_lines is for the lines of data.path",
            "set data.path to a file, or remove data.skip_bad_lines");
  if (d.streamBuffer != DataSpec().streamBuffer && !d.stream)
    p.error("data.stream_buffer", d.loc, "data.stream_buffer sizes the blocks of data.stream",
            "set data.stream: true, or remove data.stream_buffer");
  if (d.sharedVocab && s.task != Task::Seq2seq)
    p.error("data.shared_vocab", d.loc,
            "data.shared_vocab shares one vocabulary between a seq2seq model's source and "
            "target; task '" + nameOf(s.task) + "' has one",
            "remove data.shared_vocab");
}

void checkShared(const Spec &s, Problems &p) {
  checkTokens(s, p);
  if (s.train.evalEvery == 0 && s.train.patience > 0)
    p.error("train.early_stopping.patience", s.train.loc,
            "train.early_stopping watches the validation loss, which train.eval_every: 0 turns "
            "off",
            "set train.eval_every above 0, or train.early_stopping.patience: 0");
  if (s.train.evalEvery == 0 && s.train.evalBleu)
    p.error("train.eval_bleu", s.train.loc,
            "train.eval_bleu decodes at each validation pass, which train.eval_every: 0 turns off",
            "set train.eval_every above 0, or remove train.eval_bleu");
  if (const auto &r = s.model.rnn) {
    RnnSpec defaults;
    if (r->dropout >= 1.0)
      p.error(r->loc, "model.rnn.dropout must be below 1, got " + std::to_string(r->dropout),
              "it is the probability of dropping an element");
    if (r->projection != defaults.projection && r->cell != Cell::Lstm)
      p.error(r->loc, "model.rnn.projection is for the lstm cell, not '" + nameOf(r->cell) + "'",
              "remove projection, or set cell: lstm");
    if (r->peephole != Peephole::None && r->cell != Cell::Lstm)
      p.error(r->loc, "model.rnn.peephole is for the lstm cell, not '" + nameOf(r->cell) + "'",
              "remove peephole, or set cell: lstm");
    if (r->feed != defaults.feed && !oneToMany(s))
      p.error("model.rnn.feed", r->loc,
              "model.rnn.feed says where a one-to-many model's input vector enters, but this "
              "model reads a sequence",
              "remove model.rnn.feed, or set task: regress with data.builtin: wave (or a "
              "data.path file of vectors, data.features)");
    if (r->gruForm != defaults.gruForm && r->cell != Cell::Gru)
      p.error(r->loc, "model.rnn.gru_form is for the gru cell, not '" + nameOf(r->cell) + "'",
              "remove gru_form, or set cell: gru");
  }
  if (s.model.transformer && s.model.embedding.dim != EmbeddingSpec().dim)
    p.error(s.model.embedding.loc,
            "model.embedding.dim does not apply to a Transformer: its embeddings are d_model "
            "wide",
            "remove model.embedding, and set model.transformer.d_model");
  if (s.model.conv && s.model.embedding.dim != EmbeddingSpec().dim)
    p.error(s.model.embedding.loc,
            "model.embedding.dim does not apply to a convolutional model: its embeddings are "
            "model.conv.embedding wide",
            "remove model.embedding, and set model.conv.embedding");
  if (s.train.evalBleu && s.task != Task::Seq2seq)
    p.error("train.eval_bleu", s.train.loc,
            "train.eval_bleu scores the decoded translations of task 'seq2seq', not this '" +
                nameOf(s.task) + "' model",
            "remove train.eval_bleu");
  if (s.train.batchTokens > 0 &&
      !((s.task == Task::Seq2seq || s.task == Task::Tag || s.task == Task::Classify) &&
        !s.model.graph))
    p.error("train.batch_tokens", s.train.loc,
            "train.batch_tokens groups the text pairs of a seq2seq, tag or classify model by "
            "length; " +
                std::string(s.model.graph ? "a model.graph's shapes are its own"
                                          : "task '" + nameOf(s.task) + "' reads no pairs"),
            "remove train.batch_tokens, and set train.batch_size");
  if (s.train.lengthBuckets != TrainSpec().lengthBuckets && s.train.batchTokens == 0)
    p.error("train.length_buckets", s.train.loc,
            "train.length_buckets counts the batch shapes of train.batch_tokens, which is not set",
            "set train.batch_tokens, or remove train.length_buckets");
  const auto &tf = s.train.teacherForcing;
  if (s.task != Task::Seq2seq && !forecaster(s) &&
      (tf.schedule != TeacherSchedule::Constant || tf.ratio != 1.0))
    p.error(tf.loc,
            "train.teacher_forcing is for decoders: task 'seq2seq', or a 'regress' forecaster "
            "(model.rnn with data.horizon > 1), not this '" +
                nameOf(s.task) + "' model",
            "remove train.teacher_forcing");
  const Seq2SeqSpec &ss = s.model.seq2seq, plain;
  if (s.task != Task::Seq2seq &&
      (ss.context != plain.context || ss.reverseSource != plain.reverseSource ||
       ss.decoderHidden != plain.decoderHidden))
    p.error(ss.loc,
            "model.seq2seq shapes the encoder-decoder of task 'seq2seq', not this '" +
                nameOf(s.task) + "' model" +
                (s.task == Task::Regress ? " (a forecaster's decoder is model.rnn's shape)" : ""),
            "remove model.seq2seq");
  if (s.data.features != DataSpec().features && s.task != Task::Regress)
    p.error("data.features", s.data.loc,
            "data.features is the width of a 'regress' file's vectors, not for a '" +
                nameOf(s.task) + "' model",
            "remove data.features");
  if (s.data.horizon != DataSpec().horizon && s.task != Task::Regress)
    p.error("data.horizon", s.data.loc,
            "data.horizon is the number of values a 'regress' model predicts, not a '" +
                nameOf(s.task) + "' one",
            "remove data.horizon");
  if (tf.schedule == TeacherSchedule::Exponential && !(tf.k > 0 && tf.k < 1))
    p.error(tf.loc,
            "train.teacher_forcing.k must be above 0 and below 1 for the exponential "
            "schedule (p = k^i), got " +
                std::to_string(tf.k),
            "e.g. k: 0.999");
  if (tf.schedule == TeacherSchedule::InverseSigmoid && tf.k < 1)
    p.error(tf.loc, "train.teacher_forcing.k must be >= 1 for the inverse_sigmoid schedule "
                    "(p = k / (k + exp(i / k))), got " + std::to_string(tf.k),
            "e.g. k: 500");
  if (s.model.attention && s.task != Task::Seq2seq && !s.model.transformer)
    p.error(s.model.attention->loc,
            "model.attention is for task 'seq2seq', not '" + nameOf(s.task) + "'",
            "remove model.attention, or set task: seq2seq");
}

} // namespace

bool checkConsistency(const Spec &s, std::vector<Diagnostic> &diags) {
  Problems problems(s, diags);
  checkShared(s, problems);
  if (const Family *family = familyOf(s))
    family->validate(s, problems);
  else
    problems.error(s.locOf("task", Loc{s.file, 1, 1}),
                   "no model family takes task '" + nameOf(s.task) + "'");
  return problems.count() == 0;
}

} // namespace attn::yaml
