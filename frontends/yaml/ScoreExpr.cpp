// Parsing and building the expressions of model.transformer.attention (see ScoreExpr.h).
#include "frontends/yaml/ScoreExpr.h"

#include "dialect/AttnOps.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>

namespace attn::yaml::expr {
namespace {

std::string typeName(Type t) { return t == Type::Bool ? "a condition" : "a number"; }

// The functions an expression may call: their argument types and result.
struct Function {
  std::vector<Type> args;
  Type result;
};
const std::map<std::string, Function> &functions() {
  static const std::map<std::string, Function> table = {
      {"abs", {{Type::Number}, Type::Number}},
      {"exp", {{Type::Number}, Type::Number}},
      {"log", {{Type::Number}, Type::Number}},
      {"sqrt", {{Type::Number}, Type::Number}},
      {"tanh", {{Type::Number}, Type::Number}},
      {"sigmoid", {{Type::Number}, Type::Number}},
      {"min", {{Type::Number, Type::Number}, Type::Number}},
      {"max", {{Type::Number, Type::Number}, Type::Number}},
      {"where", {{Type::Bool, Type::Number, Type::Number}, Type::Number}},
  };
  return table;
}

// Recursive descent over the grammar of ScoreExpr.h; the first error stops it (by exception,
// caught in parse(), so that no half-built tree escapes).
class Parser {
public:
  Parser(const std::string &text, const std::vector<std::string> &names,
         const std::vector<std::string> &perHead, const std::map<std::string, int64_t> &tables)
      : text(text), names(names), perHead(perHead), tables(tables) {}

  std::unique_ptr<Node> whole(Type want) {
    // A bounded text bounds the tree, which build() and the destructors walk recursively
    // (a chain 1 + 1 + ... nests one level per operator).
    if (text.size() > kMaxLength)
      fail(kMaxLength + 1,
           "the expression is longer than " + std::to_string(kMaxLength) + " characters");
    skip();
    if (pos == text.size())
      fail(1, "the expression is empty");
    auto node = orExpr();
    skip();
    if (pos < text.size())
      fail(pos + 1,
           "unexpected '" + text.substr(pos, tokenLength()) + "' after a complete expression");
    expect(*node, want, "the expression");
    return node;
  }

  struct Failure {
    Error error;
  };

private:
  [[noreturn]] void fail(size_t column, std::string message) {
    throw Failure{Error{column, std::move(message)}};
  }

  void skip() {
    while (pos < text.size() && std::isspace((unsigned char)text[pos]))
      ++pos;
  }
  static bool wordChar(char c) { return std::isalnum((unsigned char)c) || c == '_'; }
  size_t tokenLength() const {
    size_t n = 0;
    if (wordChar(text[pos]))
      while (pos + n < text.size() && wordChar(text[pos + n]))
        ++n;
    return std::max<size_t>(n, 1);
  }
  // Consumes `token` (a word must end there: "and" is not the start of "andrew").
  bool accept(const std::string &token) {
    skip();
    if (text.compare(pos, token.size(), token) != 0)
      return false;
    size_t end = pos + token.size();
    if (wordChar(token.back()) && end < text.size() && wordChar(text[end]))
      return false;
    pos = end;
    return true;
  }

  void expect(const Node &node, Type want, const std::string &what) {
    if (node.type != want)
      fail(node.column, what + " must be " + typeName(want) + ", got " + typeName(node.type) +
                            (want == Type::Number ? " (a comparison, and, or, not)" : ""));
  }

  std::unique_ptr<Node> make(Node::Kind kind, Type type, std::string op, size_t column) {
    auto n = std::make_unique<Node>();
    n->kind = kind;
    n->type = type;
    n->op = std::move(op);
    n->column = column;
    return n;
  }
  std::unique_ptr<Node> binary(std::string op, Type type, std::unique_ptr<Node> lhs,
                               std::unique_ptr<Node> rhs) {
    auto n = make(Node::Kind::Binary, type, std::move(op), lhs->column);
    n->args.push_back(std::move(lhs));
    n->args.push_back(std::move(rhs));
    return n;
  }

