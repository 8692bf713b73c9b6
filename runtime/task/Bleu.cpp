#include "attn/task/Bleu.h"

#include "attn/data/Vocab.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <stdexcept>

namespace attn::task {

namespace {

bool isDigit(char c) { return c >= '0' && c <= '9'; }
bool isSpace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

// 13a's first rule, [\{-\~\[-\` -\&\(-\+\:-\@\/]: the ASCII punctuation and symbols but ' - . ,
bool isSymbol(char c) {
  return (c >= '{' && c <= '~') || (c >= '[' && c <= '`') || (c >= ' ' && c <= '&') ||
         (c >= '(' && c <= '+') || (c >= ':' && c <= '@') || c == '/';
}

void replaceAll(std::string &s, const std::string &from, const std::string &to) {
  for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size()))
    s.replace(at, from.size(), to);
}

// One regular-expression pass of 13a, as Python's re.sub applies it: the leftmost match,
// replaced, then the scan goes on after it. `match(s, i)` says whether the two-character
// pattern matches at i; `rewrite` gives the two characters' replacement.
template <typename Match, typename Rewrite>
std::string pass(const std::string &s, Match match, Rewrite rewrite) {
  std::string out;
  size_t i = 0;
  while (i < s.size()) {
    if (i + 1 < s.size() && match(s[i], s[i + 1])) {
      out += rewrite(s[i], s[i + 1]);
      i += 2;
    } else {
      out += s[i++];
    }
  }
  return out;
}

// Runs of non-whitespace, as Python's str.split() without arguments (ASCII whitespace).
std::vector<std::string> words(const std::string &line) {
  return data::tokenize(line, data::Tokenize::Word);
}

// The code points of `line` (UTF-8; a byte that starts no sequence counts alone), whitespace
// left out.
std::vector<std::string> characters(const std::string &line) {
  std::vector<std::string> out;
  for (size_t i = 0; i < line.size();) {
    unsigned char c = (unsigned char)line[i];
    size_t n = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 1;
    n = std::min(n, line.size() - i);
    if (!(n == 1 && isSpace(line[i])))
      out.push_back(line.substr(i, n));
    i += n;
  }
  return out;
}

// Counts of the n-grams of `items` (joined with a separator no token holds).
std::map<std::string, int64_t> ngrams(const std::vector<std::string> &items, size_t n) {
  std::map<std::string, int64_t> counts;
  for (size_t i = 0; i + n <= items.size(); ++i) {
    std::string key;
    for (size_t k = 0; k < n; ++k)
      key += (k ? "\x1f" : "") + items[i + k];
    ++counts[key];
  }
  return counts;
}

// Matches of `hyp`'s n-grams in `ref` (each clipped to its count there).
int64_t matches(const std::map<std::string, int64_t> &hyp,
                const std::map<std::string, int64_t> &ref) {
  int64_t m = 0;
  for (const auto &[gram, count] : hyp) {
    auto it = ref.find(gram);
    if (it != ref.end())
      m += std::min(count, it->second);
  }
  return m;
}

int64_t total(const std::map<std::string, int64_t> &counts) {
  int64_t t = 0;
  for (const auto &entry : counts)
    t += entry.second;
  return t;
}

void checkSizes(const std::vector<std::string> &hyps, const std::vector<std::string> &refs) {
  if (hyps.size() != refs.size())
    throw std::invalid_argument("attn: " + std::to_string(hyps.size()) + " hypotheses for " +
                                std::to_string(refs.size()) + " references");
}

} // namespace

std::string tokenize13a(const std::string &input) {
  std::string line = input;
  replaceAll(line, "<skipped>", "");
  replaceAll(line, "-\n", "");
  replaceAll(line, "\n", " ");
  if (line.find('&') != std::string::npos) {
    replaceAll(line, "&quot;", "\"");
    replaceAll(line, "&amp;", "&");
    replaceAll(line, "&lt;", "<");
    replaceAll(line, "&gt;", ">");
  }
  line = " " + line + " ";
  std::string spaced;
  for (char c : line)
    spaced += isSymbol(c) ? std::string(" ") + c + " " : std::string(1, c);
  auto dotOrComma = [](char c) { return c == '.' || c == ','; };
  // Period and comma unless preceded by a digit; unless followed by one; a dash after a digit.
  spaced = pass(
      spaced, [&](char a, char b) { return !isDigit(a) && dotOrComma(b); },
      [](char a, char b) { return std::string(1, a) + " " + b + " "; });
  spaced = pass(
      spaced, [&](char a, char b) { return dotOrComma(a) && !isDigit(b); },
      [](char a, char b) { return std::string(" ") + a + " " + b; });
  spaced = pass(
      spaced, [](char a, char b) { return isDigit(a) && b == '-'; },
      [](char a, char b) { return std::string(1, a) + " " + b + " "; });
  std::string out;
  for (const std::string &w : words(spaced))
    out += (out.empty() ? "" : " ") + w;
  return out;
}

