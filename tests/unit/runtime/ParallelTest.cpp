// Parallel text: TSV files, the builtin copy / reverse / date tasks and padded id tensors
// (runtime/data).
#include "attn/data/Parallel.h"

#include <gtest/gtest.h>

#include <map>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <regex>
#include <set>
#include <stdexcept>
#include <string>

namespace {

using attn::Tensor;
using attn::data::Pair;
using attn::data::Tokenize;
using attn::data::Vocab;
using Ids = std::vector<int32_t>;

// A temporary file that removes itself.
struct TempFile {
  std::string path;
  explicit TempFile(const std::string &contents) {
    path = ::testing::TempDir() + "attn_parallel_" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".tsv";
    std::ofstream(path, std::ios::binary) << contents;
  }
  ~TempFile() { std::remove(path.c_str()); }
};

std::string tsvError(const std::string &path) {
  try {
    attn::data::readTsv(path);
  } catch (const std::runtime_error &e) {
    return e.what();
  }
  return "<no error>";
}

TEST(ReadTsv, ReadsPairs) {
  TempFile f("a b\tx y\r\n\n  \r\nhello\tworld\nsp ace \t t\n");
  std::vector<Pair> pairs = attn::data::readTsv(f.path);
  ASSERT_EQ(pairs.size(), 3u);
  EXPECT_EQ(pairs[0].source, "a b");
  EXPECT_EQ(pairs[0].target, "x y"); // the CR is gone
  EXPECT_EQ(pairs[1].source, "hello");
  EXPECT_EQ(pairs[1].target, "world");
  EXPECT_EQ(pairs[2].source, "sp ace ");
  EXPECT_EQ(pairs[2].target, " t");
  // Each pair knows its line (for the task's errors), blank lines counted.
  EXPECT_EQ(pairs[0].line, 1);
  EXPECT_EQ(pairs[1].line, 4);
  EXPECT_EQ(pairs[2].line, 5);
}

TEST(ReadTsv, AByteOrderMarkIsNotPartOfTheFirstSource) {
  TempFile f("\xEF\xBB\xBFhello\tworld\r\nbye\tnow\n");
  std::vector<Pair> pairs = attn::data::readTsv(f.path);
  ASSERT_EQ(pairs.size(), 2u);
  EXPECT_EQ(pairs[0].source, "hello");
  EXPECT_EQ(pairs[1].source, "bye");
}

TEST(ReadTsv, Errors) {
  TempFile twoTabs("a\tb\n\nc\td\te\n");
  EXPECT_EQ(tsvError(twoTabs.path),
            twoTabs.path + ":3: error: expected one tab between source and target, found 2");
  TempFile noTab("a\tb\r\nc d\r\n");
  EXPECT_EQ(tsvError(noTab.path),
            noTab.path + ":2: error: expected one tab between source and target, found 0");
  // Another encoding (Latin-1's e-acute after a UTF-8 line): the line and the byte.
  TempFile latin1("caf\xc3\xa9\tok\ncaf\xe9\tno\n");
  EXPECT_EQ(tsvError(latin1.path),
            latin1.path + ":2: error: the line is not UTF-8 text (byte 4 of the line)");
  std::string missing = ::testing::TempDir() + "attn_no_such_file.tsv";
  EXPECT_EQ(tsvError(missing), missing + ": error: cannot open file: No such file or directory");
}

std::vector<std::string> words(const std::string &s) {
  return attn::data::tokenize(s, Tokenize::Word);
}

TEST(Builtin, CopyAndReverse) {
  std::vector<Pair> copy = attn::data::makeCopy(200, 2, 6, 5, 7);
  std::vector<Pair> reverse = attn::data::makeReverse(200, 2, 6, 5, 7);
  ASSERT_EQ(copy.size(), 200u);
  std::set<size_t> lengths;
  std::set<std::string> symbols;
  for (size_t i = 0; i < copy.size(); ++i) {
    std::vector<std::string> w = words(copy[i].source);
    EXPECT_EQ(attn::data::detokenize(w, Tokenize::Word), copy[i].source); // single spaces
    lengths.insert(w.size());
    symbols.insert(w.begin(), w.end());
    EXPECT_EQ(copy[i].target, copy[i].source);
    // Same seed, same draws: the reverse task reverses the same sources.
    EXPECT_EQ(reverse[i].source, copy[i].source);
    std::reverse(w.begin(), w.end());
    EXPECT_EQ(words(reverse[i].target), w);
  }
  EXPECT_EQ(lengths, (std::set<size_t>{2, 3, 4, 5, 6}));
  EXPECT_EQ(symbols, (std::set<std::string>{"0", "1", "2", "3", "4"}));

  // Deterministic per seed; all 62 symbols available.
  EXPECT_EQ(attn::data::makeCopy(5, 1, 3, 62, 7)[4].source,
            attn::data::makeCopy(5, 1, 3, 62, 7)[4].source);
  std::set<std::string> all;
  for (const Pair &p : attn::data::makeCopy(300, 10, 10, 62, 1))
    for (const std::string &w : words(p.source))
      all.insert(w);
  EXPECT_EQ(all.size(), 62u);
  EXPECT_TRUE(all.count("a") && all.count("z") && all.count("A") && all.count("Z"));

  EXPECT_THROW(attn::data::makeCopy(5, 1, 3, 1, 7), std::runtime_error);
  EXPECT_THROW(attn::data::makeCopy(5, 1, 3, 63, 7), std::runtime_error);
  EXPECT_THROW(attn::data::makeReverse(5, 0, 3, 10, 7), std::runtime_error);
  EXPECT_THROW(attn::data::makeReverse(5, 4, 3, 10, 7), std::runtime_error);
}

// An independent day of the week (Zeller's congruence), 0 = Sunday.
int weekday(int y, int m, int d) {
  if (m < 3) {
    m += 12;
    y -= 1;
  }
  int h = (d + 13 * (m + 1) / 5 + y + y / 4 - y / 100 + y / 400) % 7; // 0 = Saturday
  return (h + 6) % 7;
}

// Every way makeDates may write y-m-d (see Parallel.h).
std::vector<std::string> renderings(int y, int m, int d) {
  static const char *const months[] = {"January",   "February", "March",    "April",
                                       "May",       "June",     "July",     "August",
                                       "September", "October",  "November", "December"};
  static const char *const days[] = {"Sunday",   "Monday", "Tuesday", "Wednesday",
                                     "Thursday", "Friday", "Saturday"};
  std::string M = months[m - 1], Mon = M.substr(0, 3), W = days[weekday(y, m, d)];
  std::string D = std::to_string(d), Y = std::to_string(y);
  char dd[3], mm[3], yy[3];
  std::snprintf(dd, 3, "%02d", d);
  std::snprintf(mm, 3, "%02d", m);
  std::snprintf(yy, 3, "%02d", y % 100);
  std::string th = (d == 1 || d == 21 || d == 31) ? "st"
                   : (d == 2 || d == 22)          ? "nd"
                   : (d == 3 || d == 23)          ? "rd"
                                                  : "th";
  return {D + " " + M + " " + Y,
          M + " " + D + ", " + Y,
          std::string(dd) + "/" + mm + "/" + Y,
          W.substr(0, 3) + " " + D + " " + Mon + " " + Y,
          Y + " " + Mon + " " + D,
          D + "." + std::to_string(m) + "." + yy,
          W + ", " + M + " " + D + ", " + Y,
          D + th + " of " + M + " " + Y,
          D + " " + Mon + " " + Y,
          std::string(mm) + "/" + dd + "/" + yy,
          W + ", " + M + " " + D + th + " " + Y};
}

TEST(Builtin, Dates) {
  std::vector<Pair> pairs = attn::data::makeDates(3000, 11);
  ASSERT_EQ(pairs.size(), 3000u);
  std::set<size_t> formats; // which renderings occurred
  std::string earliest = "9999", latest = "0000";
  for (const Pair &p : pairs) {
    int y, m, d;
    ASSERT_EQ(std::sscanf(p.target.c_str(), "%4d-%2d-%2d", &y, &m, &d), 3) << p.target;
    ASSERT_EQ(p.target.size(), 10u);
    static const int monthDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    ASSERT_TRUE(m >= 1 && m <= 12 && d >= 1 && d <= monthDays[m - 1] + (m == 2 && leap))
        << p.target;
    std::vector<std::string> all = renderings(y, m, d);
    size_t format = std::find(all.begin(), all.end(), p.source) - all.begin();
    EXPECT_LT(format, all.size()) << p.source << " -> " << p.target;
    formats.insert(format);
    earliest = std::min(earliest, p.target);
    latest = std::max(latest, p.target);
  }
  EXPECT_GE(earliest, "1950-01-01");
  EXPECT_LE(latest, "2049-12-31");
  EXPECT_LT(earliest, "1952-01-01"); // the whole range is used
  EXPECT_GT(latest, "2047-12-31");
  EXPECT_EQ(formats, (std::set<size_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10}));
  EXPECT_EQ(attn::data::makeDates(10, 3)[9].source, attn::data::makeDates(10, 3)[9].source);
  // Known weekdays, through the independent formula: 2019-03-05 was a Tuesday.
  EXPECT_EQ(weekday(2019, 3, 5), 2);
  EXPECT_EQ(weekday(2000, 1, 1), 6);
  EXPECT_EQ(weekday(1950, 1, 1), 0);
}

