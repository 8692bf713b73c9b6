// The spec schema: one table listing every key a spec file may contain, each bound to its
// field of the Spec (whose initialiser is the key's default). The parser validates against it
// and builds the Spec through the bindings, the printer writes the Spec through them, and
// docs/yaml-reference.md is rendered from it: a key is added in one row (and its field).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace YAML {
class Emitter;
}

namespace attn::yaml {

struct Spec;

// A position in a spec file, 1-based (yaml-cpp's marks are 0-based).
struct Loc {
  std::string file;
  int line = 0;
  int col = 0;
};

// A YAML value kept as written, with where each part of it is: the value of a KeyType::Yaml
// key, whose family reads it (model.graph.nodes). The schema checks only that it is YAML;
// the family checks the rest, each problem at the part that causes it.
struct YamlTree {
  enum class Kind { Null, Scalar, Sequence, Map };
  Kind kind = Kind::Null;
  std::string scalar;                                 // Scalar
  bool quoted = false;                                // Scalar: written in quotes (a string)
  std::vector<YamlTree> items;                        // Sequence
  std::vector<std::pair<YamlTree, YamlTree>> entries; // Map: key (a scalar) and value, in order
  Loc loc;
};

enum class KeyType { String, Int, Float, Bool, IntList, Map, Yaml };

// A key's value, typed as its KeyType says (Int: int64_t, Float: double, Bool, String,
// IntList: a vector, Yaml: the tree).
using KeyValue = std::variant<int64_t, double, bool, std::string, std::vector<int64_t>, YamlTree>;

// Where a key lives in the Spec: the schema table binds every key to its field once, and the
// parser, the printer, the defaults and the reference all go through the binding.
struct KeyBinding {
  // Leaf keys: the field's value in `spec` (nullopt when its section is absent), and setting it.
  std::function<std::optional<KeyValue>(const Spec &spec)> get;
  std::function<void(Spec &spec, const KeyValue &value)> set;
  // Map keys: whether the section is in `spec` (optional ones: model.rnn, ...), and making it,
  // with where it was written (null for sections that are always there and locate nothing).
  std::function<bool(const Spec &spec)> present;
  std::function<void(Spec &spec, const Loc &loc)> open;
};

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
  KeyBinding bind;                  // its field in the Spec (see KeyBinding)
  bool plain = false;               // String: printed unquoted (enum-like values)

  std::string name() const;         // the last path component: "hidden"
  std::string parent() const;       // "model.rnn"; "" at the top level
};

// A plain scalar's value as every key reads it (quoted scalars are strings). Integers are
// strict: digits with an optional sign, nothing else ("16.0", "1e3", "0x10" are not);
// `tooLarge` tells a well-formed integer that does not fit in 64 bits from a non-integer.
std::optional<int64_t> parseInt(const std::string &text, bool *tooLarge = nullptr);
std::optional<double> parseFloat(const std::string &text);
std::optional<bool> parseBool(const std::string &text); // true / True / TRUE, false / ...

// Writes `tree` to `out` as it was written: block style, scalars quoted where they were.
void emitTree(YAML::Emitter &out, const YamlTree &tree);

// `value` as YAML text, as specs are printed: integers, floats in their shortest exact form
// (with a ".0" so they read back as floats), true / false, strings plain when `key.plain`
// (enum-like) and double-quoted otherwise, lists and trees in flow style.
std::string valueText(const KeySchema &key, const KeyValue &value);

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
