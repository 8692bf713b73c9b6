// Spec files: YAML text -> validated Spec. Validation walks the document against the schema
// table (Schema.cpp), collecting every problem as a Diagnostic instead of stopping at the first,
// and resolves each key to either the user's node or the schema's default; the Spec is then
// read from those resolved nodes, so defaults live only in the schema table.
#include "frontends/yaml/Schema.h"
#include "frontends/yaml/Spec.h"

#include "attn/File.h"
#include "attn/Utf8.h"

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <charconv>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <map>
#include <set>
#include <sstream>

namespace attn::yaml {

std::string Diagnostic::str() const {
  std::ostringstream out;
  out << loc.file;
  // A file that cannot be read has no position to show.
  if (loc.line > 0)
    out << ":" << loc.line << ":" << loc.col;
  out << ": error: " << message;
  if (!hint.empty())
    out << "\n  hint: " << hint;
  return out.str();
}

namespace {

// yaml-cpp marks are 0-based; nodes built in memory (by overrides) have none.
bool hasMark(const YAML::Node &node) { return node && !node.Mark().is_null(); }

Loc locFromMark(const std::string &file, const YAML::Mark &mark) {
  return {file, mark.line + 1, mark.column + 1};
}

std::string join(const std::string &parent, const std::string &name) {
  return parent.empty() ? name : parent + "." + name;
}

// Where a map is, in words: "at the top level" / "in 'model.rnn'".
std::string where(const std::string &path) {
  return path.empty() ? "at the top level" : "in '" + path + "'";
}

std::string quoteList(const std::vector<std::string> &items) {
  std::string out;
  for (const std::string &item : items)
    out += (out.empty() ? "'" : ", '") + item + "'";
  return out;
}

size_t editDistance(const std::string &a, const std::string &b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j)
    row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t substitute = diagonal + (a[i - 1] == b[j - 1] ? 0 : 1);
      diagonal = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, substitute});
    }
  }
  return row[b.size()];
}

// The closest candidate when it is close enough to be a plausible typo; "" otherwise.
std::string closest(const std::string &word, const std::vector<std::string> &candidates) {
  std::string best;
  size_t bestDistance = std::max<size_t>(2, word.size() / 3) + 1;
  for (const std::string &candidate : candidates) {
    size_t d = editDistance(word, candidate);
    if (d < bestDistance) {
      bestDistance = d;
      best = candidate;
    }
  }
  return best;
}

// Quoted scalars ("16") are strings in YAML; only plain ones may be numbers or booleans.
bool isPlainScalar(const YAML::Node &node) { return node.IsScalar() && node.Tag() == "?"; }

} // namespace

std::optional<int64_t> parseInt(const std::string &text, bool *tooLarge) {
  const char *begin = text.data() + (!text.empty() && text[0] == '+' ? 1 : 0);
  const char *end = text.data() + text.size();
  int64_t value = 0;
  auto [ptr, ec] = std::from_chars(begin, end, value);
  if (tooLarge)
    *tooLarge = ec == std::errc::result_out_of_range && ptr == end;
  if (ec != std::errc() || ptr != end || begin == end)
    return std::nullopt;
  return value;
}

std::optional<double> parseFloat(const std::string &text) {
  if (text.empty())
    return std::nullopt;
  char *end = nullptr;
  errno = 0;
  double value = std::strtod(text.c_str(), &end);
  if (errno != 0 || end != text.c_str() + text.size())
    return std::nullopt;
  return value;
}

std::optional<bool> parseBool(const std::string &text) {
  if (text == "true" || text == "True" || text == "TRUE")
    return true;
  if (text == "false" || text == "False" || text == "FALSE")
    return false;
  return std::nullopt;
}

namespace {

// What a wrong value looks like, for "expected X for 'k', got <this>".
std::string describeValue(const YAML::Node &node) {
  if (!node || node.IsNull())
    return "an empty value";
  if (node.IsSequence())
    return "a list";
  if (node.IsMap())
    return "a map";
  if (!isPlainScalar(node))
    return "the quoted string \"" + node.Scalar() + "\"";
  return "'" + node.Scalar() + "'";
}

// A `--set` override after it has been applied: diagnostics about anything at or under its
// path point at the command line rather than at the file.
struct OverrideSite {
  std::string path;
  std::string file; // "--set train.batch_size", or the -c layer file that set it
  std::optional<Loc> keyLoc; // a layer's: where its file wrote the key
  bool flag = false;         // a flag other than --set ("--precision bf16"): no positions

