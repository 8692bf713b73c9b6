// BLEU and chrF as sacreBLEU computes them (attn/task/Bleu.h), on cases whose n-gram counts
// are worked out by hand in the comments.
#include "attn/task/Bleu.h"

#include <gtest/gtest.h>

#include <cmath>

namespace {

using namespace attn::task;

TEST(Bleu, Tokenize13aSplitsAsMteval) {
  EXPECT_EQ(tokenize13a("Hello, world!"), "Hello , world !");
  // A decimal point stays; the comma after a digit and the final period split.
  EXPECT_EQ(tokenize13a("It costs $3.50, ok."), "It costs $ 3.50 , ok .");
  // A dash after a digit splits; one inside a word, and an apostrophe, do not.
  EXPECT_EQ(tokenize13a("1990-2000 well-known don't"), "1990 - 2000 well-known don't");
  EXPECT_EQ(tokenize13a("a&amp;b &lt;i&gt;"), "a & b < i >");
  EXPECT_EQ(tokenize13a("  two   spaces\tand a tab  "), "two spaces and a tab");
  EXPECT_EQ(tokenize13a("(x) [y] {z} a/b"), "( x ) [ y ] { z } a / b");
  EXPECT_EQ(tokenize13a("2026-12-04"), "2026 - 12 - 04");
  EXPECT_EQ(tokenize13a(""), "");
}

TEST(Bleu, IdenticalLinesScoreAHundred) {
  Bleu b = corpusBleu({"the cat sat on the mat", "a dog ran"}, {"the cat sat on the mat", "a dog ran"});
  EXPECT_NEAR(b.score, 100.0, 1e-9);
  EXPECT_DOUBLE_EQ(b.brevityPenalty, 1.0);
  EXPECT_EQ(b.hypLength, 9);
  EXPECT_EQ(b.refLength, 9);
}

TEST(Bleu, ClippedCountsAndExpSmoothing) {
  // hyp "the the the the", ref "the cat": 1-grams 1 of 4 (clipped to the reference's one
  // "the"); 2-grams 0 of 3 -> 100 / (2 * 3); 3-grams 0 of 2 -> 100 / (4 * 2); 4-grams 0 of 1
  // -> 100 / 8; the hypothesis is longer, so no brevity penalty.
  Bleu b = corpusBleu({"the the the the"}, {"the cat"});
  EXPECT_NEAR(b.precisions[0], 25.0, 1e-9);
  EXPECT_NEAR(b.precisions[1], 100.0 / 6, 1e-9);
  EXPECT_NEAR(b.precisions[2], 12.5, 1e-9);
  EXPECT_NEAR(b.precisions[3], 12.5, 1e-9);
  EXPECT_NEAR(b.score, std::pow(25.0 * (100.0 / 6) * 12.5 * 12.5, 0.25), 1e-9);
  EXPECT_EQ(b.str(), "BLEU = 15.97 25.0/16.7/12.5/12.5 (BP = 1.000 ratio = 2.000 hyp_len = 4 "
                     "ref_len = 2)");
}

TEST(Bleu, BrevityPenaltyAndCorpusSums) {
  // Every n-gram right, 4 tokens against 8: BP = exp(1 - 8/4).
  Bleu short_ = corpusBleu({"a b c d"}, {"a b c d e f g h"});
  EXPECT_NEAR(short_.brevityPenalty, std::exp(-1.0), 1e-12);
  EXPECT_NEAR(short_.score, 100 * std::exp(-1.0), 1e-9);
  // The corpus sums counts over lines before dividing (not a mean of sentence scores): a
  // 2-token line has no 3- or 4-grams, yet the corpus score stays 100.
  Bleu corpus = corpusBleu({"a b c d", "e f"}, {"a b c d", "e f"});
  EXPECT_NEAR(corpus.score, 100.0, 1e-9);
  // Hypotheses too short for any 4-gram: sacreBLEU scores 0.
  EXPECT_EQ(corpusBleu({"a b"}, {"a b"}).score, 0.0);
  EXPECT_EQ(corpusBleu({""}, {"a b c d"}).score, 0.0);
  EXPECT_THROW(corpusBleu({"a"}, {}), std::invalid_argument);
}

TEST(Chrf, CharacterNgramsWithoutSpaces) {
  EXPECT_NEAR(corpusChrf({"the cat"}, {"the cat"}), 100.0, 1e-9);
  EXPECT_NEAR(corpusChrf({"thecat"}, {"the cat"}), 100.0, 1e-9); // whitespace is left out
  // hyp "ab", ref "abc": 1-grams P 2/2, R 2/3; 2-grams P 1/1, R 1/2; no hypothesis 3-grams.
  // Averages over those two orders: P 1, R 7/12; F2 = 5 P R / (4 P + R) = 35/55.
  EXPECT_NEAR(corpusChrf({"ab"}, {"abc"}), 100.0 * 35 / 55, 1e-9);
  // Code points, not bytes: "é" is one character.
  EXPECT_NEAR(corpusChrf({"\xc3\xa9t\xc3\xa9"}, {"\xc3\xa9t\xc3\xa9"}), 100.0, 1e-9);
  EXPECT_NEAR(corpusChrf({"\xc3\xa9"}, {"e"}), 0.0, 1e-12);
  EXPECT_EQ(corpusChrf({""}, {"abc"}), 0.0);
}

} // namespace