std::string Bleu::str() const {
  char buf[256];
  std::snprintf(buf, sizeof buf,
                "BLEU = %.2f %.1f/%.1f/%.1f/%.1f (BP = %.3f ratio = %.3f hyp_len = %lld ref_len "
                "= %lld)",
                score, precisions[0], precisions[1], precisions[2], precisions[3],
                brevityPenalty, refLength ? (double)hypLength / (double)refLength : 0.0,
                (long long)hypLength, (long long)refLength);
  return buf;
}

Bleu corpusBleu(const std::vector<std::string> &hyps, const std::vector<std::string> &refs) {
  checkSizes(hyps, refs);
  constexpr size_t kOrder = 4;
  std::array<int64_t, kOrder> correct{}, totals{};
  Bleu b;
  for (size_t i = 0; i < hyps.size(); ++i) {
    std::vector<std::string> h = words(tokenize13a(hyps[i])), r = words(tokenize13a(refs[i]));
    b.hypLength += (int64_t)h.size();
    b.refLength += (int64_t)r.size();
    for (size_t n = 1; n <= kOrder; ++n) {
      std::map<std::string, int64_t> hg = ngrams(h, n);
      correct[n - 1] += matches(hg, ngrams(r, n));
      totals[n - 1] += total(hg);
    }
  }
  // sacreBLEU's compute_bleu: an order the hypotheses do not reach ends the loop (its
  // precision stays 0, and the score with it); a zero count is smoothed ('exp').
  double smooth = 1;
  for (size_t n = 0; n < kOrder; ++n) {
    if (totals[n] == 0)
      break;
    if (correct[n] == 0) {
      smooth *= 2;
      b.precisions[n] = 100.0 / (smooth * (double)totals[n]);
    } else {
      b.precisions[n] = 100.0 * (double)correct[n] / (double)totals[n];
    }
  }
  b.brevityPenalty = b.hypLength >= b.refLength ? 1.0
                     : b.hypLength > 0 ? std::exp(1.0 - (double)b.refLength / (double)b.hypLength)
                                       : 0.0;
  double logSum = 0;
  for (double p : b.precisions)
    logSum += p > 0 ? std::log(p) : -9999999999.0;
  b.score = b.brevityPenalty * std::exp(logSum / (double)kOrder);
  return b;
}

double corpusChrf(const std::vector<std::string> &hyps, const std::vector<std::string> &refs) {
  checkSizes(hyps, refs);
  constexpr size_t kOrder = 6;
  constexpr double kBeta = 2;
  std::array<int64_t, kOrder> hypGrams{}, refGrams{}, matched{};
  for (size_t i = 0; i < hyps.size(); ++i) {
    std::vector<std::string> h = characters(hyps[i]), r = characters(refs[i]);
    for (size_t n = 1; n <= kOrder; ++n) {
      std::map<std::string, int64_t> hg = ngrams(h, n), rg = ngrams(r, n);
      hypGrams[n - 1] += total(hg);
      refGrams[n - 1] += total(rg);
      matched[n - 1] += matches(hg, rg);
    }
  }
  double precision = 0, recall = 0;
  int orders = 0;
  for (size_t n = 0; n < kOrder; ++n)
    if (hypGrams[n] > 0 && refGrams[n] > 0) {
      precision += (double)matched[n] / (double)hypGrams[n];
      recall += (double)matched[n] / (double)refGrams[n];
      ++orders;
    }
  if (orders == 0)
    return 0;
  precision /= orders;
  recall /= orders;
  double factor = kBeta * kBeta;
  if (precision + recall == 0)
    return 0;
  return 100.0 * (1 + factor) * precision * recall / (factor * precision + recall);
}

} // namespace attn::task