  bool covers(const std::string &p) const {
    return p == path || p.rfind(path + ".", 0) == 0 || p.rfind(path + "[", 0) == 0;
  }
  // The override created the (mark-less) intermediate map at `p`.
  bool isBelow(const std::string &p) const { return path.rfind(p + ".", 0) == 0; }
  Loc loc(const YAML::Node &node) const {
    // Marks of nodes parsed from the override's value are positions within that value.
    if (flag)
      return Loc{file, 0, 0};
    return hasMark(node) ? locFromMark(file, node.Mark()) : Loc{file, 1, 1};
  }
};

class Validator {
public:
  Validator(std::string file, std::vector<OverrideSite> overrides, std::vector<Diagnostic> &diags)
      : file_(std::move(file)), overrides_(std::move(overrides)), diags_(diags) {}

  void validateRoot(const YAML::Node &root) {
    Loc rootLoc{file_, 1, 1};
    if (!root || root.IsNull()) {
      error(rootLoc, "the spec is empty",
            "a spec is a map with the keys " + quoteList(keyNames(childrenOf(""))));
      return;
    }
    if (!root.IsMap()) {
      error(locate(root, "", rootLoc), "expected a map at the top level, got " + describeValue(root),
            "a spec is a map with the keys " + quoteList(keyNames(childrenOf(""))));
      return;
    }
    validateMap(root, "", locate(root, "", rootLoc), /*present=*/true);
  }

  // Accessors for building the Spec once validation passed, so every value parses.
  YAML::Node node(const std::string &path) const {
    auto it = resolved_.find(path);
    return it == resolved_.end() ? YAML::Node() : it->second;
  }
  bool has(const std::string &path) const { return present_.count(path) != 0; }
  int64_t intAt(const std::string &path) const { return *parseInt(node(path).Scalar()); }
  std::string stringAt(const std::string &path) const { return node(path).Scalar(); }
  double floatAt(const std::string &path) const { return *parseFloat(node(path).Scalar()); }
  bool boolAt(const std::string &path) const { return *parseBool(node(path).Scalar()); }
  std::vector<int64_t> intListAt(const std::string &path) const {
    std::vector<int64_t> values;
    for (const YAML::Node &item : node(path))
      values.push_back(*parseInt(item.Scalar()));
    return values;
  }
  // A Yaml key's value: as written, else its default (an empty map), at its section.
  YamlTree treeAt(const std::string &path) const {
    if (auto it = trees_.find(path); it != trees_.end())
      return it->second;
    YamlTree t;
    if (YAML::Node n = node(path); n && n.IsMap())
      t.kind = YamlTree::Kind::Map;
    t.loc = mapLocs_.count(path.substr(0, path.rfind('.')))
                ? mapLocs_.at(path.substr(0, path.rfind('.')))
                : Loc{file_, 1, 1};
    return t;
  }
  Loc mapLoc(const std::string &path) const { return mapLocs_.at(path); }
  // Whether the map at `path` was validated (a map inside an absent optional section is not).
  bool hasMap(const std::string &path) const { return mapLocs_.count(path) > 0; }
  const std::map<std::string, Loc> &keyLocs() const { return keyLocs_; }

private:
  void error(Loc loc, std::string message, std::string hint = "") {
    diags_.push_back({std::move(loc), std::move(message), std::move(hint)});
  }

  static std::vector<std::string> keyNames(const std::vector<const KeySchema *> &keys) {
    std::vector<std::string> names;
    for (const KeySchema *key : keys)
      names.push_back(key->name());
    return names;
  }

  const OverrideSite *overrideCovering(const std::string &path) const {
    // The latest override wins, as it did when the overrides were applied.
    for (auto it = overrides_.rbegin(); it != overrides_.rend(); ++it)
      if (it->covers(path))
        return &*it;
    return nullptr;
  }

  const OverrideSite *overrideBelow(const std::string &path) const {
    for (auto it = overrides_.rbegin(); it != overrides_.rend(); ++it)
      if (it->isBelow(path))
        return &*it;
    return nullptr;
  }

  // The location of `node` at `path`; `fallback` (the parent's) when it has none of its own.
  Loc locate(const YAML::Node &node, const std::string &path, const Loc &fallback) const {
    if (const OverrideSite *site = path.empty() ? nullptr : overrideCovering(path))
      return site->loc(node);
    if (hasMark(node))
      return locFromMark(file_, node.Mark());
    if (const OverrideSite *site = overrideBelow(path))
      return site->loc(YAML::Node());
    return fallback;
  }

