// Tokenization, vocabulary building and the vocabulary's serialized form (runtime/data).
#include "attn/data/Vocab.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

namespace {

using attn::data::Tokenize;
using attn::data::Vocab;
using Strings = std::vector<std::string>;

TEST(Tokenize, CharKeepsEveryByte) {
  EXPECT_EQ(attn::data::tokenize("a b\t", Tokenize::Char), (Strings{"a", " ", "b", "\t"}));
  EXPECT_EQ(attn::data::tokenize("", Tokenize::Char), Strings{});
  EXPECT_EQ(attn::data::detokenize({"a", " ", "b"}, Tokenize::Char), "a b");
}

TEST(Tokenize, WordSplitsOnWhitespaceRuns) {
  EXPECT_EQ(attn::data::tokenize("  the  cat\tsat \r\n", Tokenize::Word),
            (Strings{"the", "cat", "sat"}));
  EXPECT_EQ(attn::data::tokenize(" \t ", Tokenize::Word), Strings{});
  EXPECT_EQ(attn::data::detokenize({"the", "cat", "sat"}, Tokenize::Word), "the cat sat");
  EXPECT_EQ(attn::data::detokenize({}, Tokenize::Word), "");
}

TEST(Vocab, SpecialsHaveFixedIds) {
  Vocab v;
  EXPECT_EQ(v.size(), 4);
  EXPECT_EQ(v.token(Vocab::kPad), "<pad>");
  EXPECT_EQ(v.token(Vocab::kBos), "<bos>");
  EXPECT_EQ(v.token(Vocab::kEos), "<eos>");
  EXPECT_EQ(v.token(Vocab::kUnk), "<unk>");
  EXPECT_EQ(v.id("<eos>"), Vocab::kEos);
  EXPECT_EQ(v.id("nope"), Vocab::kUnk);
  EXPECT_THROW(v.token(4), std::runtime_error);
  EXPECT_THROW(v.token(-1), std::runtime_error);
}

TEST(Vocab, BuildOrdersByCountThenBytes) {
  // counts: c 3, a 2, b 2, <unk> 1 (the special itself), z 1
  std::vector<Strings> sentences = {{"c", "b", "a"}, {"c", "a", "<unk>"}, {"b", "c", "z"}};
  Vocab v = Vocab::build(sentences, 1, 0);
  ASSERT_EQ(v.size(), 8);
  EXPECT_EQ(v.token(4), "c");
  EXPECT_EQ(v.token(5), "a");
  EXPECT_EQ(v.token(6), "b");
  EXPECT_EQ(v.token(7), "z");
  EXPECT_EQ(v.id("<unk>"), Vocab::kUnk);

  // The order of the sentences does not matter.
  std::vector<Strings> reversed(sentences.rbegin(), sentences.rend());
  EXPECT_EQ(Vocab::build(reversed, 1, 0), v);

  // minCount drops rare tokens; maxSize counts the specials.
  Vocab frequent = Vocab::build(sentences, 2, 0);
  EXPECT_EQ(frequent.size(), 7);
  EXPECT_EQ(frequent.id("z"), Vocab::kUnk);
  Vocab small = Vocab::build(sentences, 1, 5);
  EXPECT_EQ(small.size(), 5);
  EXPECT_EQ(small.token(4), "c");
  EXPECT_EQ(Vocab::build(sentences, 1, 4).size(), 4);
  EXPECT_THROW(Vocab::build(sentences, 1, 3), std::runtime_error);
}

TEST(Vocab, BuildTieBreakIsUnsignedByteOrder) {
  Vocab v = Vocab::build({{"\xff", "a", "B"}}, 1, 0);
  EXPECT_EQ(v.token(4), "B");
  EXPECT_EQ(v.token(5), "a");
  EXPECT_EQ(v.token(6), "\xff");
}

TEST(Vocab, EncodeDecode) {
  Vocab v = Vocab::build({{"x", "y", "y"}}, 1, 0); // y = 4, x = 5
  EXPECT_EQ(v.encode({"x", "q", "y"}), (std::vector<int32_t>{5, Vocab::kUnk, 4}));
  EXPECT_EQ(v.decode({Vocab::kBos, 5, Vocab::kPad, 4, Vocab::kUnk, Vocab::kEos, 5}),
            (Strings{"x", "y", "<unk>"}));
  EXPECT_EQ(v.decode({}), Strings{});
}

TEST(Vocab, SerializeRoundTripsAnyByte) {
  // Every byte but NUL as a character token, plus multi-byte tokens made of escape characters.
  std::string all;
  for (int c = 1; c < 256; ++c)
    all.push_back((char)c);
  std::vector<Strings> sentences = {attn::data::tokenize(all, Tokenize::Char),
                                    {"a b", "\\n", "\\", "x\ny", "\t\t", "\r\n", "<eos>x"}};
  Vocab v = Vocab::build(sentences, 1, 0);
  ASSERT_EQ(v.size(), 4 + 255 + 6); // "\\" is both a character and a listed token
  std::string text = v.serialize();
  EXPECT_EQ(text.rfind("attn-vocab 1 265\n<pad>\n<bos>\n<eos>\n<unk>\n", 0), 0u);
  for (char c : text) // printable ASCII: valid UTF-8, fit for JSON metadata
    ASSERT_TRUE(c == '\n' || (c >= 0x20 && c < 0x7f)) << (int)(unsigned char)c;
  Vocab back = Vocab::deserialize(text);
  EXPECT_EQ(back, v);
  for (int32_t i = 0; i < v.size(); ++i)
    EXPECT_EQ(back.id(v.token(i)), i);
  EXPECT_EQ(Vocab::deserialize(Vocab().serialize()), Vocab());
}

TEST(Vocab, SerializeEscapes) {
  Vocab v = Vocab::build({{"a\\b", "c\nd", " ", "\xc3\xa9t\xc3\xa9", "\x01\x7f"}}, 1, 0);
  EXPECT_EQ(v.serialize(), "attn-vocab 1 9\n<pad>\n<bos>\n<eos>\n<unk>\n"
                           "\\x01\\x7f\n \na\\\\b\nc\\nd\n\\xc3\\xa9t\\xc3\\xa9\n");
  // Upper-case hex digits and raw bytes (but NUL and newline) are read too.
  Vocab lenient = Vocab::deserialize("attn-vocab 1 9\n<pad>\n<bos>\n<eos>\n<unk>\n"
                                     "\\x01\\x7F\n \na\\\\b\nc\\nd\n\xc3\xa9t\\xC3\\xa9\n");
  EXPECT_EQ(lenient, v);
}

std::string errorOf(const std::string &text) {
  try {
    Vocab::deserialize(text);
  } catch (const std::runtime_error &e) {
    return e.what();
  }
  return "<no error>";
}

TEST(Vocab, DeserializeRejectsMalformedInput) {
  const std::string specials = "<pad>\n<bos>\n<eos>\n<unk>\n";
  EXPECT_EQ(errorOf(""), "attn: vocabulary: line 1: expected the header 'attn-vocab 1 <size>'");
  EXPECT_NE(errorOf("attn-vocab 2 4\n" + specials).find("header"), std::string::npos);
  EXPECT_NE(errorOf("attn-vocab 1 x\n" + specials).find("token count"), std::string::npos);
  EXPECT_EQ(errorOf("attn-vocab 1 5\n" + specials),
            "attn: vocabulary: line 5: the header announces 5 tokens, found 4");
  EXPECT_EQ(errorOf("attn-vocab 1 5\n" + specials + "a\\qb\n"),
            "attn: vocabulary: line 6: unknown escape '\\q'");
  EXPECT_NE(errorOf("attn-vocab 1 5\n" + specials + "ab\\\n").find("backslash"), std::string::npos);
  EXPECT_NE(errorOf("attn-vocab 1 5\n" + specials + std::string("a\0b\n", 4)).find("NUL"),
            std::string::npos);
  EXPECT_NE(errorOf("attn-vocab 1 5\n" + specials + "a\\xz1\n").find("two hex digits"),
            std::string::npos);
  EXPECT_NE(errorOf("attn-vocab 1 5\n" + specials + "a\\x4\n").find("two hex digits"),
            std::string::npos);
  EXPECT_NE(errorOf("attn-vocab 1 5\n" + specials + "a\\x00\n").find("NUL"), std::string::npos);
  EXPECT_EQ(errorOf("attn-vocab 1 6\n" + specials + "a\na\n"),
            "attn: vocabulary: line 7: duplicate token 'a'");
  EXPECT_NE(errorOf("attn-vocab 1 5\n" + specials + "a").find("not terminated"), std::string::npos);
  EXPECT_EQ(errorOf("attn-vocab 1 4\n<pad>\n<eos>\n<bos>\n<unk>\n"),
            "attn: vocabulary: line 3: expected the special token '<bos>' at id 1, got '<eos>'");
  EXPECT_NE(errorOf("attn-vocab 1 2\n<pad>\n<bos>\n").find("at least"), std::string::npos);
}

} // namespace
