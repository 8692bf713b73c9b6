// The builtin pair tasks (attn/data/Parallel.h): copy, reverse, date formats, part-of-speech
// tags and the majority symbol, each drawn from Rng(seed).
#include "attn/data/Parallel.h"

#include "attn/Random.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <stdexcept>

namespace attn::data {

namespace {

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

} // namespace

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

} // namespace attn::data