  // `map` is the node at `path`; when `present` is false the section was left out, and only
  // its defaults are filled in (its required keys are required only when it is written).
  void validateMap(const YAML::Node &map, const std::string &path, const Loc &loc, bool present) {
    mapLocs_[path] = loc;
    std::vector<const KeySchema *> children = childrenOf(path);
    std::map<std::string, Loc> seen; // key -> where it was first written
    std::vector<std::pair<const KeySchema *, Loc>> exclusivePresent;

    if (present && map.IsMap()) {
      for (const auto &entry : map) {
        const YAML::Node &keyNode = entry.first;
        const YAML::Node &value = entry.second;
        if (!keyNode.IsScalar()) {
          error(locate(keyNode, path, loc),
                "expected a key name " + where(path) + ", got " + describeValue(keyNode));
          continue;
        }
        std::string name = keyNode.Scalar();
        std::string childPath = join(path, name);
        Loc keyLoc = locate(keyNode, childPath, loc);
        const OverrideSite *site = overrideCovering(childPath);
        if (site && site->path == childPath && site->keyLoc)
          keyLoc = *site->keyLoc; // the layer's key, not the base file's one it replaced
        if (auto [it, inserted] = seen.emplace(name, keyLoc); !inserted) {
          error(keyLoc, "duplicate key '" + name + "' " + where(path),
                "first written at line " + std::to_string(it->second.line) + ", column " +
                    std::to_string(it->second.col));
          continue;
        }
        const KeySchema *key = findKey(childPath);
        if (!key) {
          unknownKey(name, path, children, keyLoc);
          continue;
        }
        if (!key->oneOf.empty())
          exclusivePresent.push_back({key, keyLoc});
        present_.insert(childPath);
        // A key a --set replaced is the flag's, wherever the file had it (and one a layer
        // replaced is the layer's).
        keyLocs_[childPath] = site ? (site->keyLoc ? keyLoc : site->loc(YAML::Node())) : keyLoc;
        // An empty value's mark is wherever the parser stopped (often the next line): the key
        // is the better place to point at.
        checkValue(*key, value, value.IsNull() ? keyLoc : locate(value, childPath, keyLoc));
      }
    }

    for (const KeySchema *key : children) {
      if (present_.count(key->path))
        continue;
      if (key->required && present) {
        missingKey(*key, loc);
        continue;
      }
      // An absent optional section still provides its defaults; an absent alternative
      // (model.mlp when model.rnn is used) provides nothing.
      if (key->type == KeyType::Map && key->oneOf.empty())
        validateMap(YAML::Node(), key->path, loc, /*present=*/false);
      else if (!key->defaultValue.empty())
        resolved_[key->path] = YAML::Load(key->defaultValue);
    }

    if (present)
      checkExclusive(path, children, exclusivePresent, loc);
  }

  void unknownKey(const std::string &name, const std::string &path,
                  const std::vector<const KeySchema *> &children, const Loc &loc) {
    std::vector<std::string> allowed = keyNames(children);
    std::string suggestion = closest(name, allowed);
    std::string hint = suggestion.empty() ? "allowed keys " + where(path) + ": " + quoteList(allowed)
                                          : "did you mean '" + suggestion + "'?";
    error(loc, "unknown key '" + name + "' " + where(path), hint);
  }

  void missingKey(const KeySchema &key, const Loc &parentLoc) {
    std::string hint = "'" + key.path + "': " + key.doc;
    if (!key.allowed.empty())
      hint += " One of: " + quoteList(key.allowed) + ".";
    error(parentLoc, "missing required key '" + key.name() + "' " + where(key.parent()), hint);
  }

  // Exactly one of the keys sharing a oneOf tag (model.mlp / model.rnn) must be present.
  void checkExclusive(const std::string &path, const std::vector<const KeySchema *> &children,
                      const std::vector<std::pair<const KeySchema *, Loc>> &presentKeys,
                      const Loc &mapLoc) {
    std::vector<std::string> groups;
    for (const KeySchema *key : children)
      if (!key->oneOf.empty() && std::find(groups.begin(), groups.end(), key->oneOf) == groups.end())
        groups.push_back(key->oneOf);
    for (const std::string &group : groups) {
      std::vector<std::string> names;
      for (const KeySchema *key : children)
        if (key->oneOf == group)
          names.push_back(key->name());
      std::vector<std::pair<const KeySchema *, Loc>> found;
      for (const auto &entry : presentKeys)
        if (entry.first->oneOf == group)
          found.push_back(entry);
      std::string choices = "exactly one of " + quoteList(names);
      if (found.empty())
        error(mapLoc, "'" + path + "' needs " + choices, "add one of " + quoteList(names));
      else if (found.size() > 1)
        error(found[1].second,
              "'" + path + "' takes " + choices + ", got both '" + found[0].first->name() +
                  "' and '" + found[1].first->name() + "'",
              "keep one and remove the others");
    }
  }

  void wrongType(const KeySchema &key, const std::string &path, const YAML::Node &value,
                 const Loc &loc) {
    std::string hint;
    if (value.IsScalar() && !isPlainScalar(value) && key.type != KeyType::String)
      hint = "quoted values are strings; remove the quotes";
    error(loc, "expected " + describeType(key.type) + " for '" + path + "', got " +
                   describeValue(value),
          hint);
  }

