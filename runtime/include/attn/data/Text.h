// Character-level text data: the builtin corpus, its vocabulary, and training windows.
#ifndef ATTN_DATA_TEXT_H
#define ATTN_DATA_TEXT_H

#include "attn/Tensor.h"
#include "attn/data/Sine.h"

#include <cstdint>
#include <string>
#include <vector>

namespace attn::data {

// The embedded English corpus of `data.builtin: text` (a few KB, plain ASCII).
const std::string &builtinText();

// A character vocabulary: the distinct bytes of a text, sorted; ids are positions.
class CharVocab {
public:
  explicit CharVocab(const std::string &text);
  int64_t size() const { return (int64_t)chars_.size(); }
  // -1 for a character the vocabulary lacks.
  int32_t id(char c) const;
  char character(int32_t id) const { return chars_.at(id); }
  std::vector<int32_t> encode(const std::string &text) const; // throws on unknown characters
  std::string decode(const std::vector<int32_t> &ids) const;

private:
  std::string chars_;
  int32_t index_[256];
};

// `count` windows of `window` ids from text[begin, end): x[i] = ids[s .. s+window),
// y[i] = ids[s+1 .. s+window] (the next character at every position), with the starts s
// drawn uniformly from Rng(seed). x and y are i32 [count, window].
Examples makeCharWindows(const std::string &text, const CharVocab &vocab, size_t begin,
                         size_t end, int64_t window, int64_t count, uint64_t seed);

// The builtin split of `text` into training (the first 90%) and validation (the rest).
size_t validationStart(const std::string &text);

} // namespace attn::data

#endif // ATTN_DATA_TEXT_H
