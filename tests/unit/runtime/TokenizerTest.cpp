// Subword tokenizers (runtime/data's Tokenizer over runtime/subwords' SentencePiece): trained
// in memory, lossless, deterministic, carried by their serialized form; and the errors.
#include "attn/data/Tokenizer.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

namespace {

using attn::data::Tokenize;
using attn::data::Tokenizer;
using Strings = std::vector<std::string>;

// A few dozen lines of a small language: words that share stems and endings.
Strings corpus() {
  Strings lines;
  const char *stems[] = {"walk", "talk", "play", "jump", "look", "call"};
  const char *ends[] = {"", "s", "ed", "ing", "er"};
  for (int i = 0; i < 40; ++i) {
    std::string line;
    for (int w = 0; w < 6; ++w)
      line += std::string(w ? " " : "") + stems[(i + w) % 6] + ends[(i * 3 + w) % 5];
    lines.push_back(line);
  }
  return lines;
}

TEST(Tokenizer, CharAndWordNeedNoModel) {
  Tokenizer word, chars(Tokenize::Char);
  EXPECT_EQ(word.tokenize("the  cat"), (Strings{"the", "cat"}));
  EXPECT_EQ(chars.detokenize({"a", " ", "b"}), "a b");
  EXPECT_EQ(word.model(), "");
  EXPECT_EQ(Tokenizer::deserialize(chars.serialize(), "t"), chars);
  EXPECT_THROW(Tokenizer(Tokenize::Bpe), std::logic_error);
}

TEST(Tokenizer, SubwordsRoundTripAndAreDeterministic) {
  for (Tokenize kind : {Tokenize::Unigram, Tokenize::Bpe}) {
    SCOPED_TRACE(attn::data::tokenizeName(kind));
    Tokenizer t = Tokenizer::train(kind, corpus(), 40, "the corpus");
    EXPECT_EQ(t.kind(), kind);
    for (const std::string &line : {std::string("walking talked"), std::string("jumper  plays"),
                                    corpus()[7]}) {
      Strings pieces = t.tokenize(line);
      EXPECT_EQ(t.detokenize(pieces), line); // lossless, double spaces included
      EXPECT_GE(pieces.size(), 2u);
    }
    // Fewer pieces than characters: the pieces are subwords, not letters.
    EXPECT_LT(t.tokenize("walking talking").size(), std::string("walking talking").size());
    // The same lines give the same model; its serialized form gives the same pieces.
    EXPECT_EQ(Tokenizer::train(kind, corpus(), 40, "again").model(), t.model());
    Tokenizer back = Tokenizer::deserialize(t.serialize(), "metadata");
    EXPECT_EQ(back, t);
    EXPECT_EQ(back.tokenize("calls looked"), t.tokenize("calls looked"));
    // A model file's bytes load as a user's model.
    Tokenizer user = Tokenizer::load(Tokenize::SentencePiece, t.model(), "user.model");
    EXPECT_EQ(user.tokenize("calls looked"), t.tokenize("calls looked"));
  }
}

// A line far over SentencePiece's sentence bound (4192 bytes) is left out of the subword
// model's training, and said: the model is the one the other lines give (a 20 MB line took
// 4.9 GB to train on).
TEST(Tokenizer, OverlongLinesAreLeftOutOfSubwordTraining) {
  Strings lines = corpus();
  Tokenizer plain = Tokenizer::train(Tokenize::Bpe, lines, 40, "the corpus");
  lines.push_back(std::string(200000, 'z'));
  testing::internal::CaptureStderr();
  Tokenizer t = Tokenizer::train(Tokenize::Bpe, lines, 40, "the corpus");
  std::string said = testing::internal::GetCapturedStderr();
  EXPECT_EQ(t.model(), plain.model());
  EXPECT_NE(said.find("1 of 41 lines of the corpus are longer than 4192 bytes"), std::string::npos)
      << said;
}

TEST(Tokenizer, BadModelsAreNamed) {
  try {
    Tokenizer::load(Tokenize::SentencePiece, "not a model", "user.model");
    FAIL() << "garbage loaded";
  } catch (const std::runtime_error &e) {
    EXPECT_NE(std::string(e.what()).find("user.model: not a SentencePiece model"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(Tokenizer::deserialize("attn-tokenizer 1 bpe\n!!!!", "m"), std::runtime_error);
  EXPECT_THROW(Tokenizer::deserialize("attn-vocab 1 4\n", "m"), std::runtime_error);
  EXPECT_THROW(Tokenizer::deserialize("attn-tokenizer 1 piece\n", "m"), std::runtime_error);
  EXPECT_THROW(Tokenizer::train(Tokenize::Bpe, {}, 40, "nothing"), std::runtime_error);
}

} // namespace