  void checkRange(const KeySchema &key, const std::string &path, double value,
                  const std::string &text, const Loc &loc) {
    bool low = key.min && value < static_cast<double>(*key.min);
    bool high = key.max && (key.maxExclusive ? value >= *key.max : value > *key.max);
    if (!low && !high)
      return;
    auto num = [](double v) {
      std::ostringstream os;
      os << std::setprecision(12) << v;
      return os.str();
    };
    if (low)
      error(loc, "'" + path + "' must be >= " + std::to_string(*key.min) + ", got " + text);
    else
      error(loc, "'" + path + "' must be " + (key.maxExclusive ? "< " : "<= ") + num(*key.max) +
                     ", got " + text,
            key.maxExclusive ? "" : "attnc bounds every size, so that a typo cannot exhaust "
                                    "the machine's memory");
  }

  // Checks one integer (a scalar key, or an item of a list); false when it is not one.
  bool checkInt(const KeySchema &key, const std::string &path, const YAML::Node &value,
                const Loc &loc) {
    bool tooLarge = false;
    std::optional<int64_t> number =
        isPlainScalar(value) ? parseInt(value.Scalar(), &tooLarge) : std::nullopt;
    if (tooLarge) {
      error(loc, "'" + path + "' is too large, got " + value.Scalar());
      return false;
    }
    if (!number) {
      KeySchema itemKey = key;
      itemKey.type = KeyType::Int;
      wrongType(itemKey, path, value, loc);
      return false;
    }
    checkRange(key, path, static_cast<double>(*number), value.Scalar(), loc);
    return true;
  }

  void checkValue(const KeySchema &key, const YAML::Node &value, const Loc &loc) {
    const std::string &path = key.path;
    resolved_[path] = value;
    switch (key.type) {
    case KeyType::Map:
      if (value.IsNull())
        validateMap(YAML::Node(YAML::NodeType::Map), path, loc, /*present=*/true);
      else if (value.IsMap())
        validateMap(value, path, loc, /*present=*/true);
      else
        wrongType(key, path, value, loc);
      return;
    case KeyType::String:
      if (!value.IsScalar())
        wrongType(key, path, value, loc);
      else if (size_t bad = invalidUtf8(value.Scalar()); bad != std::string::npos)
        error(loc, "'" + path + "' is not valid UTF-8 text (byte " + std::to_string(bad + 1) +
                       " of the value)",
              "save the file as UTF-8");
      else if (key.fileName)
        checkFileName(path, value.Scalar(), loc);
      else
        checkEnum(key, value.Scalar(), loc);
      return;
    case KeyType::Int:
      checkInt(key, path, value, loc);
      return;
    case KeyType::Float: {
      std::optional<double> number =
          isPlainScalar(value) ? parseFloat(value.Scalar()) : std::nullopt;
      if (!number)
        wrongType(key, path, value, loc);
      else if (!std::isfinite(*number)) // NaN passed every bound, and inf most
        error(loc, "'" + path + "' must be a finite number, got " + value.Scalar());
      else
        checkRange(key, path, *number, value.Scalar(), loc);
      return;
    }
    case KeyType::Bool:
      if (!isPlainScalar(value) || !parseBool(value.Scalar()))
        wrongType(key, path, value, loc);
      return;
    case KeyType::IntList:
      checkIntList(key, value, loc);
      return;
    case KeyType::Yaml: {
      size_t budget = kMaxTreeNodes;
      trees_[path] = tree(value, path, loc, 0, budget);
      return;
    }
    }
  }

  // A Yaml key's value, each part located; the family that reads it checks the rest. Bounded
  // in depth and size: an alias may refer to its own anchor (yaml-cpp then builds a cycle)
  // or nest copies of copies.
  static constexpr int kMaxTreeDepth = 32;
  static constexpr size_t kMaxTreeNodes = 100000;
  YamlTree tree(const YAML::Node &node, const std::string &path, const Loc &fallback, int depth,
                size_t &budget) {
    YamlTree t;
    // (An empty value's mark is where the parser stopped: the key is the better place.)
    t.loc = hasMark(node) && !node.IsNull() ? locate(node, path, fallback) : fallback;
    if (depth > kMaxTreeDepth || budget == 0) {
      if (budget != 0) // once per key
        error(t.loc,
              "'" + path + "' nests deeper than " + std::to_string(kMaxTreeDepth) +
                  " levels or holds more than " + std::to_string(kMaxTreeNodes) + " values",
              "an alias (*name) may not refer to the map or list that holds it");
      budget = 0;
      return t;
    }
    --budget;
    switch (node.Type()) {
    case YAML::NodeType::Scalar:
      t.kind = YamlTree::Kind::Scalar;
      t.scalar = node.Scalar();
      t.quoted = !isPlainScalar(node);
      if (size_t bad = invalidUtf8(t.scalar); bad != std::string::npos)
        error(t.loc,
              "'" + path + "' holds text that is not valid UTF-8 (byte " + std::to_string(bad + 1) +
                  " of the value)",
              "save the file as UTF-8");
      break;
    case YAML::NodeType::Sequence:
      t.kind = YamlTree::Kind::Sequence;
      for (const YAML::Node &item : node)
        t.items.push_back(tree(item, path, t.loc, depth + 1, budget));
      break;
    case YAML::NodeType::Map: {
      t.kind = YamlTree::Kind::Map;
      std::map<std::string, Loc> seen;
      for (const auto &entry : node) {
        YamlTree key = tree(entry.first, path, t.loc, depth + 1, budget);
        if (key.kind == YamlTree::Kind::Scalar) {
          if (auto [it, fresh] = seen.emplace(key.scalar, key.loc); !fresh)
            error(key.loc, "duplicate key '" + key.scalar + "' in '" + path + "'",
                  "first written at line " + std::to_string(it->second.line) + ", column " +
                      std::to_string(it->second.col));
        } else {
          error(key.loc,
                "expected a key name in '" + path + "', got " + describeValue(entry.first));
        }
        t.entries.push_back({key, tree(entry.second, path, t.loc, depth + 1, budget)});
      }
      break;
    }
    default:
      break;
    }
    return t;
  }

