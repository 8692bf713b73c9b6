// The private JSON reader/writer behind the safetensors header.
#include "runtime/checkpoint/Json.h"

#include <gtest/gtest.h>

namespace attn::checkpoint::json {
namespace {

std::string parseError(const std::string &text) {
  try {
    parse(text);
  } catch (const ParseError &e) {
    return e.what();
  }
  return "(accepted)";
}

TEST(JsonTest, ParsesObjectsArraysStringsAndIntegersInOrder) {
  Value v = parse(" {\"b\": [1, -2, 0, 9223372036854775807, -9223372036854775808], \"a\": {\"s\": \"x\"}} \n");
  ASSERT_EQ(v.kind, Value::Kind::Object);
  ASSERT_EQ(v.object.size(), 2u);
  EXPECT_EQ(v.object[0].first, "b"); // source order, not sorted
  const Value &b = *v.get("b");
  ASSERT_EQ(b.array.size(), 5u);
  EXPECT_EQ(b.array[1].integer, -2);
  EXPECT_EQ(b.array[3].integer, INT64_MAX);
  EXPECT_EQ(b.array[4].integer, INT64_MIN);
  EXPECT_EQ(v.get("a")->get("s")->string, "x");
  EXPECT_EQ(v.get("missing"), nullptr);
}

TEST(JsonTest, DecodesEscapesToUtf8) {
  EXPECT_EQ(parse(R"("q\" b\\ s\/ \b\f\n\r\t")").string, "q\" b\\ s/ \b\f\n\r\t");
  EXPECT_EQ(parse(R"("\u0041\u00e9\u20AC")").string, "A\xc3\xa9\xe2\x82\xac");
  EXPECT_EQ(parse(R"("\ud83d\ude00")").string, "\xf0\x9f\x98\x80"); // surrogate pair
  EXPECT_EQ(parse(R"("\u0000")").string, std::string(1, '\0'));
  EXPECT_EQ(parse("\"caf\xc3\xa9\"").string, "caf\xc3\xa9"); // raw UTF-8 passes through
}

TEST(JsonTest, RejectsWhatSafetensorsHeadersNeverContain) {
  EXPECT_EQ(parseError("1.5"), "at byte 1: only integers are supported, not floating-point numbers");
  EXPECT_EQ(parseError("1e3"), "at byte 1: only integers are supported, not floating-point numbers");
  EXPECT_EQ(parseError("null"), "at byte 0: true, false and null are not supported in a safetensors header");
  EXPECT_EQ(parseError("01"), "at byte 0: leading zeros are not allowed in numbers");
  EXPECT_EQ(parseError("9223372036854775808"), "at byte 0: integer out of range");
  EXPECT_EQ(parseError("-"), "at byte 1: expected a digit, got end of input");
  EXPECT_EQ(parseError("\"abc"), "at byte 4: unterminated string");
  EXPECT_EQ(parseError("\"a\nb\""), "at byte 2: unescaped control character (byte 0x0a) in string");
  EXPECT_EQ(parseError(R"("\ude00")"), "at byte 1: unpaired low surrogate in \\u escape");
  EXPECT_EQ(parseError(R"("\ud83d x")"), "at byte 1: high surrogate in \\u escape not followed by a low surrogate");
  EXPECT_EQ(parseError(R"("\u12G4")"), "at byte 5: expected a hex digit in \\u escape, got 'G'");
  EXPECT_EQ(parseError("\"\xc0\xaf\""), "at byte 1: invalid UTF-8 in string"); // overlong '/'
  EXPECT_EQ(parseError("\"\xed\xa0\x80\""), "at byte 1: invalid UTF-8 in string"); // surrogate
  EXPECT_EQ(parseError("[1 2]"), "at byte 3: expected ',' or ']' in array, got '2'");
  EXPECT_EQ(parseError("[1,]"), "at byte 3: expected a value, got ']'");
  EXPECT_EQ(parseError("{\"a\":1,\"a\":2}"), "at byte 7: duplicate key \"a\"");
  EXPECT_EQ(parseError("{} {}"), "at byte 3: unexpected '{' after the JSON value");
  EXPECT_EQ(parseError(std::string(65, '[') + std::string(65, ']')), "at byte 64: nesting deeper than 64 levels");
  EXPECT_NO_THROW(parse(std::string(64, '[') + std::string(64, ']')));
}

TEST(JsonTest, QuoteEscapesQuotesBackslashesAndControlCharacters) {
  EXPECT_EQ(quote("a\"b\\c"), R"("a\"b\\c")");
  EXPECT_EQ(quote("\n\t\r\b\f"), R"("\n\t\r\b\f")");
  EXPECT_EQ(quote(std::string("\x01\x1f\0", 3)), R"("\u0001\u001f\u0000")");
  EXPECT_EQ(quote("caf\xc3\xa9"), "\"caf\xc3\xa9\"");
  // Every byte string that is valid UTF-8 survives quote -> parse.
  std::string all;
  for (int c = 0; c < 0x80; ++c)
    all += static_cast<char>(c);
  all += "\xf0\x9f\x98\x80 \xe2\x82\xac";
  EXPECT_EQ(parse(quote(all)).string, all);
}

TEST(JsonTest, SerializesCompactlyInStoredOrder) {
  Value v = Value::makeObject();
  v.object.emplace_back("z", Value::makeInteger(-3));
  Value arr = Value::makeArray();
  arr.array.push_back(Value::makeString("s"));
  arr.array.push_back(Value::makeArray());
  v.object.emplace_back("a", std::move(arr));
  v.object.emplace_back("o", Value::makeObject());
  EXPECT_EQ(serialize(v), R"({"z":-3,"a":["s",[]],"o":{}})");
  EXPECT_EQ(serialize(parse(serialize(v))), serialize(v));
}

TEST(JsonTest, ValidatesUtf8) {
  EXPECT_TRUE(isValidUtf8("plain ascii"));
  EXPECT_TRUE(isValidUtf8("\xf4\x8f\xbf\xbf")); // U+10FFFF
  EXPECT_FALSE(isValidUtf8("\xf4\x90\x80\x80")); // > U+10FFFF
  EXPECT_FALSE(isValidUtf8("\xe2\x82"));         // truncated
  EXPECT_FALSE(isValidUtf8("\x80"));             // lone continuation byte
}

} // namespace
} // namespace attn::checkpoint::json
