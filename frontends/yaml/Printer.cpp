// Spec -> YAML: the validated spec with every default filled in. `attnc emit --stage=spec`
// prints it, and checkpoints carry it, so a checkpoint alone can rebuild its model.
#include "frontends/yaml/Spec.h"

#include <sstream>

namespace attn::yaml {
namespace {
// A YAML double-quoted scalar.
std::string quoted(const std::string &text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\')
      out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out + "\"";
}
} // namespace

std::string specToYaml(const Spec &s) {
  std::ostringstream os;
  os.precision(9);
  os << "name: " << s.name << "\ntask: " << s.task << "\n";
  os << "data:\n";
  if (!s.data.builtin.empty())
    os << "  builtin: " << s.data.builtin << "\n";
  if (!s.data.path.empty())
    os << "  path: " << quoted(s.data.path) << "\n";
  os << "  valid_path: " << quoted(s.data.validPath) << "\n  window: " << s.data.window
     << "\n  min_len: " << s.data.minLen << "\n  max_len: " << s.data.maxLen
     << "\n  symbols: " << s.data.symbols << "\n  tokens: " << s.data.tokens
     << "\n  min_count: " << s.data.minCount << "\n  max_vocab: " << s.data.maxVocab
     << "\n  train: " << s.data.train << "\n  valid: " << s.data.valid
     << "\n  seed: " << s.data.seed << "\n";
  os << "model:\n";
  if (s.model.mlp) {
    os << "  mlp:\n    hidden: [";
    for (size_t i = 0; i < s.model.mlp->hidden.size(); ++i)
      os << (i ? ", " : "") << s.model.mlp->hidden[i];
    os << "]\n    activation: " << s.model.mlp->activation << "\n";
  }
  if (s.model.rnn)
    os << "  rnn:\n    cell: " << s.model.rnn->cell << "\n    hidden: " << s.model.rnn->hidden
       << "\n    layers: " << s.model.rnn->layers << "\n    gru_form: " << s.model.rnn->gruForm
       << "\n    peephole: " << (s.model.rnn->peephole ? "true" : "false")
       << "\n    projection: " << s.model.rnn->projection
       << "\n    bidirectional: " << (s.model.rnn->bidirectional ? "true" : "false")
       << "\n    merge: " << s.model.rnn->merge << "\n    dropout: " << s.model.rnn->dropout
       << "\n";
  if (const auto &t = s.model.transformer)
    os << "  transformer:\n    layers: " << t->layers << "\n    decoder_layers: "
       << t->decoderLayers << "\n    d_model: " << t->dModel << "\n    heads: " << t->heads
       << "\n    ffn: " << t->ffn << "\n    activation: " << t->activation
       << "\n    norm: " << t->norm << "\n    positions: " << t->positions
       << "\n    dropout: " << t->dropout
       << "\n    share_embeddings: " << (t->shareEmbeddings ? "true" : "false")
       << "\n    tie_output: " << (t->tieOutput ? "true" : "false") << "\n";
  os << "  embedding:\n    dim: " << s.model.embedding.dim << "\n";
  os << "  seq2seq:\n    context: " << s.model.seq2seq.context << "\n    reverse_source: "
     << (s.model.seq2seq.reverseSource ? "true" : "false")
     << "\n    decoder_hidden: " << s.model.seq2seq.decoderHidden << "\n";
  if (const auto &a = s.model.attention)
    os << "  attention:\n    type: " << a->type << "\n    score: " << a->score
       << "\n    dim: " << a->dim << "\n    align: " << a->align << "\n    window: " << a->window
       << "\n    input_feeding: " << (a->inputFeeding ? "true" : "false") << "\n";
  os << "  output:\n    size: " << s.model.output.size << "\n";
  os << "sample:\n  length: " << s.sample.length << "\n  temperature: " << s.sample.temperature
     << "\n  top_k: " << s.sample.topK << "\n  seed: " << s.sample.seed << "\n  prime: " << quoted(s.sample.prime) << "\n";
  const TrainSpec &t = s.train;
  os << "train:\n  batch_size: " << t.batchSize << "\n  seed: " << t.seed
     << "\n  steps: " << t.steps << "\n  optimizer:\n    type: " << t.optimizer.type
     << "\n    lr: " << t.optimizer.lr << "\n    momentum: " << t.optimizer.momentum
     << "\n    beta1: " << t.optimizer.beta1 << "\n    beta2: " << t.optimizer.beta2
     << "\n    epsilon: " << t.optimizer.epsilon
     << "\n    weight_decay: " << t.optimizer.weightDecay << "\n  schedule:\n    type: "
     << t.schedule.type << "\n    warmup: " << t.schedule.warmup
     << "\n    step_size: " << t.schedule.stepSize << "\n    gamma: " << t.schedule.gamma
     << "\n    min_lr: " << t.schedule.minLr << "\n  clip_norm: " << t.clipNorm
     << "\n  eval_every: " << t.evalEvery << "\n  log_every: " << t.logEvery
     << "\n  checkpoint:\n    every: " << t.checkpointEvery << "\n    dir: "
     << quoted(t.checkpointDir) << "\n  early_stopping:\n    patience: " << t.patience
     << "\n    min_delta: " << t.minDelta << "\n  label_smoothing: " << t.labelSmoothing
     << "\n  teacher_forcing:\n    schedule: " << t.teacherForcing.schedule
     << "\n    ratio: " << t.teacherForcing.ratio << "\n    slope: " << t.teacherForcing.slope
     << "\n    k: " << t.teacherForcing.k << "\n    min: " << t.teacherForcing.min << "\n";
  const DecodeSpec &d = s.decode;
  os << "decode:\n  beam: " << d.beam << "\n  length_penalty: " << d.lengthPenalty
     << "\n  max_length: " << d.maxLength << "\n  nbest: " << d.nbest << "\n  batch: "
     << d.batch << "\n  attention_layer: " << d.attentionLayer
     << "\n  attention_head: " << d.attentionHead
     << "\n  sample: " << (d.sample ? "true" : "false") << "\n  temperature: " << d.temperature
     << "\n  top_k: " << d.topK << "\n  seed: " << d.seed << "\n";
  return os.str();
}

} // namespace attn::yaml