  // The model's name becomes a directory (runs/<name>) and part of C symbols: "../../x" wrote
  // outside the run directory and "" into runs/ itself.
  void checkFileName(const std::string &path, const std::string &text, const Loc &loc) {
    auto ok = [](unsigned char c) { return std::isalnum(c) || c == '.' || c == '_' || c == '-'; };
    if (text.empty() || !std::isalnum((unsigned char)text[0]) || text.size() > 128 ||
        !std::all_of(text.begin(), text.end(), ok))
      error(loc, "'" + path + "' must be a name of letters, digits, '.', '_' and '-' starting "
                     "with a letter or digit (at most 128 characters), got '" + text + "'",
            "it names the run directory runs/<name>; e.g. dates-bahdanau");
  }

  void checkEnum(const KeySchema &key, const std::string &text, const Loc &loc) {
    if (key.allowed.empty() ||
        std::find(key.allowed.begin(), key.allowed.end(), text) != key.allowed.end())
      return;
    std::string suggestion = closest(text, key.allowed);
    std::string hint = "allowed values: " + quoteList(key.allowed);
    if (!suggestion.empty())
      hint = "did you mean '" + suggestion + "'? " + hint;
    error(loc, "'" + key.path + "' must be one of " + quoteList(key.allowed) + ", got '" + text + "'",
          hint);
  }

  void checkIntList(const KeySchema &key, const YAML::Node &value, const Loc &loc) {
    if (!value.IsSequence()) {
      wrongType(key, key.path, value, loc);
      return;
    }
    if (static_cast<int64_t>(value.size()) < key.minItems) {
      error(loc, "'" + key.path + "' needs at least " + std::to_string(key.minItems) +
                     (key.minItems == 1 ? " item" : " items") + ", got " +
                     std::to_string(value.size()),
            "'" + key.path + "': " + key.doc);
      return;
    }
    if (key.maxItems > 0 && static_cast<int64_t>(value.size()) > key.maxItems) {
      error(loc, "'" + key.path + "' takes at most " + std::to_string(key.maxItems) +
                     " items, got " + std::to_string(value.size()),
            "attnc bounds the layer count: compile time grows with it");
      return;
    }
    for (size_t i = 0; i < value.size(); ++i) {
      std::string itemPath = key.path + "[" + std::to_string(i) + "]";
      checkInt(key, itemPath, value[i], locate(value[i], itemPath, loc));
    }
  }

