#include "Compiler.h"

#include "compiler/Pipelines/Pipelines.h"
#include "frontends/yaml/Importer.h"

#include "Data.h"

#include "mlir/IR/Verifier.h"
#include "mlir/Pass/PassManager.h"

#include <iostream>

namespace attnc {

static mlir::DialectRegistry makeRegistry() {
  mlir::DialectRegistry registry;
  attn::pipelines::registerDialects(registry);
  return registry;
}

Compiler::Compiler() : context_(makeRegistry()) { context_.loadAllAvailableDialects(); }

bool Compiler::load(const std::string &path,
                    const std::vector<attn::yaml::Override> &overrides) {
  std::vector<attn::yaml::Diagnostic> diags;
  spec_ = attn::yaml::parseSpecFile(path, overrides, diags);
  for (const auto &d : diags)
    std::cerr << d.str() << "\n";
  return spec_.has_value();
}

bool Compiler::loadText(const std::string &text, const std::string &name,
                        const std::vector<attn::yaml::Override> &overrides) {
  std::vector<attn::yaml::Diagnostic> diags;
  spec_ = attn::yaml::parseSpecString(text, name, overrides, diags);
  for (const auto &d : diags)
    std::cerr << d.str() << "\n";
  return spec_.has_value();
}

// Combinations the schema alone cannot rule out, reported like the parser's errors.
static bool checkConsistency(const attn::yaml::Spec &s) {
  auto error = [&](const attn::yaml::Loc &loc, const std::string &msg, const std::string &hint) {
    std::cerr << attn::yaml::Diagnostic{loc, msg, hint}.str() << "\n";
    return false;
  };
  if (s.model.rnn && s.model.rnn->dropout >= 1.0)
    return error(s.model.rnn->loc, "model.rnn.dropout must be below 1, got " +
                                       std::to_string(s.model.rnn->dropout),
                 "it is the probability of dropping an element");
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
      return error(s.decode.loc, "decode.attention_layer is " +
                                     std::to_string(s.decode.attentionLayer) +
                                     ", but the decoder has " + std::to_string(decoderLayers) +
                                     " layers",
                   "layers count from 1; 0 plots the last");
    if (s.decode.attentionHead > t->heads)
      return error(s.decode.loc, "decode.attention_head is " +
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
      const attn::yaml::RnnSpec &r = *s.model.rnn;
      int64_t hidden = s.model.seq2seq.decoderHidden ? s.model.seq2seq.decoderHidden : r.hidden;
      int64_t out = r.cell == "lstm" && r.projection > 0 ? r.projection : hidden;
      int64_t encoded = r.cell == "lstm" && r.projection > 0 ? r.projection : r.hidden;
      int64_t memory = encoded * (r.bidirectional && r.merge == "concat" ? 2 : 1);
      if (a->type != "bahdanau" && a->score == "dot" && memory != out)
        return error(a->loc, "score 'dot' needs encoder states as wide as the decoder's (" +
                                 std::to_string(out) + "), but the encoder's are " +
                                 std::to_string(memory) + " wide",
                     "use score: general or concat, or model.rnn.merge: sum");
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
      return error(s.decode.loc, "decode.sample draws one output per row; beam search keeps "
                                 "the likeliest " + std::to_string(s.decode.beam),
                   "set decode.beam: 1 (or --beam 1) to sample, or drop decode.sample");
    if (s.decode.nbest > s.decode.beam)
      return error(s.decode.loc, "decode.nbest (" + std::to_string(s.decode.nbest) +
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

bool Compiler::import() {
  if (!checkConsistency(*spec_))
    return false;
  if (uncached_ && !(spec_->model.transformer && spec_->task == "seq2seq")) {
    std::cerr << attn::yaml::Diagnostic{spec_->model.loc,
                                        "--no-cache decodes a Transformer encoder-decoder without "
                                        "its key/value cache, but this model has none",
                                        "drop --no-cache"}
                     .str()
              << "\n";
    return false;
  }
  attn::yaml::ImportOptions options;
  if (importOptions_)
    options = *importOptions_;
  else if (spec_->task == "lm")
    options.vocabSize = textVocab().size();
  else if (usesPairs(*spec_))
    options = pairImportOptions(pairData(*spec_));
  options.decodeFull = uncached_;
  module_ = attn::yaml::importSpec(*spec_, context_, options);
  return module_ && succeeded(mlir::verify(*module_));
}

bool Compiler::fuse() {
  mlir::PassManager pm(&context_);
  if (fuse_)
    attn::pipelines::buildFusion(pm);
  return succeeded(pm.run(*module_));
}

bool Compiler::addTraining() {
  mlir::PassManager pm(&context_);
  // Fusion first, so that a fused op differentiates as one op (its backward is oneDNN's).
  if (fuse_)
    attn::pipelines::buildFusion(pm);
  attn::yaml::addTrainingPasses(pm, spec_->train);
  return succeeded(pm.run(*module_));
}

bool Compiler::lower() {
  mlir::PassManager pm(&context_);
  attn::pipelines::buildAttnToLowered(pm, fuse_);
  if (failed(pm.run(*module_)))
    return false;
  auto manifest =
      attn::target::readManifest(*module_, spec_->name, attn::yaml::cName(spec_->name));
  if (failed(manifest))
    return false;
  manifest_ = std::move(*manifest);
  return true;
}

bool Compiler::lowerToLLVM() {
  mlir::PassManager pm(&context_);
  attn::pipelines::buildLoweredToLLVM(pm, attn::target::entryPrefix(manifest_->cname));
  return succeeded(pm.run(*module_));
}

std::unique_ptr<attn::target::JitProgram> Compiler::jit() {
  auto program = attn::target::JitProgram::create(*module_, *manifest_);
  if (!program) {
    std::cerr << "attnc: error: JIT compilation failed: " << llvm::toString(program.takeError())
              << "\n";
    return nullptr;
  }
  return std::move(*program);
}

} // namespace attnc