// The two formats added last ("03/05/19" month first, "Tuesday, March 5th 2019"), read back by
// parsing the source alone: the parsed date must be the target, so a day-first or mislabelled
// rendering cannot pass.
TEST(Builtin, DatesUsAndOrdinalWeekdayFormats) {
  static const char *const months[] = {"January",   "February", "March",    "April",
                                       "May",       "June",     "July",     "August",
                                       "September", "October",  "November", "December"};
  static const char *const days[] = {"Sunday",   "Monday", "Tuesday", "Wednesday",
                                     "Thursday", "Friday", "Saturday"};
  auto indexOf = [](const char *const *names, int n, const std::string &name) {
    return int(std::find(names, names + n, name) - names);
  };
  auto iso = [](int y, int m, int d) {
    char buf[16];
    std::snprintf(buf, sizeof buf, "%04d-%02d-%02d", y, m, d);
    return std::string(buf);
  };
  const std::regex us(R"((\d\d)/(\d\d)/(\d\d))");
  const std::regex longOrdinal(R"((\w+day), (\w+) (\d{1,2})(st|nd|rd|th) (\d{4}))");
  int usSeen = 0, ordinalSeen = 0;
  std::smatch m;
  for (const Pair &p : attn::data::makeDates(3000, 5)) {
    if (std::regex_match(p.source, m, us)) {
      int yy = std::stoi(m[3]);
      EXPECT_EQ(p.target, iso(yy >= 50 ? 1900 + yy : 2000 + yy, std::stoi(m[1]), std::stoi(m[2])))
          << p.source;
      ++usSeen;
    } else if (std::regex_match(p.source, m, longOrdinal)) {
      int month = indexOf(months, 12, m[2]) + 1, day = std::stoi(m[3]), year = std::stoi(m[5]);
      ASSERT_LE(month, 12) << p.source;
      EXPECT_EQ(p.target, iso(year, month, day)) << p.source;
      EXPECT_EQ(indexOf(days, 7, m[1]), weekday(year, month, day)) << p.source;
      std::string suffix = day % 10 == 1 && day != 11   ? "st"
                           : day % 10 == 2 && day != 12 ? "nd"
                           : day % 10 == 3 && day != 13 ? "rd"
                                                        : "th";
      EXPECT_EQ(m[4].str(), suffix) << p.source;
      ++ordinalSeen;
    }
  }
  // 11 formats drawn uniformly: about 270 of each in 3000 pairs.
  EXPECT_GT(usSeen, 150);
  EXPECT_GT(ordinalSeen, 150);
}