  std::string file_;
  std::vector<OverrideSite> overrides_;
  std::vector<Diagnostic> &diags_;
  std::set<std::string> present_;              // keys written (in the file or by --set)
  std::map<std::string, Loc> keyLocs_;         // where each of them is written
  std::map<std::string, YAML::Node> resolved_; // key -> the user's node or its default
  std::map<std::string, Loc> mapLocs_;         // section -> where it is (or its parent)
  std::map<std::string, YamlTree> trees_;      // Yaml keys written -> their values
};

// The Spec from the validated values, through each key's binding to its field (Schema.cpp):
// sections first (the table lists parents before children), then every value, defaults
// included. Keys neither written nor defaulted (an absent exclusive key) keep the field's
// initialiser.
Spec buildSpec(const Validator &v, const std::string &file) {
  Spec spec;
  spec.file = file;
  spec.keyLocs = v.keyLocs();
  for (const KeySchema &key : schema()) {
    if (key.type == KeyType::Map) {
      bool optional = bool(key.bind.present);
      if (key.bind.open && (!optional || v.has(key.path)) && v.hasMap(key.path))
        key.bind.open(spec, v.mapLoc(key.path));
      continue;
    }
    YAML::Node node = v.node(key.path);
    if (key.type == KeyType::Yaml && v.has(key.path)) {
      key.bind.set(spec, v.treeAt(key.path)); // even empty: its family says what is missing
      continue;
    }
    if (!node || node.IsNull())
      continue;
    switch (key.type) {
    case KeyType::Int:
      key.bind.set(spec, v.intAt(key.path));
      break;
    case KeyType::Float:
      key.bind.set(spec, v.floatAt(key.path));
      break;
    case KeyType::Bool:
      key.bind.set(spec, v.boolAt(key.path));
      break;
    case KeyType::String:
      key.bind.set(spec, v.stringAt(key.path));
      break;
    case KeyType::IntList:
      key.bind.set(spec, v.intListAt(key.path));
      break;
    case KeyType::Yaml:
      key.bind.set(spec, v.treeAt(key.path));
      break;
    case KeyType::Map:
      break;
    }
  }
  return spec;
}

// Counts the documents of a YAML stream from yaml-cpp's parser events, and notices when the
// parser stops advancing: yaml-cpp 0.7.0 cannot consume some stray tokens (a top-level ',',
// say) and then reports the same empty document at the same place forever (upstream
// jbeder/yaml-cpp issue 1040), which made YAML::LoadAll grow without bound.
class DocumentCounter : public YAML::EventHandler {
public:
  int documents = 0;
  YAML::Mark start;   // where the last document began
  YAML::Mark root;    // where its first node is
  bool stuck = false; // the last document began where the one before it did

  void OnDocumentStart(const YAML::Mark &mark) override {
    stuck = documents > 0 && mark.pos == start.pos;
    ++documents;
    start = mark;
    first = true;
  }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark &mark, YAML::anchor_t) override { node(mark); }
  void OnAlias(const YAML::Mark &mark, YAML::anchor_t) override { node(mark); }
  void OnScalar(const YAML::Mark &mark, const std::string &, YAML::anchor_t,
                const std::string &) override {
    node(mark);
  }
  void OnSequenceStart(const YAML::Mark &mark, const std::string &, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {
    node(mark);
  }
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark &mark, const std::string &, YAML::anchor_t,
                  YAML::EmitterStyle::value) override {
    node(mark);
  }
  void OnMapEnd() override {}

private:
  void node(const YAML::Mark &mark) {
    if (first)
      root = mark;
    first = false;
  }
  bool first = false;
};

// Parses YAML text holding at most one document; otherwise reports the problem (located in
// `file`) and returns nullopt.
std::optional<YAML::Node> loadYaml(const std::string &text, const std::string &file,
                                   std::vector<Diagnostic> &diags) {
  try {
    // Count the documents first: YAML::Load alone would silently ignore everything after a
    // second `---`. Every document that is not empty advances the parser, so this ends.
    std::istringstream stream(text);
    YAML::Parser parser(stream);
    DocumentCounter counter;
    YAML::Mark second;
    while (parser.HandleNextDocument(counter)) {
      if (counter.documents == 2)
        second = counter.root;
      if (counter.stuck) {
        const YAML::Mark &mark = counter.start;
        char c = mark.pos >= 0 && (size_t)mark.pos < text.size() ? text[mark.pos] : ' ';
        diags.push_back({locFromMark(file, mark),
                         std::string("invalid YAML: unexpected '") + c + "'",
                         c == ',' ? "a ',' separates items only inside [ ] or { }; quote "
                                    "the value if the comma belongs to it"
                                  : "quote the value if the character belongs to it"});
        return std::nullopt;
      }
    }
    if (counter.documents > 1) {
      diags.push_back({locFromMark(file, second),
                       "expected one YAML document, found " + std::to_string(counter.documents),
                       "a spec is a single document; remove the extra '---' sections"});
      return std::nullopt;
    }
    return YAML::Load(text);
  } catch (const YAML::Exception &e) {
    Loc loc = e.mark.is_null() ? Loc{file, 1, 1} : locFromMark(file, e.mark);
    diags.push_back({loc, "invalid YAML: " + e.msg, ""});
  } catch (const std::exception &e) {
    diags.push_back({Loc{file, 1, 1}, std::string("invalid YAML: ") + e.what(), ""});
  }
  return std::nullopt;
}

std::vector<std::string> splitPath(const std::string &path) {
  std::vector<std::string> parts;
  std::string::size_type start = 0;
  while (true) {
    auto dot = path.find('.', start);
    parts.push_back(path.substr(start, dot == std::string::npos ? std::string::npos : dot - start));
    if (dot == std::string::npos)
      return parts;
    start = dot + 1;
  }
}

