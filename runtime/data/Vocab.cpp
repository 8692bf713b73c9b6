#include "attn/data/Vocab.h"

#include <algorithm>
#include <map>
#include <stdexcept>

namespace attn::data {

namespace {

const char *const kSpecials[Vocab::kNumSpecials] = {"<pad>", "<bos>", "<eos>", "<unk>"};
const char *const kHeader = "attn-vocab 1 ";

bool isSpace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

[[noreturn]] void malformed(int64_t line, const std::string &msg) {
  throw std::runtime_error("attn: vocabulary: line " + std::to_string(line) + ": " + msg);
}

// 0..15 for a hex digit, else -1.
int hexValue(char c) {
  if (c >= '0' && c <= '9')
    return c - '0';
  if (c >= 'a' && c <= 'f')
    return c - 'a' + 10;
  if (c >= 'A' && c <= 'F')
    return c - 'A' + 10;
  return -1;
}

} // namespace

std::vector<std::string> tokenize(const std::string &line, Tokenize mode) {
  if (mode != Tokenize::Char && mode != Tokenize::Word)
    throw std::logic_error("attn: subword tokens need their model (data::Tokenizer)");
  std::vector<std::string> tokens;
  if (mode == Tokenize::Char) {
    for (char c : line)
      tokens.emplace_back(1, c);
    return tokens;
  }
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && isSpace(line[i]))
      ++i;
    size_t start = i;
    while (i < line.size() && !isSpace(line[i]))
      ++i;
    if (i > start)
      tokens.push_back(line.substr(start, i - start));
  }
  return tokens;
}

std::string detokenize(const std::vector<std::string> &tokens, Tokenize mode) {
  if (mode != Tokenize::Char && mode != Tokenize::Word)
    throw std::logic_error("attn: subword tokens need their model (data::Tokenizer)");
  std::string out;
  for (size_t i = 0; i < tokens.size(); ++i) {
    if (mode == Tokenize::Word && i > 0)
      out.push_back(' ');
    out += tokens[i];
  }
  return out;
}

Vocab::Vocab() {
  for (const char *s : kSpecials)
    add(s);
}

bool Vocab::add(const std::string &token) {
  if (!index_.emplace(token, (int32_t)tokens_.size()).second)
    return false;
  tokens_.push_back(token);
  return true;
}

Vocab Vocab::build(const std::vector<std::vector<std::string>> &sentences, int64_t minCount,
                   int64_t maxSize) {
  std::map<std::string, int64_t> counts;
  for (const std::vector<std::string> &sentence : sentences)
    for (const std::string &token : sentence)
      ++counts[token];
  return fromCounts(counts, minCount, maxSize);
}

Vocab Vocab::fromCounts(const std::map<std::string, int64_t> &counts, int64_t minCount,
                        int64_t maxSize) {
  if (maxSize != 0 && maxSize < kNumSpecials)
    throw std::runtime_error("attn: a vocabulary needs room for its 4 special tokens, but the "
                             "maximum size is " +
                             std::to_string(maxSize));
  Vocab vocab;
  // std::map iterates in byte order (char_traits<char> compares as unsigned char): that order
  // survives the stable sort below as the tie-break.
  std::vector<std::pair<std::string, int64_t>> ranked;
  for (auto &entry : counts)
    if (entry.second >= minCount && !vocab.index_.count(entry.first))
      ranked.push_back(entry);
  std::stable_sort(ranked.begin(), ranked.end(),
                   [](const auto &a, const auto &b) { return a.second > b.second; });
  for (const auto &entry : ranked) {
    if (maxSize != 0 && vocab.size() >= maxSize)
      break;
    vocab.add(entry.first);
  }
  return vocab;
}

int32_t Vocab::id(const std::string &token) const {
  auto it = index_.find(token);
  return it == index_.end() ? kUnk : it->second;
}

const std::string &Vocab::token(int32_t id) const {
  if (id < 0 || id >= size())
    throw std::runtime_error("attn: token id " + std::to_string(id) +
                             " is outside the vocabulary of " + std::to_string(size()) + " tokens");
  return tokens_[id];
}

