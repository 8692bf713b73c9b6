#include "attn/data/Tokenizer.h"

#include <cstring>
#include <stdexcept>

namespace attn::data {

namespace {

const char *const kHeader = "attn-tokenizer 1 ";

struct KindName {
  Tokenize kind;
  const char *name;
};
constexpr KindName kKinds[] = {{Tokenize::Char, "char"},
                               {Tokenize::Word, "word"},
                               {Tokenize::Unigram, "unigram"},
                               {Tokenize::Bpe, "bpe"},
                               {Tokenize::SentencePiece, "sentencepiece"}};

// RFC 4648 base64 (metadata is JSON text; a model is bytes).
const char kDigits[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

std::string base64(const std::string &in) {
  std::string out;
  out.reserve((in.size() + 2) / 3 * 4);
  for (size_t i = 0; i < in.size(); i += 3) {
    uint32_t v = (uint32_t)(uint8_t)in[i] << 16;
    if (i + 1 < in.size())
      v |= (uint32_t)(uint8_t)in[i + 1] << 8;
    if (i + 2 < in.size())
      v |= (uint8_t)in[i + 2];
    out += kDigits[v >> 18 & 63];
    out += kDigits[v >> 12 & 63];
    out += i + 1 < in.size() ? kDigits[v >> 6 & 63] : '=';
    out += i + 2 < in.size() ? kDigits[v & 63] : '=';
  }
  return out;
}

std::string unbase64(const std::string &in, const std::string &what) {
  auto bad = [&] { throw std::runtime_error(what + ": the tokenizer's model is not base64"); };
  if (in.size() % 4)
    bad();
  std::string out;
  out.reserve(in.size() / 4 * 3);
  for (size_t i = 0; i < in.size(); i += 4) {
    uint32_t v = 0;
    int pad = 0;
    for (size_t k = 0; k < 4; ++k) {
      char c = in[i + k];
      const char *d = c ? std::strchr(kDigits, c) : nullptr;
      if (c == '=' && i + 4 == in.size() && k >= 2) {
        ++pad;
        v <<= 6;
        continue;
      }
      if (!d || pad)
        bad();
      v = v << 6 | (uint32_t)(d - kDigits);
    }
    out += (char)(v >> 16 & 255);
    if (pad < 2)
      out += (char)(v >> 8 & 255);
    if (pad < 1)
      out += (char)(v & 255);
  }
  return out;
}

const SubwordBackend *backend = nullptr;

const SubwordBackend &subwords(const std::string &what) {
  if (!backend)
    throw std::runtime_error(what + ": this program was built without subword support "
                                    "(SentencePiece): data.tokens unigram, bpe and "
                                    "sentencepiece need it");
  return *backend;
}

} // namespace

void registerSubwordBackend(const SubwordBackend *b) { backend = b; }

const char *tokenizeName(Tokenize kind) {
  for (const KindName &k : kKinds)
    if (k.kind == kind)
      return k.name;
  return "?";
}

Tokenize parseTokenize(const std::string &name) {
  for (const KindName &k : kKinds)
    if (name == k.name)
      return k.kind;
  throw std::runtime_error("unknown tokens '" + name +
                           "' (char, word, unigram, bpe or sentencepiece)");
}

Tokenizer::Tokenizer(Tokenize kind) : kind_(kind) {
  if (isSubwords(kind))
    throw std::logic_error(std::string("attn: ") + tokenizeName(kind) +
                           " tokens need their model (Tokenizer::train or load)");
}

Tokenizer Tokenizer::train(Tokenize kind, const std::vector<std::string> &lines, int64_t vocabSize,
                           const std::string &what) {
  if (kind != Tokenize::Unigram && kind != Tokenize::Bpe)
    throw std::logic_error("attn: Tokenizer::train trains unigram or bpe models");
  return load(kind, subwords(what).train(kind, lines, vocabSize, what), what);
}

Tokenizer Tokenizer::load(Tokenize kind, const std::string &bytes, const std::string &what) {
  if (!isSubwords(kind))
    throw std::logic_error("attn: Tokenizer::load takes a subword kind");
  Tokenizer t;
  t.kind_ = kind;
  t.model_ = subwords(what).load(bytes, what);
  return t;
}

std::vector<std::string> Tokenizer::tokenize(const std::string &line) const {
  if (!model_)
    return data::tokenize(line, kind_);
  return model_->encode(line);
}

std::string Tokenizer::detokenize(const std::vector<std::string> &tokens) const {
  if (!model_)
    return data::detokenize(tokens, kind_);
  return model_->decode(tokens);
}

const std::string &Tokenizer::model() const {
  static const std::string none;
  return model_ ? model_->bytes() : none;
}

std::string Tokenizer::serialize() const {
  return kHeader + std::string(tokenizeName(kind_)) + "\n" + base64(model());
}

Tokenizer Tokenizer::deserialize(const std::string &text, const std::string &what) {
  size_t eol = text.find('\n');
  if (text.compare(0, std::strlen(kHeader), kHeader) != 0 || eol == std::string::npos)
    throw std::runtime_error(what + ": not a tokenizer (no '" + kHeader + "<kind>' line)");
  Tokenize kind;
  try {
    kind = parseTokenize(text.substr(std::strlen(kHeader), eol - std::strlen(kHeader)));
  } catch (const std::exception &e) {
    throw std::runtime_error(what + ": " + e.what());
  }
  std::string body = text.substr(eol + 1);
  if (!isSubwords(kind)) {
    if (!body.empty())
      throw std::runtime_error(what + ": a " + tokenizeName(kind) + " tokenizer has no model");
    return Tokenizer(kind);
  }
  return load(kind, unbase64(body, what), what);
}

bool Tokenizer::operator==(const Tokenizer &other) const {
  return kind_ == other.kind_ && model() == other.model();
}

} // namespace attn::data