// Sets `path` in `root` to `value`, creating missing intermediate maps. Whether the key exists
// in the schema is left to validation, which then reports it (with a "did you mean") at the
// override's location like any other key.
bool setPath(YAML::Node &root, const std::string &path, const YAML::Node &value, const Loc &loc,
             std::vector<Diagnostic> &diags) {
  std::vector<std::string> parts = splitPath(path);
  if (!root || root.IsNull())
    root = YAML::Node(YAML::NodeType::Map);
  if (!root.IsMap()) // reported by validation of the document itself
    return false;
  YAML::Node current = root;
  std::string walked;
  for (size_t i = 0; i + 1 < parts.size(); ++i) {
    walked = join(walked, parts[i]);
    // reset() rebinds `current`; plain assignment would overwrite the node it refers to.
    YAML::Node child = current[parts[i]];
    if (!child.IsDefined() || child.IsNull())
      child = YAML::Node(YAML::NodeType::Map);
    if (!child.IsMap()) {
      diags.push_back({loc, "cannot set '" + path + "': '" + walked + "' is not a map",
                       "override '" + walked + "' itself instead"});
      return false;
    }
    current.reset(child);
  }
  current[parts.back()] = value;
  return true;
}

// A `--set path=value` override: the value parsed as YAML, then set.
bool applyOverride(YAML::Node &root, const Override &override, const std::string &site,
                   std::vector<Diagnostic> &diags) {
  Loc loc{site, 1, 1};
  std::vector<std::string> parts = splitPath(override.path);
  if (std::any_of(parts.begin(), parts.end(), [](const std::string &p) { return p.empty(); })) {
    diags.push_back({loc, "invalid override key '" + override.path + "'",
                     "write --set <dotted.key>=<value>, e.g. --set train.batch_size=64"});
    return false;
  }
  std::optional<YAML::Node> value = loadYaml(override.value, site, diags);
  if (!value)
    return false;
  return setPath(root, override.path, *value, loc, diags);
}

// One key a `-c` layer file sets: maps merge into the layers below them key by key, any other
// value (a scalar, a list, a map over a non-map) replaces what is below.
struct LayerKey {
  std::string path;
  YAML::Node value;
  Loc keyLoc; // in the layer's file
  std::string file;
};

void flattenLayer(const YAML::Node &below, const YAML::Node &layer, const std::string &prefix,
                  const std::string &file, std::vector<LayerKey> &out,
                  std::vector<Diagnostic> &diags) {
  std::map<std::string, Loc> seen; // key -> where the layer first wrote it
  for (const auto &entry : layer) {
    const YAML::Node &keyNode = entry.first;
    Loc keyLoc = hasMark(keyNode) ? locFromMark(file, keyNode.Mark()) : Loc{file, 1, 1};
    if (!keyNode.IsScalar()) {
      diags.push_back({keyLoc, "expected a key name, got " + describeValue(keyNode), ""});
      continue;
    }
    if (auto [it, inserted] = seen.emplace(keyNode.Scalar(), keyLoc); !inserted) {
      diags.push_back({keyLoc, "duplicate key '" + keyNode.Scalar() + "' " + where(prefix),
                       "first written at line " + std::to_string(it->second.line) +
                           ", column " + std::to_string(it->second.col)});
      continue;
    }
    std::string path = join(prefix, keyNode.Scalar());
    // What the layers below hold at `path`, found by walking them: a lookup of a missing key
    // gives yaml-cpp's invalid node, which throws when asked anything.
    YAML::Node under;
    if (below.IsMap())
      for (const auto &b : below)
        if (b.first.IsScalar() && b.first.Scalar() == keyNode.Scalar())
          under.reset(b.second);
    // Maps merge down to the schema's leaves; a Yaml key's value (model.graph.params) is
    // one value, replaced whole: its names may hold dots, which paths cannot.
    const KeySchema *key = findKey(path);
    if (entry.second.IsMap() && under.IsMap() && !(key && key->type == KeyType::Yaml)) {
      flattenLayer(under, entry.second, path, file, out, diags);
      continue;
    }
    out.push_back({path, entry.second, keyLoc, file});
  }
}

// A `-c` layer file, parsed.
struct LayerDoc {
  std::string file;
  YAML::Node root;
};