  // Nesting (parentheses, arguments, prefix operators) is bounded, so that no text can take
  // the parser's recursion past the stack.
  static constexpr int kMaxDepth = 200;
  static constexpr size_t kMaxLength = 4096;
  struct Nested {
    Parser &p;
    explicit Nested(Parser &p) : p(p) {
      if (++p.depth > kMaxDepth)
        p.fail(p.pos + 1, "the expression nests deeper than " + std::to_string(kMaxDepth));
    }
    ~Nested() { --p.depth; }
  };

  std::unique_ptr<Node> orExpr() {
    Nested nested(*this);
    return conditions("or", &Parser::andExpr);
  }
  std::unique_ptr<Node> andExpr() { return conditions("and", &Parser::notExpr); }
  // operand (op operand)*, every operand a condition: `or` over `and`, `and` over `not`.
  std::unique_ptr<Node> conditions(const std::string &op,
                                   std::unique_ptr<Node> (Parser::*operand)()) {
    auto lhs = (this->*operand)();
    while (true) {
      size_t at = (skip(), pos + 1);
      if (!accept(op))
        return lhs;
      auto rhs = (this->*operand)();
      std::string where = "'" + op + "' (column " + std::to_string(at) + ")";
      expect(*lhs, Type::Bool, "the left side of " + where);
      expect(*rhs, Type::Bool, "the right side of " + where);
      lhs = binary(op, Type::Bool, std::move(lhs), std::move(rhs));
    }
  }
  std::unique_ptr<Node> notExpr() {
    size_t at = (skip(), pos + 1);
    if (!accept("not"))
      return compare();
    Nested nested(*this);
    auto arg = notExpr();
    expect(*arg, Type::Bool, "the operand of 'not'");
    auto n = make(Node::Kind::Unary, Type::Bool, "not", at);
    n->args.push_back(std::move(arg));
    return n;
  }
  std::unique_ptr<Node> compare() {
    auto lhs = sum();
    skip();
    size_t at = pos + 1;
    for (const char *op : {"<=", ">=", "==", "!=", "<", ">"}) {
      if (!accept(op))
        continue;
      auto rhs = sum();
      expect(*lhs, Type::Number, std::string("the left side of '") + op + "'");
      expect(*rhs, Type::Number, std::string("the right side of '") + op + "'");
      skip();
      for (const char *again : {"<", ">", "=", "!"})
        if (text.compare(pos, 1, again) == 0)
          fail(pos + 1, "comparisons do not chain (column " + std::to_string(at) +
                            " compares already): join them with 'and'");
      return binary(op, Type::Bool, std::move(lhs), std::move(rhs));
    }
    return lhs;
  }
  std::unique_ptr<Node> sum() {
    auto lhs = product();
    while (true) {
      std::string op = accept("+") ? "+" : accept("-") ? "-" : "";
      if (op.empty())
        return lhs;
      auto rhs = product();
      expect(*lhs, Type::Number, "the left side of '" + op + "'");
      expect(*rhs, Type::Number, "the right side of '" + op + "'");
      lhs = binary(op, Type::Number, std::move(lhs), std::move(rhs));
    }
  }
  std::unique_ptr<Node> product() {
    auto lhs = unary();
    while (true) {
      std::string op = accept("*") ? "*" : accept("/") ? "/" : "";
      if (op.empty())
        return lhs;
      if (op == "*" && text.compare(pos, 1, "*") == 0)
        fail(pos, "'**' is not an operator here: write x * x, or exp(y * log(x))");
      size_t divisorAt = (skip(), pos + 1);
      auto rhs = unary();
      // The scores would all be infinite or NaN at the first step, far from the cause.
      if (op == "/" && rhs->kind == Node::Kind::Number && rhs->number == 0)
        fail(divisorAt, "division by zero");
      expect(*lhs, Type::Number, "the left side of '" + op + "'");
      expect(*rhs, Type::Number, "the right side of '" + op + "'");
      lhs = binary(op, Type::Number, std::move(lhs), std::move(rhs));
    }
  }
  std::unique_ptr<Node> unary() {
    size_t at = (skip(), pos + 1);
    if (!accept("-"))
      return primary();
    Nested nested(*this);
    auto arg = unary();
    expect(*arg, Type::Number, "the operand of '-'");
    auto n = make(Node::Kind::Unary, Type::Number, "-", at);
    n->args.push_back(std::move(arg));
    return n;
  }
  std::unique_ptr<Node> primary() {
    skip();
    size_t at = pos + 1;
    if (pos == text.size())
      fail(at, "the expression ends where a value should follow");
    char c = text[pos];
    if (accept("(")) {
      auto inner = orExpr();
      if (!accept(")"))
        fail(pos + 1, "expected ')' to close the '(' at column " + std::to_string(at));
      return inner;
    }
    if (std::isdigit((unsigned char)c) || c == '.') {
      const char *start = text.c_str() + pos;
      char *end = nullptr;
      double value = std::strtod(start, &end);
      if (end == start || (end < text.c_str() + text.size() && wordChar(*end)))
        fail(at,
             "'" + text.substr(pos, std::max<size_t>(end - start, 1) + 1) + "' is not a number");
      // Scores are f32: a literal beyond its range is infinite there (1e39, 1e400).
      if (!std::isfinite((float)value))
        fail(at, "the number " + text.substr(pos, end - start) +
                     " is beyond f32's range (about 3.4e38): scores are f32");
      pos += end - start;
      auto n = make(Node::Kind::Number, Type::Number, "", at);
      n->number = value;
      return n;
    }
    if (!wordChar(c))
      fail(at, std::string("unexpected '") + c + "' where a value should be");
    std::string word = text.substr(pos, tokenLength());
    pos += word.size();
    if (accept("("))
      return call(word, at);
    bool indexed = accept("[");
    std::unique_ptr<Node> index; // a table's column: name[h, index]
    if (indexed) {
      if (!accept("h"))
        fail(pos + 1, "a param is indexed by the head first: write " + word + "[h] (or " + word +
                          "[h, index] for a table)");
      if (accept(",")) {
        index = orExpr();
        expect(*index, Type::Number, "the index of " + word + "[h, ...]");
      }
      if (!accept("]"))
        fail(pos + 1, "expected ']' after " + word + "[h" + (index ? ", index" : ""));
    }
    if (auto table = tables.find(word); table != tables.end()) {
      if (!index)
        fail(at, "'" + word + "' is a table of " + std::to_string(table->second) +
                     " values per head: write " + word + "[h, index]");
      auto n = make(Node::Kind::Name, Type::Number, word, at);
      n->args.push_back(std::move(index));
      return n;
    }
    if (index)
      fail(at, "'" + word + "' is not a table (give it shape: [heads, N]): write " + word +
                   (indexed ? "[h]" : ""));
    auto known = [](const std::vector<std::string> &v, const std::string &w) {
      return std::find(v.begin(), v.end(), w) != v.end();
    };
    // (A name may be both: with one head, a [1] capture is per head and a scalar.)
    bool scalar = known(names, word), byHead = known(perHead, word);
    if (indexed ? byHead : scalar)
      return make(Node::Kind::Name, Type::Number, word, at);
    if (byHead)
      fail(at, "'" + word + "' holds one value per head: write " + word + "[h]");
    if (scalar)
      fail(at, "'" + word + "' is not per head (give it shape: [heads]): write " + word +
                   " without [h]");
    if (functions().count(word))
      fail(at, "'" + word + "' is a function: write " + word + "(...)");
    if (word == "h")
      fail(at, "h indexes a per-head param (slope[h]); it is not a value of its own");
    std::string all;
    for (const std::string &n : names)
      all += (all.empty() ? "" : ", ") + n;
    for (const std::string &n : perHead)
      all += (all.empty() ? "" : ", ") + n + "[h]";
    for (const auto &[n, columns] : tables)
      all += (all.empty() ? "" : ", ") + n + "[h, index]";
    fail(at, "unknown name '" + word + "'; the expression may use " + all);
  }
  std::unique_ptr<Node> call(const std::string &name, size_t at) {
    auto it = functions().find(name);
    if (it == functions().end()) {
      std::string known;
      for (const auto &[f, _] : functions())
        known += (known.empty() ? "" : ", ") + f;
      fail(at, "unknown function '" + name + "'; the functions are " + known);
    }
    const Function &f = it->second;
    auto n = make(Node::Kind::Call, f.result, name, at);
    if (!accept(")"))
      do
        n->args.push_back(orExpr());
      while (accept(","));
    if (!accept(")"))
      fail(pos + 1, "expected ')' or ',' in the arguments of " + name + "(...)");
    if (n->args.size() != f.args.size())
      fail(at, name + "(...) takes " + std::to_string(f.args.size()) + " argument" +
                   (f.args.size() == 1 ? "" : "s") + ", got " + std::to_string(n->args.size()));
    for (size_t k = 0; k < f.args.size(); ++k)
      expect(*n->args[k], f.args[k], "argument " + std::to_string(k + 1) + " of " + name + "(...)");
    return n;
  }

