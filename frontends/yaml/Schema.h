// The spec schema: one table listing every key a spec file may contain. The parser validates
// against it, fills defaults from it, and docs/yaml-reference.md is rendered from it, so a key
// added here is parsed, defaulted and documented in one place.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace attn::yaml {

enum class KeyType { String, Int, Float, Bool, IntList, Map };

struct KeySchema {
  std::string path;                 // dotted from the top: "model.rnn.hidden"
  KeyType type = KeyType::String;
  bool required = false;            // required whenever its parent map is present
  std::string defaultValue;         // YAML text; empty when the key has no default
  std::vector<std::string> allowed; // enum values; empty when any value of the type goes
  std::optional<int64_t> min;       // lower bound of an Int/Float, or of each IntList item
  std::optional<double> max;        // upper bound, likewise (sizes are bounded: see Schema.cpp)
  bool maxExclusive = false;        // the value must be below `max` (a probability < 1)
  int64_t minItems = 0;             // IntList only
  int64_t maxItems = 0;             // IntList only; 0: no bound
  bool fileName = false;            // String: usable as a file name (the model's name)
  std::string oneOf;                // siblings sharing this tag: exactly one must be present
  std::string doc;                  // one line, shown in the reference

  std::string name() const;         // the last path component: "hidden"
  std::string parent() const;       // "model.rnn"; "" at the top level
};

// Parents come before their children, in the order the reference documents them.
const std::vector<KeySchema> &schema();

// nullptr when `path` is not a key of the schema.
const KeySchema *findKey(const std::string &path);
// The keys directly inside the map at `parentPath` ("" = the top level), in table order.
std::vector<const KeySchema *> childrenOf(const std::string &parentPath);

// "an integer", "a list of integers", ...: for "expected <article+name> for ..." messages.
std::string describeType(KeyType type);
// "1 to 16384", ">= 0", ">= 0, < 1": a key's bounds as the reference and messages show them;
// "" when it has none.
std::string boundText(const KeySchema &key);
// "int", "list of int", ...: the short name used in the reference tables.
std::string typeName(KeyType type);

// Complete specs shown in the reference; the tests check that each one parses.
struct ExampleSpec {
  std::string title;
  std::string yaml;
};
const std::vector<ExampleSpec> &exampleSpecs();

} // namespace attn::yaml