Ids row(const Tensor &t, int64_t i) {
  int64_t w = t.shape()[1];
  return Ids(t.data<int32_t>() + i * w, t.data<int32_t>() + (i + 1) * w);
}

std::vector<float> frow(const Tensor &t, int64_t i) {
  int64_t w = t.shape()[1];
  return std::vector<float>(t.data<float>() + i * w, t.data<float>() + (i + 1) * w);
}

TEST(EncodePairs, PadsMasksAndDrops) {
  std::vector<Pair> pairs = {{"a b c", "x y"},            // kept
                             {"a b c d e", "x"},          // source too long (5 > 4)
                             {"b", "x y z"},              // kept: 3 target tokens + eos fill tgtLen
                             {"c", "x y z w"},            // target too long (4 > 3)
                             {"  ", "x"},                 // empty source
                             {"a q", "q"}};               // unknown tokens
  Vocab src = Vocab::build({{"a", "b", "c"}}, 1, 0);      // a 4, b 5, c 6
  Vocab tgt = Vocab::build({{"x", "y", "z", "w"}}, 1, 0); // w 4, x 5, y 6, z 7
  attn::data::Seq2SeqTensors t =
      attn::data::encodePairs(pairs, src, tgt, Tokenize::Word, Tokenize::Word, 4, 4, false);
  EXPECT_EQ(t.dropped, 3);
  ASSERT_EQ(t.src.shape(), (std::vector<int64_t>{3, 4}));
  EXPECT_EQ(t.src.dtype(), ATTN_I32);
  EXPECT_EQ(t.srcMask.dtype(), ATTN_F32);
  ASSERT_EQ(t.tgtIn.shape(), (std::vector<int64_t>{3, 4}));
  EXPECT_EQ(row(t.src, 0), (Ids{4, 5, 6, 0}));
  EXPECT_EQ(frow(t.srcMask, 0), (std::vector<float>{1, 1, 1, 0}));
  EXPECT_EQ(row(t.tgtIn, 0), (Ids{Vocab::kBos, 5, 6, 0}));
  EXPECT_EQ(row(t.tgtOut, 0), (Ids{5, 6, Vocab::kEos, 0}));
  EXPECT_EQ(row(t.src, 1), (Ids{5, 0, 0, 0}));
  EXPECT_EQ(row(t.tgtIn, 1), (Ids{Vocab::kBos, 5, 6, 7}));
  EXPECT_EQ(row(t.tgtOut, 1), (Ids{5, 6, 7, Vocab::kEos}));
  EXPECT_EQ(row(t.src, 2), (Ids{4, Vocab::kUnk, 0, 0}));
  EXPECT_EQ(row(t.tgtOut, 2), (Ids{Vocab::kUnk, Vocab::kEos, 0, 0}));

  // Reversed sources (padding stays on the right); characters as tokens.
  attn::data::Seq2SeqTensors r =
      attn::data::encodePairs({{"abc", "x"}}, src, tgt, Tokenize::Char, Tokenize::Char, 5, 3, true);
  EXPECT_EQ(r.dropped, 0);
  EXPECT_EQ(row(r.src, 0), (Ids{6, 5, 4, 0, 0}));
  EXPECT_EQ(frow(r.srcMask, 0), (std::vector<float>{1, 1, 1, 0, 0}));
  EXPECT_EQ(row(r.tgtOut, 0), (Ids{5, Vocab::kEos, 0}));

  // Nothing kept: N = 0, not an error.
  attn::data::Seq2SeqTensors none = attn::data::encodePairs(
      {{"a b c", "x"}}, src, tgt, Tokenize::Word, Tokenize::Word, 2, 4, false);
  EXPECT_EQ(none.dropped, 1);
  EXPECT_EQ(none.src.shape(), (std::vector<int64_t>{0, 2}));
  EXPECT_THROW(
      attn::data::encodePairs(pairs, src, tgt, Tokenize::Word, Tokenize::Word, 4, 1, false),
      std::runtime_error);
}

