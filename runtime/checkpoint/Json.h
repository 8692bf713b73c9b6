// A minimal, strict JSON reader and writer for safetensors headers. Private to
// AttnRuntimeCheckpoint: the runtime links nothing beyond the C++ standard library, and a
// safetensors header needs only objects, arrays, strings and integers.
//
// The parser accepts exactly that subset of RFC 8259 (no floats, true, false or null), keeps the
// order of object members (the file order of tensors), rejects duplicate keys and invalid UTF-8,
// and bounds the nesting depth so that hostile input cannot exhaust the stack.
#ifndef ATTN_CHECKPOINT_JSON_H
#define ATTN_CHECKPOINT_JSON_H

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace attn::checkpoint::json {

struct Value {
  enum class Kind { Object, Array, String, Integer };

  Kind kind = Kind::Object;
  std::string string;                               // Kind::String
  int64_t integer = 0;                              // Kind::Integer
  std::vector<Value> array;                         // Kind::Array
  std::vector<std::pair<std::string, Value>> object; // Kind::Object, in source order

  static Value makeObject() { return Value{}; }
  static Value makeArray();
  static Value makeString(std::string s);
  static Value makeInteger(int64_t i);

  // The member named `key` of an object, or nullptr.
  const Value *get(std::string_view key) const;
};

// "object", "array", "string", "integer": for error messages.
const char *kindName(Value::Kind kind);

// Thrown by parse(); what() is "at byte <offset>: <reason>".
struct ParseError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Parses one JSON value surrounded by optional whitespace.
Value parse(std::string_view text);

// Compact JSON text of `value` (no spaces), members in their stored order.
std::string serialize(const Value &value);

// `s` as a JSON string literal, quotes included: '"' and '\\' escaped, control characters as
// \b \f \n \r \t or \u00XX. Bytes >= 0x80 are copied (the caller ensures UTF-8).
std::string quote(std::string_view s);

// Whether `s` is well-formed UTF-8 (no overlong forms, surrogates or code points > U+10FFFF).
bool isValidUtf8(std::string_view s);

} // namespace attn::checkpoint::json

#endif // ATTN_CHECKPOINT_JSON_H
