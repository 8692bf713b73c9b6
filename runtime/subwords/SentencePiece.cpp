// Subword models over SentencePiece (the library Marian, OpenNMT and CTranslate2 use), registered
// with attn::data's Tokenizer when this library is linked in: attnc links it whole, and so does
// an executable or library whose model uses subwords (compiler/Driver/Executable.cpp).
#include "attn/data/Tokenizer.h"

#include <iostream>
#include <sentencepiece_processor.h>
#include <sentencepiece_trainer.h>

#include <stdexcept>
#include <unordered_map>

// What a subword model's compiled bundle references, so that a static link takes this object
// (and its registration) from the archive.
extern "C" const char attn_subwords_linked = 1;

namespace attn::subwords {

namespace {

class Model : public data::SubwordModel {
public:
  Model(const std::string &bytes, const std::string &what) : serialized(bytes) {
    sentencepiece::util::Status status = processor.LoadFromSerializedProto(bytes);
    if (!status.ok())
      throw std::runtime_error(what + ": not a SentencePiece model (" + status.ToString() + ")");
  }
  std::vector<std::string> encode(const std::string &line) const override {
    std::vector<std::string> pieces;
    sentencepiece::util::Status status = processor.Encode(line, &pieces);
    if (!status.ok())
      throw std::runtime_error("cannot split into subwords: " + status.ToString());
    return pieces;
  }
  std::string decode(const std::vector<std::string> &pieces) const override {
    std::string text;
    sentencepiece::util::Status status = processor.Decode(pieces, &text);
    if (!status.ok())
      throw std::runtime_error("cannot join subwords: " + status.ToString());
    return text;
  }
  const std::string &bytes() const override { return serialized; }

private:
  sentencepiece::SentencePieceProcessor processor;
  std::string serialized;
};

// The training text, one line at a time, as SentencePiece's trainer reads it.
class Lines : public sentencepiece::SentenceIterator {
public:
  explicit Lines(const std::vector<std::string> &lines) : lines(lines) {}
  bool done() const override { return i >= lines.size(); }
  void Next() override { ++i; }
  const std::string &value() const override { return lines[i]; }
  sentencepiece::util::Status status() const override { return {}; }

private:
  const std::vector<std::string> &lines;
  size_t i = 0;
};

std::shared_ptr<const data::SubwordModel> load(const std::string &bytes, const std::string &what) {
  return std::make_shared<Model>(bytes, what);
}

// The longest sentence the trainer sees, in bytes (SentencePiece's own default): its memory
// grows about 240-fold with a sentence's bytes (a 20 MB line took 4.9 GB), so longer lines are
// left out of the subword model's training, and said. They are still tokenized with it.
constexpr size_t kMaxSentenceBytes = 4192;

std::string train(data::Tokenize kind, const std::vector<std::string> &all, int64_t vocabSize,
                  const std::string &what) {
  std::vector<std::string> lines;
  size_t leftOut = 0;
  for (const std::string &line : all)
    if (line.size() <= kMaxSentenceBytes)
      lines.push_back(line);
    else
      ++leftOut;
  if (leftOut)
    std::cerr << "attn: note: " << leftOut << " of " << all.size() << " lines of " << what
              << " are longer than " << kMaxSentenceBytes
              << " bytes and were left out of the subword model's training\n";
  // Lossless (identity normalisation, spaces as written: outputs compare with references as
  // text), every character covered, a vocabulary that may stop short of vocabSize on a small
  // corpus, one thread so that two runs over the same lines give the same model.
  std::unordered_map<std::string, std::string> options = {
      {"model_type", data::tokenizeName(kind)},
      {"vocab_size", std::to_string(vocabSize)},
      {"hard_vocab_limit", "false"},
      {"character_coverage", "1.0"},
      {"normalization_rule_name", "identity"},
      {"remove_extra_whitespaces", "false"},
      {"num_threads", "1"},
      {"max_sentence_length", std::to_string(kMaxSentenceBytes)},
      {"minloglevel", "2"},
  };
  Lines text(lines);
  std::string bytes;
  sentencepiece::util::Status status =
      sentencepiece::SentencePieceTrainer::Train(options, &text, &bytes);
  if (!status.ok())
    throw std::runtime_error(what + ": cannot train a " + data::tokenizeName(kind) +
                             " model of " + std::to_string(vocabSize) +
                             " pieces: " + status.ToString());
  return bytes;
}

const data::SubwordBackend kBackend = {load, train};

// Registers the backend when this object is linked in.
[[maybe_unused]] const bool registered = (data::registerSubwordBackend(&kBackend), true);

} // namespace

} // namespace attn::subwords
