// Token vocabularies for sequence-to-sequence data: tokenization (characters or words), a
// frequency-ordered vocabulary with fixed special ids, and a text form for checkpoint metadata.
#ifndef ATTN_DATA_VOCAB_H
#define ATTN_DATA_VOCAB_H

#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

namespace attn::data {

// How text becomes tokens: characters, words, or subwords (a SentencePiece model: see
// attn/data/Tokenizer.h, which holds one).
enum class Tokenize { Char, Word, Unigram, Bpe, SentencePiece };

// Char: every byte is one token, spaces included ("a b" -> "a", " ", "b").
// Word: maximal runs of non-whitespace (space, \t, \n, \v, \f, \r separate); never empty tokens.
// The subword kinds need their model: std::logic_error here (use a data::Tokenizer).
std::vector<std::string> tokenize(const std::string &line, Tokenize mode);
// The inverse for well-formed tokens: Char concatenates, Word joins with single spaces.
std::string detokenize(const std::vector<std::string> &tokens, Tokenize mode);

class Vocab {
public:
  // Fixed ids of the special tokens, spelled "<pad>", "<bos>", "<eos>", "<unk>". Padding is 0 so
  // that a zero-filled id tensor is all padding.
  static constexpr int32_t kPad = 0, kBos = 1, kEos = 2, kUnk = 3;
  static constexpr int32_t kNumSpecials = 4;

  // Only the specials.
  Vocab();

  // The specials, then every token occurring at least `minCount` times in `sentences`, by
  // descending count, ties by the tokens' byte order (so the result does not depend on the order
  // of the sentences). At most `maxSize` entries including the specials (0: no limit; otherwise
  // it must be >= 4). A corpus token spelled like a special ("<unk>") is the special itself.
  static Vocab build(const std::vector<std::vector<std::string>> &sentences, int64_t minCount,
                     int64_t maxSize);
  // The same from the tokens' counts (a streamed corpus's: attn/data/PairIndex.h).
  static Vocab fromCounts(const std::map<std::string, int64_t> &counts, int64_t minCount,
                          int64_t maxSize);

  int64_t size() const { return (int64_t)tokens_.size(); }
  // kUnk for a token the vocabulary lacks.
  int32_t id(const std::string &token) const;
  // Throws std::runtime_error for an id outside [0, size()).
  const std::string &token(int32_t id) const;

  // Token ids, kUnk for unknown tokens; no bos/eos are added.
  std::vector<int32_t> encode(const std::vector<std::string> &tokens) const;
  // Tokens up to (not including) the first kEos; kPad and kBos are skipped.
  std::vector<std::string> decode(const std::vector<int32_t> &ids) const;

  // A text form for checkpoint metadata, printable ASCII only (so it is valid UTF-8 and
  // survives JSON, which safetensors metadata is, whatever bytes the tokens hold: a character
  // vocabulary of UTF-8 text has tokens that are single bytes >= 0x80):
  //   "attn-vocab 1 <size>\n" then one token per line, in id order, each followed by '\n',
  // with '\\' written as "\\\\", '\n' as "\\n", '\r' as "\\r", '\t' as "\\t", other bytes
  // outside 0x20..0x7e as "\\xHH" (two lowercase hex digits), and the rest (spaces included)
  // as they are. deserialize() also takes upper-case hex digits and unescaped bytes other
  // than NUL and '\n'; it throws std::runtime_error ("attn: vocabulary: line 3: ...") on
  // anything else: a wrong header or count, an unknown or short escape, a NUL byte, a
  // duplicate token, or specials not at ids 0..3.
  std::string serialize() const;
  static Vocab deserialize(const std::string &text);

  bool operator==(const Vocab &other) const { return tokens_ == other.tokens_; }
  bool operator!=(const Vocab &other) const { return !(*this == other); }

private:
  // Appends `token` with the next id; false if it is already present.
  bool add(const std::string &token);

  std::vector<std::string> tokens_;
  std::unordered_map<std::string, int32_t> index_;
};

} // namespace attn::data

#endif // ATTN_DATA_VOCAB_H
