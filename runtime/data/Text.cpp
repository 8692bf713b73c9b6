#include "attn/data/Text.h"

#include "attn/Random.h"

#include <algorithm>
#include <stdexcept>

namespace attn::data {

CharVocab::CharVocab(const std::string &text) {
  bool seen[256] = {};
  for (unsigned char c : text)
    seen[c] = true;
  std::fill(std::begin(index_), std::end(index_), -1);
  for (int c = 0; c < 256; ++c)
    if (seen[c]) {
      index_[c] = (int32_t)chars_.size();
      chars_.push_back((char)c);
    }
}

int32_t CharVocab::id(char c) const { return index_[(unsigned char)c]; }

std::vector<int32_t> CharVocab::encode(const std::string &text) const {
  std::vector<int32_t> ids;
  for (char c : text) {
    int32_t i = id(c);
    if (i < 0)
      throw std::runtime_error(std::string("attn: the character '") + c +
                               "' is not in the model's vocabulary");
    ids.push_back(i);
  }
  return ids;
}

std::string CharVocab::decode(const std::vector<int32_t> &ids) const {
  std::string out;
  for (int32_t i : ids)
    out.push_back(character(i));
  return out;
}

size_t validationStart(const std::string &text) { return text.size() * 9 / 10; }

Examples makeCharWindows(const std::string &text, const CharVocab &vocab, size_t begin,
                         size_t end, int64_t window, int64_t count, uint64_t seed) {
  if (end > text.size() || begin + (size_t)window + 1 > end)
    throw std::runtime_error("attn: text range [" + std::to_string(begin) + ", " +
                             std::to_string(end) + ") is too short for windows of " +
                             std::to_string(window) + " characters");
  std::vector<int32_t> ids = vocab.encode(text.substr(begin, end - begin));
  Examples ex{Tensor(ATTN_I32, {count, window}), Tensor(ATTN_I32, {count, window})};
  int32_t *x = ex.x.data<int32_t>(), *y = ex.y.data<int32_t>();
  Rng rng(seed);
  uint64_t starts = ids.size() - (size_t)window; // s + window < ids.size()
  for (int64_t i = 0; i < count; ++i) {
    size_t s = (size_t)(rng.next() % starts);
    std::copy(ids.begin() + s, ids.begin() + s + window, x + i * window);
    std::copy(ids.begin() + s + 1, ids.begin() + s + 1 + window, y + i * window);
  }
  return ex;
}

} // namespace attn::data
