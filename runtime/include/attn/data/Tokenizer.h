// How a line of text becomes tokens and back: characters, words, or subwords (a SentencePiece
// model, unigram or BPE, trained on the training side or given by the user). A subword
// tokenizer carries its model, which checkpoints store (serialize), so that translate, an
// executable and a library split and join text exactly as training did.
#ifndef ATTN_DATA_TOKENIZER_H
#define ATTN_DATA_TOKENIZER_H

#include "attn/data/Vocab.h"

#include <memory>
#include <string>
#include <vector>

namespace attn::data {

// A subword model: SentencePiece's, behind this interface so that the runtime links
// SentencePiece only where subwords are used (runtime/subwords registers it: attnc links it,
// and an executable or library whose model uses subwords).
class SubwordModel {
public:
  virtual ~SubwordModel() = default;
  virtual std::vector<std::string> encode(const std::string &line) const = 0;
  virtual std::string decode(const std::vector<std::string> &pieces) const = 0;
  // The serialized model (a .model file's bytes).
  virtual const std::string &bytes() const = 0;
};
struct SubwordBackend {
  // Throw std::runtime_error naming `what`.
  std::shared_ptr<const SubwordModel> (*load)(const std::string &bytes, const std::string &what);
  std::string (*train)(Tokenize kind, const std::vector<std::string> &lines, int64_t vocabSize,
                       const std::string &what);
};
void registerSubwordBackend(const SubwordBackend *backend);

// The kinds a spec names (data.tokens); Unigram, Bpe and SentencePiece are subwords.
const char *tokenizeName(Tokenize kind);
// "char", "word", "unigram", "bpe", "sentencepiece"; throws std::runtime_error otherwise.
Tokenize parseTokenize(const std::string &name);
inline bool isSubwords(Tokenize kind) {
  return kind == Tokenize::Unigram || kind == Tokenize::Bpe || kind == Tokenize::SentencePiece;
}

class Tokenizer {
public:
  // Characters or words (implicit: where a Tokenize was passed, a Tokenizer is). A subword kind
  // needs a model: train() or load() it; here it throws std::logic_error.
  Tokenizer(Tokenize kind = Tokenize::Word);

  // A SentencePiece model of `kind` (Unigram or Bpe) trained on `lines` with about
  // `vocabSize` pieces (fewer when the text has fewer), lossless (no normalisation; spaces
  // kept), deterministic for the same lines. Throws std::runtime_error with SentencePiece's
  // reason (`what` names the data in it).
  static Tokenizer train(Tokenize kind, const std::vector<std::string> &lines, int64_t vocabSize,
                         const std::string &what);
  // A serialized SentencePiece model (the bytes of a .model file) as `kind` (Unigram, Bpe or
  // SentencePiece); throws std::runtime_error naming `what` when it is not one.
  static Tokenizer load(Tokenize kind, const std::string &model, const std::string &what);

  Tokenize kind() const { return kind_; }
  std::vector<std::string> tokenize(const std::string &line) const;
  // The inverse: Char concatenates, Word joins with single spaces, subwords decode the pieces
  // (SentencePiece writes an unknown piece as " \u2047 ").
  std::string detokenize(const std::vector<std::string> &tokens) const;
  // The serialized SentencePiece model ("" for characters and words): a .model file's bytes.
  const std::string &model() const;

  // A text form for checkpoint metadata (printable ASCII):
  //   "attn-tokenizer 1 <kind>\n" then, for subwords, the model in base64.
  // deserialize() throws std::runtime_error ("<what>: ...") on anything else.
  std::string serialize() const;
  static Tokenizer deserialize(const std::string &text, const std::string &what);

  bool operator==(const Tokenizer &other) const;
  bool operator!=(const Tokenizer &other) const { return !(*this == other); }

private:
  Tokenize kind_;
  std::shared_ptr<const SubwordModel> model_; // subwords only; shared by copies
};

// The same as Tokenizer's members, for call sites that hold a Tokenizer or a Tokenize.
inline std::vector<std::string> tokenize(const std::string &line, const Tokenizer &t) {
  return t.tokenize(line);
}
inline std::string detokenize(const std::vector<std::string> &tokens, const Tokenizer &t) {
  return t.detokenize(tokens);
}

} // namespace attn::data

#endif // ATTN_DATA_TOKENIZER_H
