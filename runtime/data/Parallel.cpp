#include "attn/data/Parallel.h"

#include "attn/File.h"
#include "attn/Random.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <map>
#include <stdexcept>

namespace attn::data {

namespace {

[[noreturn]] void fileError(const std::string &path, int64_t line, const std::string &msg) {
  std::string where = path + (line > 0 ? ":" + std::to_string(line) : std::string());
  throw std::runtime_error(where + ": error: " + msg);
}

// A uniform integer in [lo, hi] (the modulo bias is negligible for these small ranges).
int64_t uniform(Rng &rng, int64_t lo, int64_t hi) {
  return lo + (int64_t)(rng.next() % (uint64_t)(hi - lo + 1));
}

// The `i`-th symbol word: "0".."9", "a".."z", "A".."Z".
std::string symbol(int64_t i) {
  static const char kAlphabet[] = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
  return std::string(1, kAlphabet[i]);
}

std::vector<Pair> makeSymbolTask(const char *task, bool reverse, int64_t count, int64_t minLen,
                                 int64_t maxLen, int64_t symbols, uint64_t seed) {
  std::string where = std::string("attn: builtin dataset '") + task + "': ";
  if (count < 0)
    throw std::runtime_error(where + "count must be >= 0, got " + std::to_string(count));
  if (minLen < 1 || maxLen < minLen)
    throw std::runtime_error(where + "lengths must satisfy 1 <= min <= max, got min " +
                             std::to_string(minLen) + ", max " + std::to_string(maxLen));
  if (symbols < 2 || symbols > 62)
    throw std::runtime_error(where + "symbols must be in [2, 62], got " + std::to_string(symbols));
  Rng rng(seed);
  std::vector<Pair> pairs;
  pairs.reserve(count);
  for (int64_t i = 0; i < count; ++i) {
    int64_t len = uniform(rng, minLen, maxLen);
    std::vector<std::string> words;
    for (int64_t t = 0; t < len; ++t)
      words.push_back(symbol(uniform(rng, 0, symbols - 1)));
    Pair p;
    p.source = detokenize(words, Tokenize::Word);
    if (reverse)
      std::reverse(words.begin(), words.end());
    p.target = detokenize(words, Tokenize::Word);
    pairs.push_back(std::move(p));
  }
  return pairs;
}

// Days since 1970-01-01 <-> proleptic Gregorian (year, month 1..12, day 1..31); H. Hinnant's
// "chrono-compatible low-level date algorithms", exact for any date.
int64_t daysFromCivil(int64_t y, int64_t m, int64_t d) {
  y -= m <= 2;
  int64_t era = (y >= 0 ? y : y - 399) / 400;
  int64_t yoe = y - era * 400;
  int64_t doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
  int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

struct Date {
  int64_t year, month, day, weekday; // weekday: 0 = Sunday
};

Date civilFromDays(int64_t z) {
  int64_t days = z;
  z += 719468;
  int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  int64_t doe = z - era * 146097;
  int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  int64_t mp = (5 * doy + 2) / 153;
  Date date;
  date.day = doy - (153 * mp + 2) / 5 + 1;
  date.month = mp < 10 ? mp + 3 : mp - 9;
  date.year = yoe + era * 400 + (date.month <= 2);
  // 1970-01-01 was a Thursday (4).
  date.weekday = days >= -4 ? (days + 4) % 7 : (days + 5) % 7 + 6;
  return date;
}

std::string twoDigits(int64_t v) { return (v < 10 ? "0" : "") + std::to_string(v); }

std::string ordinal(int64_t d) {
  const char *suffix = "th";
  if (d % 100 < 11 || d % 100 > 13) {
    if (d % 10 == 1)
      suffix = "st";
    else if (d % 10 == 2)
      suffix = "nd";
    else if (d % 10 == 3)
      suffix = "rd";
  }
  return std::to_string(d) + suffix;
}

constexpr int kDateFormats = 11;

std::string formatDate(const Date &dt, int format) {
  static const char *const kMonths[] = {"January",   "February", "March",    "April",
                                        "May",       "June",     "July",     "August",
                                        "September", "October",  "November", "December"};
  static const char *const kDays[] = {"Sunday",   "Monday", "Tuesday", "Wednesday",
                                      "Thursday", "Friday", "Saturday"};
  std::string month = kMonths[dt.month - 1], mon = month.substr(0, 3);
  std::string weekday = kDays[dt.weekday], wd = weekday.substr(0, 3);
  std::string d = std::to_string(dt.day), y = std::to_string(dt.year);
  switch (format) {
  case 0:
    return d + " " + month + " " + y; // 5 March 2019
  case 1:
    return month + " " + d + ", " + y; // March 5, 2019
  case 2:
    return twoDigits(dt.day) + "/" + twoDigits(dt.month) + "/" + y; // 05/03/2019
  case 3:
    return wd + " " + d + " " + mon + " " + y; // Tue 5 Mar 2019
  case 4:
    return y + " " + mon + " " + d; // 2019 Mar 5
  case 5:
    return d + "." + std::to_string(dt.month) + "." + twoDigits(dt.year % 100); // 5.3.19
  case 6:
    return weekday + ", " + month + " " + d + ", " + y; // Tuesday, March 5, 2019
  case 7:
    return ordinal(dt.day) + " of " + month + " " + y; // 5th of March 2019
  case 8:
    return d + " " + mon + " " + y; // 5 Mar 2019
  case 9: // 03/05/19: US order (month first), the century implied as in 5.3.19
    return twoDigits(dt.month) + "/" + twoDigits(dt.day) + "/" + twoDigits(dt.year % 100);
  default:
    return weekday + ", " + month + " " + ordinal(dt.day) + " " + y; // Tuesday, March 5th 2019
  }
}

// Appends the ids of `tokens` to `out`; fills the rest of [out, out + len) with kPad.
template <typename It> void writePadded(It first, It last, int32_t *out, int64_t len) {
  int64_t n = 0;
  for (; first != last; ++first)
    out[n++] = *first;
  std::fill(out + n, out + len, Vocab::kPad);
}

} // namespace

std::vector<Pair> readTsv(const std::string &path) {
  checkRegularFile(path, kMaxDataFileBytes, "data file");
  std::ifstream in(path, std::ios::binary);
  if (!in)
    fileError(path, 0, std::string("cannot open file: ") + std::strerror(errno));
  std::vector<Pair> pairs;
  std::string line;
  int64_t lineNo = 0;
  while (std::getline(in, line)) {
    ++lineNo;
    if (!line.empty() && line.back() == '\r')
      line.pop_back();
    if (std::all_of(line.begin(), line.end(), [](unsigned char c) { return std::isspace(c); }))
      continue;
    size_t tabs = std::count(line.begin(), line.end(), '\t');
    if (tabs != 1)
      fileError(path, lineNo,
                "expected one tab between source and target, found " + std::to_string(tabs));
    size_t tab = line.find('\t');
    pairs.push_back({line.substr(0, tab), line.substr(tab + 1)});
  }
  if (in.bad())
    fileError(path, 0, "read error");
  return pairs;
}

std::vector<Pair> makeCopy(int64_t count, int64_t minLen, int64_t maxLen, int64_t symbols,
                           uint64_t seed) {
  return makeSymbolTask("copy", false, count, minLen, maxLen, symbols, seed);
}

std::vector<Pair> makeReverse(int64_t count, int64_t minLen, int64_t maxLen, int64_t symbols,
                              uint64_t seed) {
  return makeSymbolTask("reverse", true, count, minLen, maxLen, symbols, seed);
}

std::vector<Pair> makeDates(int64_t count, uint64_t seed) {
  if (count < 0)
    throw std::runtime_error("attn: builtin dataset 'dates': count must be >= 0, got " +
                             std::to_string(count));
  const int64_t first = daysFromCivil(1950, 1, 1), last = daysFromCivil(2049, 12, 31);
  Rng rng(seed);
  std::vector<Pair> pairs;
  pairs.reserve(count);
  for (int64_t i = 0; i < count; ++i) {
    Date dt = civilFromDays(uniform(rng, first, last));
    int format = (int)uniform(rng, 0, kDateFormats - 1);
    pairs.push_back({formatDate(dt, format), std::to_string(dt.year) + "-" + twoDigits(dt.month) +
                                                 "-" + twoDigits(dt.day)});
  }
  return pairs;
}

Seq2SeqTensors encodePairs(const std::vector<Pair> &pairs, const Vocab &srcVocab,
                           const Vocab &tgtVocab, Tokenize srcTok, Tokenize tgtTok, int64_t srcLen,
                           int64_t tgtLen, bool reverseSource) {
  if (srcLen < 1 || tgtLen < 2)
    throw std::runtime_error("attn: sequence-to-sequence data needs a source length >= 1 and a "
                             "target length >= 2 (bos/eos take a slot), got " +
                             std::to_string(srcLen) + " and " + std::to_string(tgtLen));
  // Encode first, so that N (the kept pairs) is known before the tensors are allocated.
  std::vector<std::vector<int32_t>> sources, targets;
  int64_t dropped = 0;
  for (const Pair &p : pairs) {
    std::vector<int32_t> s = srcVocab.encode(tokenize(p.source, srcTok));
    std::vector<int32_t> t = tgtVocab.encode(tokenize(p.target, tgtTok));
    if (s.empty() || (int64_t)s.size() > srcLen || (int64_t)t.size() > tgtLen - 1) {
      ++dropped;
      continue;
    }
    sources.push_back(std::move(s));
    targets.push_back(std::move(t));
  }
  int64_t n = (int64_t)sources.size();
  Seq2SeqTensors out;
  out.src = Tensor(ATTN_I32, {n, srcLen});
  out.srcMask = Tensor(ATTN_F32, {n, srcLen});
  out.tgtIn = Tensor(ATTN_I32, {n, tgtLen});
  out.tgtOut = Tensor(ATTN_I32, {n, tgtLen});
  out.dropped = dropped;
  for (int64_t i = 0; i < n; ++i) {
    const std::vector<int32_t> &s = sources[i], &t = targets[i];
    int32_t *src = out.src.data<int32_t>() + i * srcLen;
    if (reverseSource)
      writePadded(s.rbegin(), s.rend(), src, srcLen);
    else
      writePadded(s.begin(), s.end(), src, srcLen);
    float *mask = out.srcMask.data<float>() + i * srcLen;
    std::fill(mask, mask + s.size(), 1.0f); // the rest stays 0 (tensors start zeroed)

    std::vector<int32_t> in{Vocab::kBos}, target = t;
    in.insert(in.end(), t.begin(), t.end());
    target.push_back(Vocab::kEos);
    writePadded(in.begin(), in.end(), out.tgtIn.data<int32_t>() + i * tgtLen, tgtLen);
    writePadded(target.begin(), target.end(), out.tgtOut.data<int32_t>() + i * tgtLen, tgtLen);
  }
  return out;
}

std::vector<int32_t> encodeSource(const std::string &line, const Vocab &vocab, Tokenize tok,
                                  int64_t srcLen, bool reverseSource, std::vector<float> &mask) {
  std::vector<int32_t> s = vocab.encode(tokenize(line, tok));
  if (s.empty())
    throw std::runtime_error("attn: the source sentence has no tokens");
  if ((int64_t)s.size() > srcLen)
    throw std::runtime_error("attn: the source sentence has " + std::to_string(s.size()) +
                             " tokens; the model reads at most " + std::to_string(srcLen));
  if (reverseSource)
    std::reverse(s.begin(), s.end());
  mask.assign(srcLen, 0.0f);
  std::fill(mask.begin(), mask.begin() + s.size(), 1.0f);
  s.resize(srcLen, Vocab::kPad);
  return s;
}

std::vector<Pair> makePosTags(int64_t count, uint64_t seed) {
  static const std::vector<std::string> kDet = {"the", "a", "every", "this"};
  static const std::vector<std::string> kAdj = {"big", "small", "red", "old", "happy"};
  static const std::vector<std::string> kNoun = {"dog", "cat", "man", "city", "bird",
                                                 "fly", "watch", "run"};
  static const std::vector<std::string> kVerb = {"sees", "likes", "chases", "fly", "watch",
                                                 "run"};
  static const std::vector<std::string> kAdv = {"today", "often", "quickly"};
  Rng rng(seed);
  std::vector<Pair> pairs;
  pairs.reserve((size_t)count);
  for (int64_t i = 0; i < count; ++i) {
    std::vector<std::string> words, tags;
    auto add = [&](const std::vector<std::string> &from, const char *tag) {
      words.push_back(from[(size_t)uniform(rng, 0, (int64_t)from.size() - 1)]);
      tags.push_back(tag);
    };
    auto nounPhrase = [&] {
      add(kDet, "DET");
      if (uniform(rng, 0, 1))
        add(kAdj, "ADJ");
      add(kNoun, "NOUN");
    };
    nounPhrase();
    add(kVerb, "VERB");
    nounPhrase();
    if (uniform(rng, 0, 2) == 0)
      add(kAdv, "ADV");
    pairs.push_back({detokenize(words, Tokenize::Word), detokenize(tags, Tokenize::Word)});
  }
  return pairs;
}

std::vector<Pair> makeMajority(int64_t count, int64_t minLen, int64_t maxLen, int64_t symbols,
                               uint64_t seed) {
  if (maxLen < 2)
    throw std::runtime_error("attn: majority: max_len must be >= 2, got " +
                             std::to_string(maxLen));
  // Sequences with a tied most frequent symbol are drawn again (from the same generator).
  std::vector<Pair> drawn = makeSymbolTask("majority", false, 4 * count + 64,
                                           std::max<int64_t>(minLen, 2), maxLen, symbols, seed);
  std::vector<Pair> pairs;
  for (const Pair &p : drawn) {
    if ((int64_t)pairs.size() == count)
      break;
    std::map<std::string, int64_t> counts;
    for (const std::string &w : tokenize(p.source, Tokenize::Word))
      ++counts[w];
    int64_t best = 0, ties = 0;
    std::string label;
    for (const auto &[word, n] : counts) {
      if (n > best) {
        best = n;
        label = word;
        ties = 0;
      } else if (n == best) {
        ++ties;
      }
    }
    if (ties == 0)
      pairs.push_back({p.source, label});
  }
  if ((int64_t)pairs.size() < count)
    throw std::runtime_error("attn: majority: too many ties; use more symbols or longer sequences");
  return pairs;
}

namespace {

// Token ids of `source` padded to srcLen into src/srcMask row `row`; false if it does not fit.
bool writeSource(const std::string &source, const Vocab &vocab, Tokenize tok, int64_t srcLen,
                 Tensor &src, Tensor &srcMask, int64_t row,
                 std::vector<std::string> &tokens) {
  tokens = tokenize(source, tok);
  if (tokens.empty() || (int64_t)tokens.size() > srcLen)
    return false;
  std::vector<int32_t> ids = vocab.encode(tokens);
  writePadded(ids.begin(), ids.end(), src.data<int32_t>() + row * srcLen, srcLen);
  std::fill_n(srcMask.data<float>() + row * srcLen, ids.size(), 1.0f);
  return true;
}

// Keeps the first `rows` rows of a [N, ...] tensor.
Tensor firstRows(const Tensor &t, int64_t rows) {
  std::vector<int64_t> shape = t.shape();
  shape[0] = rows;
  Tensor out(t.dtype(), shape);
  std::memcpy(out.raw(), t.raw(), out.nbytes());
  return out;
}

LabelledTensors encodeLabelled(const std::vector<Pair> &pairs, const Vocab &srcVocab,
                               const Vocab &labelVocab, Tokenize srcTok, int64_t srcLen,
                               bool tagged) {
  if (srcLen < 1)
    throw std::runtime_error("attn: srcLen must be >= 1, got " + std::to_string(srcLen));
  int64_t n = (int64_t)pairs.size();
  LabelledTensors t;
  t.src = Tensor(ATTN_I32, {n, srcLen});
  t.srcMask = Tensor(ATTN_F32, {n, srcLen});
  t.labels = tagged ? Tensor(ATTN_I32, {n, srcLen}) : Tensor(ATTN_I32, {n});
  int64_t kept = 0;
  std::vector<std::string> tokens;
  for (int64_t i = 0; i < n; ++i) {
    const Pair &p = pairs[(size_t)i];
    std::vector<std::string> labels = tokenize(p.target, Tokenize::Word);
    if (tagged && labels.size() != tokenize(p.source, srcTok).size())
      throw std::runtime_error("attn: pair " + std::to_string(i + 1) + " has " +
                               std::to_string(tokenize(p.source, srcTok).size()) +
                               " tokens but " + std::to_string(labels.size()) + " tags");
    if (!tagged && labels.size() != 1)
      throw std::runtime_error("attn: pair " + std::to_string(i + 1) +
                               " must have one label, got '" + p.target + "'");
    if (!writeSource(p.source, srcVocab, srcTok, srcLen, t.src, t.srcMask, kept, tokens)) {
      ++t.dropped;
      continue;
    }
    std::vector<int32_t> ids = labelVocab.encode(labels);
    if (tagged)
      writePadded(ids.begin(), ids.end(), t.labels.data<int32_t>() + kept * srcLen, srcLen);
    else
      t.labels.data<int32_t>()[kept] = ids[0];
    ++kept;
  }
  if (kept < n) {
    t.src = firstRows(t.src, kept);
    t.srcMask = firstRows(t.srcMask, kept);
    t.labels = firstRows(t.labels, kept);
  }
  return t;
}

} // namespace

LabelledTensors encodeTagged(const std::vector<Pair> &pairs, const Vocab &srcVocab,
                             const Vocab &tagVocab, Tokenize srcTok, int64_t srcLen) {
  return encodeLabelled(pairs, srcVocab, tagVocab, srcTok, srcLen, /*tagged=*/true);
}

LabelledTensors encodeClassified(const std::vector<Pair> &pairs, const Vocab &srcVocab,
                                 const Vocab &labelVocab, Tokenize srcTok, int64_t srcLen) {
  return encodeLabelled(pairs, srcVocab, labelVocab, srcTok, srcLen, /*tagged=*/false);
}

} // namespace attn::data
