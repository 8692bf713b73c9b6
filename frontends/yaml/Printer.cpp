// Spec -> YAML: the validated spec with every default filled in. `attnc emit --stage=spec`
// prints it, and checkpoints carry it, so a checkpoint alone can rebuild its model. yaml-cpp's
// emitter writes it: free text (names, paths, the sampling prime) is double-quoted, so a name
// such as "a: b", "null" or "[1, 2]" reads back as the same string; numbers are written in
// their shortest form that reads back to the same double.
#include "frontends/yaml/Spec.h"

#include <yaml-cpp/yaml.h>

#include <charconv>

namespace attn::yaml {
namespace {

class Printer {
public:
  // Opens the map `key: {...}`; close it with end().
  Printer &map(const char *key) {
    out << YAML::Key << key << YAML::Value << YAML::BeginMap;
    return *this;
  }
  Printer &end() {
    out << YAML::EndMap;
    return *this;
  }
  // An identifier-like value (enums: task, cell, ...), written plain.
  Printer &word(const char *key, const std::string &value) {
    out << YAML::Key << key << YAML::Value << value;
    return *this;
  }
  // Free text, always double-quoted.
  Printer &text(const char *key, const std::string &value) {
    out << YAML::Key << key << YAML::Value << YAML::DoubleQuoted << value;
    return *this;
  }
  Printer &integer(const char *key, int64_t value) {
    out << YAML::Key << key << YAML::Value << std::to_string(value);
    return *this;
  }
  Printer &unsignedInt(const char *key, uint64_t value) {
    out << YAML::Key << key << YAML::Value << std::to_string(value);
    return *this;
  }
  Printer &real(const char *key, double value) {
    char buf[64];
    auto [end, ec] = std::to_chars(buf, buf + sizeof buf, value); // shortest exact form
    std::string s(buf, ec == std::errc() ? end : buf);
    // "3" would read back as an integer where the schema wants a float: keep it a float.
    if (s.find_first_of(".eEn") == std::string::npos)
      s += ".0";
    out << YAML::Key << key << YAML::Value << s;
    return *this;
  }
  Printer &flag(const char *key, bool value) {
    out << YAML::Key << key << YAML::Value << (value ? "true" : "false");
    return *this;
  }
  Printer &integers(const char *key, const std::vector<int64_t> &values) {
    out << YAML::Key << key << YAML::Value << YAML::Flow << YAML::BeginSeq;
    for (int64_t v : values)
      out << std::to_string(v);
    out << YAML::EndSeq;
    return *this;
  }

  YAML::Emitter out;
};

} // namespace

std::string specToYaml(const Spec &s) {
  Printer p;
  p.out << YAML::BeginMap;
  p.text("name", s.name).word("task", s.task);

  const DataSpec &data = s.data;
  p.map("data");
  if (!data.builtin.empty())
    p.word("builtin", data.builtin);
  if (!data.path.empty())
    p.text("path", data.path);
  p.text("valid_path", data.validPath)
      .integer("window", data.window)
      .integer("min_len", data.minLen)
      .integer("max_len", data.maxLen)
      .integer("symbols", data.symbols)
      .word("tokens", data.tokens)
      .integer("min_count", data.minCount)
      .integer("max_vocab", data.maxVocab)
      .integer("train", data.train)
      .integer("valid", data.valid)
      .unsignedInt("seed", data.seed)
      .end();

  p.map("model");
  if (const auto &m = s.model.mlp)
    p.map("mlp").integers("hidden", m->hidden).word("activation", m->activation).end();
  if (const auto &r = s.model.rnn)
    p.map("rnn")
        .word("cell", r->cell)
        .integer("hidden", r->hidden)
        .integer("layers", r->layers)
        .word("gru_form", r->gruForm)
        .flag("peephole", r->peephole)
        .integer("projection", r->projection)
        .flag("bidirectional", r->bidirectional)
        .word("merge", r->merge)
        .real("dropout", r->dropout)
        .end();
  if (const auto &t = s.model.transformer)
    p.map("transformer")
        .integer("layers", t->layers)
        .integer("decoder_layers", t->decoderLayers)
        .integer("d_model", t->dModel)
        .integer("heads", t->heads)
        .integer("ffn", t->ffn)
        .word("activation", t->activation)
        .word("norm", t->norm)
        .word("positions", t->positions)
        .real("dropout", t->dropout)
        .flag("share_embeddings", t->shareEmbeddings)
        .flag("tie_output", t->tieOutput)
        .end();
  p.map("embedding").integer("dim", s.model.embedding.dim).end();
  p.map("seq2seq")
      .word("context", s.model.seq2seq.context)
      .flag("reverse_source", s.model.seq2seq.reverseSource)
      .integer("decoder_hidden", s.model.seq2seq.decoderHidden)
      .end();
  if (const auto &a = s.model.attention)
    p.map("attention")
        .word("type", a->type)
        .word("score", a->score)
        .integer("dim", a->dim)
        .word("align", a->align)
        .integer("window", a->window)
        .flag("input_feeding", a->inputFeeding)
        .real("temperature", a->temperature)
        .flag("learn_temperature", a->learnTemperature)
        .end();
  p.map("output").integer("size", s.model.output.size).end();
  p.end(); // model

  p.map("sample")
      .integer("length", s.sample.length)
      .real("temperature", s.sample.temperature)
      .integer("top_k", s.sample.topK)
      .unsignedInt("seed", s.sample.seed)
      .text("prime", s.sample.prime)
      .end();

  const TrainSpec &t = s.train;
  p.map("train").integer("batch_size", t.batchSize).unsignedInt("seed", t.seed).integer("steps", t.steps);
  p.map("optimizer")
      .word("type", t.optimizer.type)
      .real("lr", t.optimizer.lr)
      .real("momentum", t.optimizer.momentum)
      .real("beta1", t.optimizer.beta1)
      .real("beta2", t.optimizer.beta2)
      .real("epsilon", t.optimizer.epsilon)
      .real("weight_decay", t.optimizer.weightDecay)
      .end();
  p.map("schedule")
      .word("type", t.schedule.type)
      .integer("warmup", t.schedule.warmup)
      .integer("step_size", t.schedule.stepSize)
      .real("gamma", t.schedule.gamma)
      .real("min_lr", t.schedule.minLr)
      .end();
  p.real("clip_norm", t.clipNorm).integer("eval_every", t.evalEvery).integer("log_every", t.logEvery);
  p.map("checkpoint").integer("every", t.checkpointEvery).text("dir", t.checkpointDir).end();
  p.map("early_stopping").integer("patience", t.patience).real("min_delta", t.minDelta).end();
  p.real("label_smoothing", t.labelSmoothing);
  p.map("teacher_forcing")
      .word("schedule", t.teacherForcing.schedule)
      .real("ratio", t.teacherForcing.ratio)
      .real("slope", t.teacherForcing.slope)
      .real("k", t.teacherForcing.k)
      .real("min", t.teacherForcing.min)
      .end();
  p.end(); // train

  const DecodeSpec &d = s.decode;
  p.map("decode")
      .integer("beam", d.beam)
      .real("length_penalty", d.lengthPenalty)
      .integer("max_length", d.maxLength)
      .integer("nbest", d.nbest)
      .integer("batch", d.batch)
      .integer("attention_layer", d.attentionLayer)
      .integer("attention_head", d.attentionHead)
      .flag("sample", d.sample)
      .real("temperature", d.temperature)
      .integer("top_k", d.topK)
      .unsignedInt("seed", d.seed)
      .end();
  p.out << YAML::EndMap;
  return std::string(p.out.c_str()) + "\n";
}

} // namespace attn::yaml
