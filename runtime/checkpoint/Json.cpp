#include "Json.h"

#include <unordered_set>

namespace attn::checkpoint::json {

namespace {

// Safetensors headers nest three levels deep; the limit only guards the recursion.
constexpr int kMaxDepth = 64;

// Length of the well-formed UTF-8 sequence starting at s[i] (which is >= 0x80), or 0.
// Follows RFC 3629 table 3-7: rejects overlong forms, surrogates and code points > U+10FFFF.
size_t utf8SequenceLength(std::string_view s, size_t i) {
  auto byte = [&](size_t k) { return i + k < s.size() ? static_cast<unsigned char>(s[i + k]) : 0; };
  auto cont = [&](size_t k, unsigned lo = 0x80, unsigned hi = 0xBF) {
    unsigned b = byte(k);
    return b >= lo && b <= hi;
  };
  unsigned b0 = byte(0);
  if (b0 >= 0xC2 && b0 <= 0xDF)
    return cont(1) ? 2 : 0;
  if (b0 >= 0xE0 && b0 <= 0xEF) {
    unsigned lo = b0 == 0xE0 ? 0xA0 : 0x80; // overlong
    unsigned hi = b0 == 0xED ? 0x9F : 0xBF; // surrogates
    return cont(1, lo, hi) && cont(2) ? 3 : 0;
  }
  if (b0 >= 0xF0 && b0 <= 0xF4) {
    unsigned lo = b0 == 0xF0 ? 0x90 : 0x80; // overlong
    unsigned hi = b0 == 0xF4 ? 0x8F : 0xBF; // > U+10FFFF
    return cont(1, lo, hi) && cont(2) && cont(3) ? 4 : 0;
  }
  return 0;
}

void appendUtf8(std::string &out, uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

// Recursive descent over the supported subset. Every error names the byte offset it found.
class Parser {
public:
  explicit Parser(std::string_view text) : text_(text) {}

  Value parseDocument() {
    skipWhitespace();
    Value value = parseValue(0);
    skipWhitespace();
    if (pos_ != text_.size())
      fail("unexpected " + describeNext() + " after the JSON value");
    return value;
  }

private:
  [[noreturn]] void fail(const std::string &reason) const {
    throw ParseError("at byte " + std::to_string(pos_) + ": " + reason);
  }

  bool atEnd() const { return pos_ >= text_.size(); }
  char peek() const { return atEnd() ? '\0' : text_[pos_]; }

  // "'x'", "byte 0x07" or "end of input", for messages.
  std::string describeNext() const {
    if (atEnd())
      return "end of input";
    unsigned char c = static_cast<unsigned char>(text_[pos_]);
    if (c >= 0x20 && c < 0x7F)
      return std::string("'") + static_cast<char>(c) + "'";
    static const char *hex = "0123456789abcdef";
    return std::string("byte 0x") + hex[c >> 4] + hex[c & 15];
  }

  void skipWhitespace() {
    while (!atEnd() && (peek() == ' ' || peek() == '\t' || peek() == '\n' || peek() == '\r'))
      ++pos_;
  }

  void expect(char c) {
    if (peek() != c || atEnd())
      fail(std::string("expected '") + c + "', got " + describeNext());
    ++pos_;
  }

  Value parseValue(int depth) {
    if (depth >= kMaxDepth)
      fail("nesting deeper than " + std::to_string(kMaxDepth) + " levels");
    char c = peek();
    if (atEnd())
      fail("expected a value, got end of input");
    if (c == '{')
      return parseObject(depth);
    if (c == '[')
      return parseArray(depth);
    if (c == '"')
      return Value::makeString(parseString());
    if (c == '-' || (c >= '0' && c <= '9'))
      return Value::makeInteger(parseInteger());
    if (c == 't' || c == 'f' || c == 'n')
      fail("true, false and null are not supported in a safetensors header");
    fail("expected a value, got " + describeNext());
  }

  Value parseObject(int depth) {
    expect('{');
    Value object = Value::makeObject();
    std::unordered_set<std::string> seen;
    skipWhitespace();
    if (peek() == '}') {
      ++pos_;
      return object;
    }
    while (true) {
      skipWhitespace();
      if (peek() != '"')
        fail("expected a string key, got " + describeNext());
      size_t keyPos = pos_;
      std::string key = parseString();
      if (!seen.insert(key).second) {
        pos_ = keyPos;
        fail("duplicate key " + quote(key));
      }
      skipWhitespace();
      expect(':');
      skipWhitespace();
      object.object.emplace_back(std::move(key), parseValue(depth + 1));
      skipWhitespace();
      if (peek() == '}' && !atEnd()) {
        ++pos_;
        return object;
      }
      if (peek() != ',' || atEnd())
        fail("expected ',' or '}' in object, got " + describeNext());
      ++pos_;
    }
  }

  Value parseArray(int depth) {
    expect('[');
    Value array = Value::makeArray();
    skipWhitespace();
    if (peek() == ']' && !atEnd()) {
      ++pos_;
      return array;
    }
    while (true) {
      skipWhitespace();
      array.array.push_back(parseValue(depth + 1));
      skipWhitespace();
      if (peek() == ']' && !atEnd()) {
        ++pos_;
        return array;
      }
      if (peek() != ',' || atEnd())
        fail("expected ',' or ']' in array, got " + describeNext());
      ++pos_;
    }
  }

  // JSON integers: -?(0|[1-9][0-9]*), within int64_t.
  int64_t parseInteger() {
    size_t start = pos_;
    bool negative = peek() == '-';
    if (negative)
      ++pos_;
    if (atEnd() || peek() < '0' || peek() > '9')
      fail("expected a digit, got " + describeNext());
    if (peek() == '0' && pos_ + 1 < text_.size() && text_[pos_ + 1] >= '0' && text_[pos_ + 1] <= '9')
      fail("leading zeros are not allowed in numbers");
    // Accumulate the magnitude; INT64_MIN's magnitude is one more than INT64_MAX.
    const uint64_t limit = negative ? uint64_t(INT64_MAX) + 1 : uint64_t(INT64_MAX);
    uint64_t magnitude = 0;
    while (!atEnd() && peek() >= '0' && peek() <= '9') {
      uint64_t digit = static_cast<uint64_t>(peek() - '0');
      if (magnitude > (limit - digit) / 10) {
        pos_ = start;
        fail("integer out of range");
      }
      magnitude = magnitude * 10 + digit;
      ++pos_;
    }
    if (peek() == '.' || peek() == 'e' || peek() == 'E')
      fail("only integers are supported, not floating-point numbers");
    if (!negative)
      return static_cast<int64_t>(magnitude);
    return magnitude == uint64_t(INT64_MAX) + 1 ? INT64_MIN : -static_cast<int64_t>(magnitude);
  }

  uint32_t parseHex4() {
    uint32_t value = 0;
    for (int i = 0; i < 4; ++i) {
      char c = peek();
      uint32_t digit;
      if (!atEnd() && c >= '0' && c <= '9')
        digit = static_cast<uint32_t>(c - '0');
      else if (!atEnd() && c >= 'a' && c <= 'f')
        digit = static_cast<uint32_t>(c - 'a' + 10);
      else if (!atEnd() && c >= 'A' && c <= 'F')
        digit = static_cast<uint32_t>(c - 'A' + 10);
      else
        fail("expected a hex digit in \\u escape, got " + describeNext());
      value = value * 16 + digit;
      ++pos_;
    }
    return value;
  }

  // After "\u": one code point, combining a UTF-16 surrogate pair.
  uint32_t parseUnicodeEscape() {
    size_t start = pos_ - 2;
    uint32_t cp = parseHex4();
    if (cp >= 0xDC00 && cp <= 0xDFFF) {
      pos_ = start;
      fail("unpaired low surrogate in \\u escape");
    }
    if (cp < 0xD800 || cp > 0xDBFF)
      return cp;
    if (text_.substr(pos_, 2) != "\\u") {
      pos_ = start;
      fail("high surrogate in \\u escape not followed by a low surrogate");
    }
    pos_ += 2;
    uint32_t low = parseHex4();
    if (low < 0xDC00 || low > 0xDFFF) {
      pos_ = start;
      fail("high surrogate in \\u escape not followed by a low surrogate");
    }
    return 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
  }

  void parseEscape(std::string &out) {
    ++pos_; // the backslash
    char c = peek();
    if (atEnd())
      fail("unterminated escape in string");
    ++pos_;
    switch (c) {
    case '"': out += '"'; return;
    case '\\': out += '\\'; return;
    case '/': out += '/'; return;
    case 'b': out += '\b'; return;
    case 'f': out += '\f'; return;
    case 'n': out += '\n'; return;
    case 'r': out += '\r'; return;
    case 't': out += '\t'; return;
    case 'u': appendUtf8(out, parseUnicodeEscape()); return;
    default:
      --pos_;
      fail("invalid escape \\" + describeNext());
    }
  }

  std::string parseString() {
    expect('"');
    std::string out;
    while (true) {
      if (atEnd())
        fail("unterminated string");
      unsigned char c = static_cast<unsigned char>(text_[pos_]);
      if (c == '"') {
        ++pos_;
        return out;
      }
      if (c == '\\') {
        parseEscape(out);
      } else if (c < 0x20) {
        fail("unescaped control character (" + describeNext() + ") in string");
      } else if (c < 0x80) {
        out += static_cast<char>(c);
        ++pos_;
      } else {
        size_t n = utf8SequenceLength(text_, pos_);
        if (n == 0)
          fail("invalid UTF-8 in string");
        out.append(text_.substr(pos_, n));
        pos_ += n;
      }
    }
  }

  std::string_view text_;
  size_t pos_ = 0;
};

void serializeTo(std::string &out, const Value &value) {
  switch (value.kind) {
  case Value::Kind::String:
    out += quote(value.string);
    return;
  case Value::Kind::Integer:
    out += std::to_string(value.integer);
    return;
  case Value::Kind::Array:
    out += '[';
    for (size_t i = 0; i < value.array.size(); ++i) {
      if (i)
        out += ',';
      serializeTo(out, value.array[i]);
    }
    out += ']';
    return;
  case Value::Kind::Object:
    out += '{';
    for (size_t i = 0; i < value.object.size(); ++i) {
      if (i)
        out += ',';
      out += quote(value.object[i].first);
      out += ':';
      serializeTo(out, value.object[i].second);
    }
    out += '}';
    return;
  }
}

} // namespace

Value Value::makeArray() {
  Value v;
  v.kind = Kind::Array;
  return v;
}

Value Value::makeString(std::string s) {
  Value v;
  v.kind = Kind::String;
  v.string = std::move(s);
  return v;
}

Value Value::makeInteger(int64_t i) {
  Value v;
  v.kind = Kind::Integer;
  v.integer = i;
  return v;
}

const Value *Value::get(std::string_view key) const {
  for (const auto &member : object)
    if (member.first == key)
      return &member.second;
  return nullptr;
}

const char *kindName(Value::Kind kind) {
  switch (kind) {
  case Value::Kind::Object:
    return "object";
  case Value::Kind::Array:
    return "array";
  case Value::Kind::String:
    return "string";
  case Value::Kind::Integer:
    return "integer";
  }
  return "?";
}

Value parse(std::string_view text) { return Parser(text).parseDocument(); }

std::string serialize(const Value &value) {
  std::string out;
  serializeTo(out, value);
  return out;
}

std::string quote(std::string_view s) {
  static const char *hex = "0123456789abcdef";
  std::string out = "\"";
  for (char ch : s) {
    unsigned char c = static_cast<unsigned char>(ch);
    switch (c) {
    case '"': out += "\\\""; break;
    case '\\': out += "\\\\"; break;
    case '\b': out += "\\b"; break;
    case '\f': out += "\\f"; break;
    case '\n': out += "\\n"; break;
    case '\r': out += "\\r"; break;
    case '\t': out += "\\t"; break;
    default:
      if (c < 0x20) {
        out += "\\u00";
        out += hex[c >> 4];
        out += hex[c & 15];
      } else {
        out += ch;
      }
    }
  }
  return out + "\"";
}

bool isValidUtf8(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    if (static_cast<unsigned char>(s[i]) < 0x80) {
      ++i;
      continue;
    }
    size_t n = utf8SequenceLength(s, i);
    if (n == 0)
      return false;
    i += n;
  }
  return true;
}

} // namespace attn::checkpoint::json