  const std::string &text;
  const std::vector<std::string> &names, &perHead;
  const std::map<std::string, int64_t> &tables;
  size_t pos = 0;
  int depth = 0;
};

} // namespace

std::unique_ptr<Node> parse(const std::string &text, const std::vector<std::string> &names,
                            Type want, Error &error, const std::vector<std::string> &perHead,
                            const std::map<std::string, int64_t> &tables) {
  try {
    return Parser(text, names, perHead, tables).whole(want);
  } catch (const Parser::Failure &f) {
    error = f.error;
    return nullptr;
  }
}

std::unique_ptr<Node> withWindow(std::unique_ptr<Node> mask, int64_t window) {
  if (window <= 0)
    return mask;
  Error unused;
  auto band = parse("abs(i - j) < " + std::to_string(window), {"i", "j"}, Type::Bool, unused);
  if (!mask)
    return band;
  auto both = std::make_unique<Node>();
  both->kind = Node::Kind::Binary;
  both->type = Type::Bool;
  both->op = "and";
  both->args.push_back(std::move(mask));
  both->args.push_back(std::move(band));
  return both;
}

mlir::Value build(mlir::OpBuilder &b, mlir::Location l, const Node &node,
                  const std::map<std::string, mlir::Value> &values) {
  using namespace mlir::attn;
  auto constant = [&](double v) -> mlir::Value {
    auto type = mlir::RankedTensorType::get({}, b.getF32Type());
    return b.create<ConstantOp>(l, mlir::DenseElementsAttr::get(type, (float)v));
  };
  auto neg = [&](mlir::Value x) -> mlir::Value { return b.create<NegOp>(l, x); };
  // 1 - x: the complement of a condition.
  auto complement = [&](mlir::Value x) -> mlir::Value {
    return b.create<SubOp>(l, constant(1.0), x);
  };
  std::vector<mlir::Value> a;
  for (const auto &arg : node.args)
    a.push_back(build(b, l, *arg, values));
  switch (node.kind) {
  case Node::Kind::Number:
    return constant(node.number);
  case Node::Kind::Name: {
    if (a.empty())
      return values.at(node.op);
    // name[h, index]: the column nearest the index, clamped to the table (its columns are
    // the captures name[0], name[1], ...): column 0 plus each step up from column c - 1 to c
    // wherever index > c - 1/2. The steps (differences of captures) do not depend on i and j,
    // and the terms are summed as a tree: no chain through the columns, which would bound a
    // score tile's throughput by the latency of one add per column.
    std::vector<mlir::Value> terms = {values.at(node.op + "[0]")};
    mlir::Value previous = terms.front();
    for (int64_t c = 1;; ++c) {
      auto column = values.find(node.op + "[" + std::to_string(c) + "]");
      if (column == values.end())
        break;
      mlir::Value past = b.create<StepOp>(l, b.create<SubOp>(l, a[0], constant(c - 0.5)));
      terms.push_back(b.create<MulOp>(l, past, b.create<SubOp>(l, column->second, previous)));
      previous = column->second;
    }
    while (terms.size() > 1) {
      std::vector<mlir::Value> sums;
      for (size_t k = 0; k + 1 < terms.size(); k += 2)
        sums.push_back(b.create<AddOp>(l, terms[k], terms[k + 1]));
      if (terms.size() % 2)
        sums.push_back(terms.back());
      terms = std::move(sums);
    }
    return terms.front();
  }
  case Node::Kind::Unary:
    return node.op == "-" ? neg(a[0]) : complement(a[0]);
  case Node::Kind::Binary: {
    const std::string &op = node.op;
    if (op == "+")
      return b.create<AddOp>(l, a[0], a[1]);
    if (op == "-")
      return b.create<SubOp>(l, a[0], a[1]);
    if (op == "*" || op == "and")
      return b.create<MulOp>(l, a[0], a[1]);
    if (op == "/")
      return b.create<DivOp>(l, a[0], a[1]);
    if (op == "or")
      return b.create<MaximumOp>(l, a[0], a[1]);
    // Comparisons through step (x > 0) and eq, both 0 or 1 with no gradient.
    if (op == "<")
      return b.create<StepOp>(l, b.create<SubOp>(l, a[1], a[0]));
    if (op == ">")
      return b.create<StepOp>(l, b.create<SubOp>(l, a[0], a[1]));
    if (op == "<=")
      return complement(b.create<StepOp>(l, b.create<SubOp>(l, a[0], a[1])));
    if (op == ">=")
      return complement(b.create<StepOp>(l, b.create<SubOp>(l, a[1], a[0])));
    if (op == "==")
      return b.create<EqOp>(l, a[0], a[1]);
    return complement(b.create<EqOp>(l, a[0], a[1])); // !=
  }
  case Node::Kind::Call: {
    const std::string &f = node.op;
    if (f == "abs")
      return b.create<MaximumOp>(l, a[0], neg(a[0]));
    if (f == "exp")
      return b.create<ExpOp>(l, a[0]);
    if (f == "log")
      return b.create<LogOp>(l, a[0]);
    if (f == "sqrt")
      return b.create<SqrtOp>(l, a[0]);
    if (f == "tanh")
      return b.create<TanhOp>(l, a[0]);
    if (f == "sigmoid")
      return b.create<SigmoidOp>(l, a[0]);
    if (f == "max")
      return b.create<MaximumOp>(l, a[0], a[1]);
    if (f == "min")
      return neg(b.create<MaximumOp>(l, neg(a[0]), neg(a[1])));
    // where(c, x, y) = c x + (1 - c) y: c is exactly 0 or 1.
    return b.create<AddOp>(l, b.create<MulOp>(l, a[0], a[1]),
                           b.create<MulOp>(l, complement(a[0]), a[2]));
  }
  }
  return {};
}

void addTable(mlir::OpBuilder &b, mlir::Location l, AttentionRegions &r, const std::string &name,
              mlir::Value table) {
  llvm::ArrayRef<int64_t> shape = mlir::cast<mlir::RankedTensorType>(table.getType()).getShape();
  auto column = mlir::RankedTensorType::get({shape[0]}, b.getF32Type());
  for (int64_t c = 0; c < shape[1]; ++c) {
    mlir::Value slice = b.create<mlir::attn::SliceOp>(l, table, b.getDenseI64ArrayAttr({0, c}),
                                                      b.getDenseI64ArrayAttr({shape[0], 1}));
    r.captures.push_back({name + "[" + std::to_string(c) + "]",
                          b.create<mlir::attn::ReshapeOp>(l, column, slice), /*perHead=*/true});
  }
}

mlir::Value fusedAttention(mlir::OpBuilder &b, mlir::Location l, mlir::Value q, mlir::Value keys,
                           mlir::Value values, mlir::Value keyMask, bool causal,
                           const AttentionRegions &r) {
  using namespace mlir::attn;
  auto f32 = [&](llvm::ArrayRef<int64_t> shape) {
    return mlir::RankedTensorType::get(shape, b.getF32Type());
  };
  auto constant = [&](double v) -> mlir::Value {
    return b.create<ConstantOp>(l, mlir::DenseElementsAttr::get(f32({}), (float)v));
  };
  // Every capture is a scalar to the regions: a per-head one its head's tensor<f32>.
  llvm::SmallVector<mlir::Value> captures;
  llvm::SmallVector<mlir::Type> args(2, f32({}));
  for (const AttentionRegions::Capture &c : r.captures) {
    captures.push_back(c.value);
    args.push_back(c.perHead ? f32({}) : c.value.getType());
  }
  if (r.iOffset) {
    captures.push_back(r.iOffset);
    args.push_back(f32({}));
  }
  auto op = b.create<FusedAttentionOp>(l, FusedAttentionOp::resultTypes(q, keys, values, false), q,
                                       keys, values, keyMask, mlir::Value(), captures,
                                       b.getBoolAttr(causal), mlir::IntegerAttr(), mlir::UnitAttr(),
                                       mlir::UnitAttr(), PrecisionAttr());
  mlir::OpBuilder::InsertionGuard guard(b);
  // The names, from a region's block: i (plus the offset), j, the captures (a per-head one
  // as its head's element), the constants.
  auto bind = [&](mlir::Block *block, unsigned first) {
    std::map<std::string, mlir::Value> names;
    mlir::Value i = block->getArgument(first);
    if (r.iOffset)
      i = b.create<AddOp>(l, i, block->getArguments().back());
    names["i"] = i;
    names["j"] = block->getArgument(first + 1);
    for (auto [n, capture] : llvm::enumerate(r.captures)) {
      mlir::Value arg = block->getArgument(first + 2 + n);
      if (arg.getType() != f32({})) // tensor<1xf32>: the scalar the expressions use
        arg = b.create<ReshapeOp>(l, f32({}), arg);
      names[capture.name] = arg;
    }
    for (const auto &[name, value] : r.constants)
      names[name] = constant(value);
    return names;
  };
  // score(q, k, i, j, captures) = score(scale * sum(q * k), i, j, ...), softcapped.
  int64_t width = mlir::cast<mlir::RankedTensorType>(q.getType()).getShape()[3];
  llvm::SmallVector<mlir::Type> scoreArgs(2, f32({width}));
  scoreArgs.append(args);
  mlir::Block *block = b.createBlock(&op.getScore(), {}, scoreArgs,
                                     llvm::SmallVector<mlir::Location>(scoreArgs.size(), l));
  mlir::Value dot =
      b.create<ReduceSumOp>(l, b.create<MulOp>(l, block->getArgument(0), block->getArgument(1)),
                            b.getDenseI64ArrayAttr({0}), b.getBoolAttr(false));
  std::map<std::string, mlir::Value> names = bind(block, 2);
  names[r.base] = r.scale == 1.0f ? dot : b.create<MulOp>(l, dot, constant(r.scale)).getResult();
  mlir::Value s = r.score ? build(b, l, *r.score, names) : names[r.base];
  if (r.softcap > 0) {
    mlir::Value cap = constant(r.softcap);
    s = b.create<MulOp>(l, cap, b.create<TanhOp>(l, b.create<DivOp>(l, s, cap)));
  }
  b.create<YieldOp>(l, s);

  if (r.mask) {
    mlir::Block *maskBlock =
        b.createBlock(&op.getMask(), {}, args, llvm::SmallVector<mlir::Location>(args.size(), l));
    b.create<YieldOp>(l, build(b, l, *r.mask, bind(maskBlock, 0)));
  }
  return op.getOutput();
}

} // namespace attn::yaml::expr