TEST(EncodeSource, MatchesEncodePairs) {
  Vocab src = Vocab::build({{"a", "b", "c"}}, 1, 0);
  Vocab tgt;
  attn::data::Seq2SeqTensors t = attn::data::encodePairs({{"c a b", "x"}}, src, tgt, Tokenize::Word,
                                                         Tokenize::Word, 5, 3, true);
  std::vector<float> mask;
  Ids ids = attn::data::encodeSource("c a b", src, Tokenize::Word, 5, true, mask);
  EXPECT_EQ(ids, row(t.src, 0));
  EXPECT_EQ(mask, frow(t.srcMask, 0));
  try {
    attn::data::encodeSource("a b c a b c", src, Tokenize::Word, 5, false, mask);
    FAIL() << "expected an exception";
  } catch (const std::runtime_error &e) {
    EXPECT_STREQ(e.what(), "attn: the source sentence has 6 tokens; the model reads at most 5");
  }
  EXPECT_THROW(attn::data::encodeSource(" ", src, Tokenize::Word, 5, false, mask),
               std::runtime_error);
}

} // namespace

namespace {

TEST(Labelled, PosTagsFollowTheContext) {
  std::vector<attn::data::Pair> pairs = attn::data::makePosTags(500, 4);
  ASSERT_EQ(pairs.size(), 500u);
  EXPECT_EQ(attn::data::makePosTags(500, 4)[17].source, pairs[17].source); // seeded
  int ambiguousNouns = 0, ambiguousVerbs = 0;
  for (const attn::data::Pair &p : pairs) {
    auto words = attn::data::tokenize(p.source, Tokenize::Word);
    auto tags = attn::data::tokenize(p.target, Tokenize::Word);
    ASSERT_EQ(words.size(), tags.size()) << p.source;
    EXPECT_EQ(tags[0], "DET");
    for (size_t i = 1; i < words.size(); ++i) {
      if (words[i] != "fly" && words[i] != "watch" && words[i] != "run")
        continue;
      // The previous word decides: after DET or ADJ a noun, after a NOUN a verb.
      if (tags[i - 1] == "NOUN") {
        EXPECT_EQ(tags[i], "VERB") << p.source;
        ++ambiguousVerbs;
      } else {
        EXPECT_EQ(tags[i], "NOUN") << p.source;
        ++ambiguousNouns;
      }
    }
  }
  EXPECT_GT(ambiguousNouns, 20);
  EXPECT_GT(ambiguousVerbs, 20);
}

TEST(Labelled, MajorityLabelIsTheUniqueMostFrequentSymbol) {
  std::vector<attn::data::Pair> pairs = attn::data::makeMajority(300, 3, 9, 3, 2);
  ASSERT_EQ(pairs.size(), 300u);
  for (const attn::data::Pair &p : pairs) {
    std::map<std::string, int> counts;
    for (const std::string &w : attn::data::tokenize(p.source, Tokenize::Word))
      ++counts[w];
    int best = counts[p.target], atBest = 0;
    for (const auto &entry : counts) {
      EXPECT_LE(entry.second, best) << p.source;
      atBest += entry.second == best;
    }
    EXPECT_EQ(atBest, 1) << p.source;
  }
}

TEST(Labelled, EncodesTagsAndLabelsPaddedAndDropsTooLong) {
  Vocab words = Vocab::build({{"a", "b", "c"}}, 1, 0), tags = Vocab::build({{"X", "Y"}}, 1, 0);
  attn::data::LabelledTensors t = attn::data::encodeTagged(
      {{"a b", "X Y"}, {"a b c a", "X X X X"}, {"c", "Y"}}, words, tags, Tokenize::Word, 3);
  EXPECT_EQ(t.dropped, 1);
  ASSERT_EQ(t.src.shape(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(row(t.src, 1), (Ids{words.id("c"), Vocab::kPad, Vocab::kPad}));
  EXPECT_EQ(row(t.labels, 0), (Ids{tags.id("X"), tags.id("Y"), Vocab::kPad}));
  EXPECT_EQ(frow(t.srcMask, 0), (std::vector<float>{1, 1, 0}));
  EXPECT_THROW(attn::data::encodeTagged({{"a b", "X"}}, words, tags, Tokenize::Word, 3),
               std::runtime_error);

  attn::data::LabelledTensors c = attn::data::encodeClassified(
      {{"a b", "Y"}, {"c", "X"}}, words, tags, Tokenize::Word, 3);
  ASSERT_EQ(c.labels.shape(), (std::vector<int64_t>{2}));
  EXPECT_EQ(c.labels.data<int32_t>()[0], tags.id("Y"));
  EXPECT_THROW(attn::data::encodeClassified({{"a", "X Y"}}, words, tags, Tokenize::Word, 3),
               std::runtime_error);
}

} // namespace