std::vector<int32_t> Vocab::encode(const std::vector<std::string> &tokens) const {
  std::vector<int32_t> ids;
  ids.reserve(tokens.size());
  for (const std::string &t : tokens)
    ids.push_back(id(t));
  return ids;
}

std::vector<std::string> Vocab::decode(const std::vector<int32_t> &ids) const {
  std::vector<std::string> tokens;
  for (int32_t i : ids) {
    if (i == kEos)
      break;
    if (i == kPad || i == kBos)
      continue;
    tokens.push_back(token(i));
  }
  return tokens;
}

std::string Vocab::serialize() const {
  std::string out = kHeader + std::to_string(size()) + "\n";
  for (const std::string &t : tokens_) {
    for (char c : t) {
      switch (c) {
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (c >= 0x20 && c < 0x7f) {
          out.push_back(c);
        } else {
          static const char kHex[] = "0123456789abcdef";
          unsigned char b = (unsigned char)c;
          out += "\\x";
          out.push_back(kHex[b >> 4]);
          out.push_back(kHex[b & 15]);
        }
      }
    }
    out.push_back('\n');
  }
  return out;
}

Vocab Vocab::deserialize(const std::string &text) {
  // Header: "attn-vocab 1 <size>\n".
  size_t headerLen = std::char_traits<char>::length(kHeader);
  size_t eol = text.find('\n');
  if (text.compare(0, headerLen, kHeader) != 0 || eol == std::string::npos)
    malformed(1, "expected the header 'attn-vocab 1 <size>'");
  std::string countText = text.substr(headerLen, eol - headerLen);
  if (countText.empty() || countText.size() > 10 ||
      !std::all_of(countText.begin(), countText.end(), [](char c) { return c >= '0' && c <= '9'; }))
    malformed(1, "expected a token count in the header, got '" + countText + "'");
  int64_t count = std::stoll(countText);

  Vocab vocab;
  vocab.tokens_.clear();
  vocab.index_.clear();
  size_t pos = eol + 1;
  int64_t line = 1;
  while (pos < text.size()) {
    ++line;
    std::string token;
    size_t i = pos;
    for (; i < text.size() && text[i] != '\n'; ++i) {
      char c = text[i];
      if (c == '\0')
        malformed(line, "NUL byte in a token");
      if (c != '\\') {
        token.push_back(c);
        continue;
      }
      if (++i == text.size() || text[i] == '\n')
        malformed(line, "a backslash at the end of a line");
      switch (text[i]) {
      case '\\':
        token.push_back('\\');
        break;
      case 'n':
        token.push_back('\n');
        break;
      case 'r':
        token.push_back('\r');
        break;
      case 't':
        token.push_back('\t');
        break;
      case 'x': {
        int high = i + 2 < text.size() ? hexValue(text[i + 1]) : -1;
        int low = high >= 0 ? hexValue(text[i + 2]) : -1;
        if (low < 0)
          malformed(line, "expected two hex digits after '\\x'");
        if (high == 0 && low == 0)
          malformed(line, "NUL byte in a token");
        token.push_back((char)(high * 16 + low));
        i += 2;
        break;
      }
      default:
        malformed(line, std::string("unknown escape '\\") + text[i] + "'");
      }
    }
    if (i == text.size())
      malformed(line, "the last token is not terminated by a newline (truncated?)");
    pos = i + 1;
    int64_t id = vocab.size();
    if (id < kNumSpecials && token != kSpecials[id])
      malformed(line, "expected the special token '" + std::string(kSpecials[id]) + "' at id " +
                          std::to_string(id) + ", got '" + token + "'");
    if (!vocab.add(token))
      malformed(line, "duplicate token '" + token + "'");
  }
  if (vocab.size() != count)
    malformed(line, "the header announces " + std::to_string(count) + " tokens, found " +
                        std::to_string(vocab.size()));
  if (count < kNumSpecials)
    malformed(line,
              "a vocabulary has at least the 4 special tokens, found " + std::to_string(count));
  return vocab;
}

} // namespace attn::data