namespace attn::yaml::expr {
namespace {
bool isIdentifier(const std::string &s) {
  if (s.empty() || !(std::isalpha((unsigned char)s[0]) || s[0] == '_'))
    return false;
  return std::all_of(s.begin(), s.end(),
                     [](char c) { return std::isalnum((unsigned char)c) || c == '_'; });
}
} // namespace

AttentionMods read(const Spec &spec, Problems &problems) {
  const AttentionModSpec &a = spec.model.transformer->attention;
  const std::string section = "model.transformer.attention";
  AttentionMods mods;
  mods.softcap = a.softcap;
  mods.slidingWindow = a.slidingWindow;

  using Kind = YamlTree::Kind;
  if (a.params.kind != Kind::Map && a.params.kind != Kind::Null)
    problems.error(a.params.loc, section + ".params must be a map from names to {init, learn}");
  for (const auto &[key, value] : a.params.entries) {
    Param p;
    p.name = key.scalar;
    static const std::vector<std::string> reserved = {"score", "i", "j", "h", "and", "or", "not"};
    if (!isIdentifier(p.name) || functions().count(p.name) ||
        std::find(reserved.begin(), reserved.end(), p.name) != reserved.end()) {
      problems.error(key.loc, "'" + p.name +
                                  "' cannot name a param: a name is letters, digits "
                                  "and _, and not score, i, j, h, and, or, not or a function");
      continue;
    }
    if (value.kind != Kind::Map) {
      problems.error(value.loc, "param '" + p.name +
                                    "' must be a map {init: value, learn: "
                                    "true|false}");
      continue;
    }
    bool hasInit = false;
    for (const auto &[k, v] : value.entries) {
      if (k.scalar == "init") {
        hasInit = true;
        std::optional<double> x = v.kind == Kind::Scalar ? parseFloat(v.scalar) : std::nullopt;
        if (v.kind == Kind::Scalar && v.scalar == "alibi")
          p.alibi = true;
        else if (!x)
          problems.error(v.loc, "the init of param '" + p.name + "' must be a number or alibi");
        else if (!std::isfinite((float)*x))
          problems.error(v.loc, "the init of param '" + p.name + "' (" + v.scalar +
                                    ") is not a finite f32 number (about +-3.4e38 at most)");
        else
          p.init = *x;
      } else if (k.scalar == "learn") {
        std::optional<bool> x = v.kind == Kind::Scalar ? parseBool(v.scalar) : std::nullopt;
        if (!x)
          problems.error(v.loc, "learn of param '" + p.name + "' must be true or false");
        else
          p.learn = *x;
      } else if (k.scalar == "shape") {
        bool heads = v.kind == Kind::Sequence && !v.items.empty() && v.items.size() <= 2 &&
                     v.items[0].kind == Kind::Scalar && v.items[0].scalar == "heads";
        bool scalar = v.kind == Kind::Sequence && v.items.empty();
        std::optional<int64_t> columns;
        if (heads && v.items.size() == 2)
          columns = v.items[1].kind == Kind::Scalar ? parseInt(v.items[1].scalar) : std::nullopt;
        if ((!heads && !scalar) || (columns && (*columns < 1 || *columns > kMaxTableColumns)) ||
            (heads && v.items.size() == 2 && !columns))
          problems.error(v.loc, "the shape of param '" + p.name +
                                    "' must be [] (a scalar), [heads] (one per head) or "
                                    "[heads, N] (a table of N per head, N from 1 to " +
                                    std::to_string(kMaxTableColumns) + ")");
        p.perHead = heads && !columns;
        p.columns = columns.value_or(0);
      } else {
        problems.error(k.loc, "unknown key '" + k.scalar + "' in param '" + p.name +
                                  "' (it takes init, shape and learn)");
      }
    }
    if (!hasInit)
      problems.error(value.loc, "param '" + p.name + "' needs an init (its starting value)");
    if (p.alibi && !p.perHead) {
      problems.error(value.loc, "param '" + p.name +
                                    "': init alibi gives each head its slope; "
                                    "give it shape: [heads]");
      // Read as what alibi makes it, so that `slope[h]` in the expression is not blamed too
      // (the fix is the shape, not the index).
      p.perHead = true;
    }
    mods.params.push_back(p);
  }

  std::vector<std::string> names = {"i", "j"}, perHead;
  std::map<std::string, int64_t> tables;
  for (const Param &p : mods.params)
    if (p.columns)
      tables[p.name] = p.columns;
    else
      (p.perHead ? perHead : names).push_back(p.name);
  auto expression = [&](const std::string &key, const std::string &text, Type want,
                        const std::vector<std::string> &scope) -> std::unique_ptr<Node> {
    if (text.empty())
      return nullptr;
    Error error;
    std::unique_ptr<Node> node = parse(text, scope, want, error, perHead, tables);
    if (!node)
      problems.error(section + "." + key, a.loc,
                     section + "." + key + " \"" + text + "\", column " +
                         std::to_string(error.column) + ": " + error.message);
    return node;
  };
  // A sliding window is a mask like any other, and the written one's too.
  mods.mask = withWindow(expression("mask", a.mask, Type::Bool, names), a.slidingWindow);
  names.insert(names.begin(), "score");
  mods.scoreMod = expression("score_mod", a.scoreMod, Type::Number, names);
  if (!a.mask.empty() || !a.scoreMod.empty() || a.softcap > 0 || a.slidingWindow > 0)
    return mods;
  if (!mods.params.empty())
    problems.error(section + ".params", a.loc,
                   section + ".params are read by score_mod and mask, and there are none",
                   "write score_mod or mask, or remove params");
  return mods;
}

} // namespace attn::yaml::expr