std::optional<Spec> parse(YAML::Node root, const std::string &file,
                          const std::vector<LayerDoc> &layers,
                          const std::vector<Override> &overrides, std::vector<Diagnostic> &diags) {
  size_t before = diags.size();
  std::vector<OverrideSite> sites;
  // Each layer merges into the spec as the layers below it left it; later layers and then
  // the --set flags win.
  for (const LayerDoc &layer : layers) {
    if (!layer.root || layer.root.IsNull())
      continue; // an empty layer changes nothing
    if (!layer.root.IsMap()) {
      diags.push_back({hasMark(layer.root) ? locFromMark(layer.file, layer.root.Mark())
                                           : Loc{layer.file, 1, 1},
                       "expected a map of spec keys at the top level of a layer, got " +
                           describeValue(layer.root),
                       "a -c layer holds the keys it changes, e.g. train: {batch_size: 8}"});
      continue;
    }
    std::vector<LayerKey> keys;
    flattenLayer(root, layer.root, "", layer.file, keys, diags);
    for (const LayerKey &key : keys)
      if (setPath(root, key.path, key.value, key.keyLoc, diags))
        sites.push_back({key.path, key.file, key.keyLoc});
  }
  for (const Override &override : overrides) {
    std::string site = override.flag.empty() ? "--set " + override.path : override.flag;
    if (applyOverride(root, override, site, diags))
      sites.push_back({override.path, site, std::nullopt, !override.flag.empty()});
  }
  Validator validator(file, sites, diags);
  validator.validateRoot(root);
  if (diags.size() != before)
    return std::nullopt;
  return buildSpec(validator, file);
}

std::optional<Spec> parseText(const std::string &text, const std::string &file,
                              const std::vector<Override> &overrides,
                              std::vector<Diagnostic> &diags,
                              const std::vector<LayerDoc> &layers = {}) {
  std::optional<YAML::Node> root = loadYaml(text, file, diags);
  if (!root)
    return std::nullopt;
  // Nothing above throws by design; this keeps a yaml-cpp surprise from escaping the API.
  try {
    return parse(*root, file, layers, overrides, diags);
  } catch (const std::exception &e) {
    diags.push_back({Loc{file, 1, 1}, std::string("internal error while reading the spec: ") +
                                          e.what(),
                     ""});
    return std::nullopt;
  }
}

} // namespace

std::optional<Spec> parseSpecString(const std::string &text, const std::string &file,
                                    std::vector<Diagnostic> &diags) {
  return parseText(text, file, {}, diags);
}

std::optional<Spec> parseSpecString(const std::string &text, const std::string &file,
                                    const std::vector<Override> &overrides,
                                    std::vector<Diagnostic> &diags) {
  return parseText(text, file, overrides, diags);
}

std::optional<Spec> parseSpecFiles(const std::vector<std::string> &files,
                                   const std::vector<Override> &overrides,
                                   std::vector<Diagnostic> &diags) {
  if (files.empty()) {
    diags.push_back({Loc{"attnc", 0, 0}, "no spec file given", ""});
    return std::nullopt;
  }
  std::vector<std::string> texts;
  for (const std::string &path : files) {
    try {
      texts.push_back(readRegularFile(path, kMaxSpecBytes, "spec file"));
    } catch (const FileError &e) {
      diags.push_back({Loc{path, 0, 0}, e.why, ""});
    }
  }
  if (texts.size() != files.size())
    return std::nullopt;
  std::vector<LayerDoc> layers;
  for (size_t i = 1; i < files.size(); ++i) {
    std::optional<YAML::Node> root = loadYaml(texts[i], files[i], diags);
    if (!root)
      return std::nullopt;
    layers.push_back({files[i], *root});
  }
  std::optional<Spec> spec = parseText(texts[0], files[0], overrides, diags, layers);
  if (spec) {
    // Data files (and a module of attn IR) named in a spec are found beside the file that
    // names them (the base or a layer), wherever attnc runs from; a path given with --set is the
    // command line's, relative to the current directory. Either way the spec keeps them absolute,
    // so the copy a checkpoint carries works from anywhere.
    namespace fs = std::filesystem;
    auto dirOf = [](const std::string &file) {
      return fs::absolute(fs::path(file)).parent_path();
    };
    for (const auto &entry : {std::pair{"data.path", &spec->data.path},
                              std::pair{"data.valid_path", &spec->data.validPath},
                              std::pair{"data.spm_model", &spec->data.spmModel},
                              std::pair{"model.mlir", &spec->model.mlir}}) {
      std::string key = entry.first, &value = *entry.second;
      if (value.empty() || fs::path(value).is_absolute())
        continue;
      spec->writtenPaths[key] = value;
      bool fromCommandLine = std::any_of(overrides.begin(), overrides.end(),
                                         [&](const Override &o) { return o.path == key; });
      fs::path dir = dirOf(files[0]);
      auto where = spec->keyLocs.find(key);
      if (where != spec->keyLocs.end())
        for (size_t i = 1; i < files.size(); ++i)
          if (where->second.file == files[i])
            dir = dirOf(files[i]);
      value = (fromCommandLine ? fs::absolute(value) : dir / value).lexically_normal().string();
    }
  }
  return spec;
}

std::optional<Spec> parseSpecFile(const std::string &path, const std::vector<Override> &overrides,
                                  std::vector<Diagnostic> &diags) {
  return parseSpecFiles({path}, overrides, diags);
}

std::optional<Spec> parseSpecFile(const std::string &path, std::vector<Diagnostic> &diags) {
  return parseSpecFile(path, {}, diags);
}

} // namespace attn::yaml
