// The expressions of model.transformer.attention (frontends/yaml/ScoreExpr.h): what parses,
// the column and reason of what does not, what the ops they build compute (folded here by
// evaluating the tree the way build() lowers it), and the section's checks in a spec.
#include "dialect/AttnDialect.h"
#include "dialect/AttnOps.h"
#include "dialect/ops/ScoreRegion.h"
#include "frontends/yaml/ScoreExpr.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/MLIRContext.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <random>

namespace {

using namespace attn::yaml;
using expr::Node;
using expr::Type;

const std::vector<std::string> kNames = {"score", "i", "j", "slope"}, kPerHead = {"m"};

// The value of `n` with score = 2, i = 5, j = 3, slope = 0.25 (a condition: 1 or 0).
double eval(const Node &n) {
  std::vector<double> a;
  for (const auto &arg : n.args)
    a.push_back(eval(*arg));
  switch (n.kind) {
  case Node::Kind::Number:
    return n.number;
  case Node::Kind::Name: // (m[h]: the head's element, 0.5)
    return n.op == "score" ? 2 : n.op == "i" ? 5 : n.op == "j" ? 3 : n.op == "m" ? 0.5 : 0.25;
  case Node::Kind::Unary:
    return n.op == "-" ? -a[0] : 1 - a[0];
  case Node::Kind::Binary: {
    const std::string &op = n.op;
    if (op == "+")
      return a[0] + a[1];
    if (op == "-")
      return a[0] - a[1];
    if (op == "*" || op == "and")
      return a[0] * a[1];
    if (op == "/")
      return a[0] / a[1];
    if (op == "or")
      return std::max(a[0], a[1]);
    if (op == "<")
      return a[0] < a[1];
    if (op == "<=")
      return a[0] <= a[1];
    if (op == ">")
      return a[0] > a[1];
    if (op == ">=")
      return a[0] >= a[1];
    if (op == "==")
      return a[0] == a[1];
    return a[0] != a[1];
  }
  case Node::Kind::Call:
    if (n.op == "abs")
      return std::fabs(a[0]);
    if (n.op == "tanh")
      return std::tanh(a[0]);
    if (n.op == "min")
      return std::min(a[0], a[1]);
    if (n.op == "max")
      return std::max(a[0], a[1]);
    if (n.op == "where")
      return a[0] ? a[1] : a[2];
    if (n.op == "exp")
      return std::exp(a[0]);
    return NAN;
  }
  return NAN;
}

double value(const std::string &text, Type want = Type::Number) {
  expr::Error error;
  auto node = expr::parse(text, kNames, want, error, kPerHead);
  EXPECT_TRUE(node) << text << ": column " << error.column << ": " << error.message;
  return node ? eval(*node) : NAN;
}

// "column N: message" of an expression that must not parse.
std::string failure(const std::string &text, Type want = Type::Number) {
  expr::Error error;
  auto node = expr::parse(text, kNames, want, error, kPerHead);
  EXPECT_FALSE(node) << text;
  return "column " + std::to_string(error.column) + ": " + error.message;
}

TEST(ScoreExpr, PrecedenceAndAssociativityAreArithmetics) {
  EXPECT_DOUBLE_EQ(value("score - slope * abs(i - j)"), 2 - 0.25 * 2);
  EXPECT_DOUBLE_EQ(value("i - j - 1"), 1);
  EXPECT_DOUBLE_EQ(value("i / j / 2"), 5.0 / 3 / 2);
  EXPECT_DOUBLE_EQ(value("-i + 2 * (j - 1)"), -1);
  EXPECT_DOUBLE_EQ(value("30 * tanh(score / 30)"), 30 * std::tanh(2.0 / 30));
  EXPECT_DOUBLE_EQ(value("where(i > j, score, -1e4)"), 2);
  EXPECT_DOUBLE_EQ(value("min(i, j) + max(i, j)"), 8);
  EXPECT_DOUBLE_EQ(value("1.5e1 + .5"), 15.5);
  EXPECT_DOUBLE_EQ(value("score - m[h] * abs(i - j)"), 2 - 0.5 * 2); // a per-head param
  EXPECT_DOUBLE_EQ(value("score - m[ h ] * i"), 2 - 0.5 * 5);
}

TEST(ScoreExpr, ConditionsCombineWithAndOrNot) {
  EXPECT_EQ(value("abs(i - j) <= 2 or j < 4", Type::Bool), 1);
  EXPECT_EQ(value("i < j or j == 4", Type::Bool), 0);
  EXPECT_EQ(value("not i < j and j != 3", Type::Bool), 0);
  EXPECT_EQ(value("not (i < j) or j != 3", Type::Bool), 1);
  EXPECT_EQ(value("i >= 5 and j > 2", Type::Bool), 1);
}

TEST(ScoreExpr, MistakesAreLocated) {
  EXPECT_EQ(failure("score - slop * abs(i - j)"),
            "column 9: unknown name 'slop'; the expression may use score, i, j, slope, m[h]");
  EXPECT_EQ(failure("score - slope[h]"), "column 9: 'slope' is not per head (give it shape: "
                                         "[heads]): write slope without [h]");
  EXPECT_EQ(failure("score - m * i"), "column 9: 'm' holds one value per head: write m[h]");
  EXPECT_EQ(failure("score - m[i]"), "column 11: a param is indexed by the head first: write "
                                     "m[h] (or m[h, index] for a table)");
  EXPECT_EQ(failure("score - h"), "column 9: h indexes a per-head param (slope[h]); it is not a "
                                  "value of its own");
  EXPECT_EQ(failure("abs(i - j"), "column 10: expected ')' or ',' in the arguments of abs(...)");
  EXPECT_EQ(failure("(i - j"), "column 7: expected ')' to close the '(' at column 1");
  EXPECT_EQ(failure("max(i)"), "column 1: max(...) takes 2 arguments, got 1");
  EXPECT_EQ(failure("cos(i)"), "column 1: unknown function 'cos'; the functions are abs, exp, "
                               "log, max, min, sigmoid, sqrt, tanh, where");
  EXPECT_EQ(failure("score +"), "column 8: the expression ends where a value should follow");
  EXPECT_EQ(failure(""), "column 1: the expression is empty");
  EXPECT_EQ(failure("i ** 2"), "column 3: '**' is not an operator here: write x * x, or "
                               "exp(y * log(x))");
  EXPECT_EQ(failure("2x"), "column 1: '2x' is not a number");
  EXPECT_EQ(failure(std::string(4000, '(')), "column 201: the expression nests deeper than 200");
  std::string chain = "1";
  while (chain.size() <= 4096)
    chain += " + 1";
  EXPECT_EQ(failure(chain), "column 4097: the expression is longer than 4096 characters");
  EXPECT_EQ(failure(std::string(4000, '-') + "1"),
            "column 201: the expression nests deeper than 200");
  EXPECT_EQ(failure("i < j < 3", Type::Bool),
            "column 7: comparisons do not chain (column 3 compares already): join them with "
            "'and'");
}

// name[h, index] reads a table (shape [heads, N]): the index is an expression of its own,
// which build() turns into the clamped nearest column (checked against PyTorch by the
// relative_table reference); a table is read only so, and only a table so.
TEST(ScoreExpr, TablesAreReadAtAnIndex) {
  const std::map<std::string, int64_t> tables = {{"rel", 5}};
  auto parse = [&](const std::string &text, expr::Error &error) {
    return expr::parse(text, kNames, Type::Number, error, kPerHead, tables);
  };
  expr::Error error;
  auto node = parse("score + rel[h, min(max(i - j, -2), 2) + 2] * m[h]", error);
  ASSERT_TRUE(node) << error.message;
  const Node &read = *node->args[1]->args[0];
  EXPECT_EQ(read.kind, Node::Kind::Name);
  EXPECT_EQ(read.op, "rel");
  ASSERT_EQ(read.args.size(), 1u);
  EXPECT_DOUBLE_EQ(eval(*read.args[0]), 4); // i - j = 2, the last column
  auto fails = [&](const std::string &text) {
    expr::Error e;
    EXPECT_FALSE(parse(text, e)) << text;
    return "column " + std::to_string(e.column) + ": " + e.message;
  };
  EXPECT_EQ(fails("score + rel[h]"),
            "column 9: 'rel' is a table of 5 values per head: write rel[h, index]");
  EXPECT_EQ(fails("score + rel"),
            "column 9: 'rel' is a table of 5 values per head: write rel[h, index]");
  EXPECT_EQ(fails("score + m[h, 1]"),
            "column 9: 'm' is not a table (give it shape: [heads, N]): write m[h]");
  EXPECT_EQ(fails("score + rel[h, i < j]"),
            "column 16: the index of rel[h, ...] must be a number, got a condition (a "
            "comparison, and, or, not)");
  EXPECT_EQ(fails("score + rel[h, 1"), "column 17: expected ']' after rel[h, index");
  EXPECT_EQ(fails("slop"), "column 1: unknown name 'slop'; the expression may use score, i, j, "
                           "slope, m[h], rel[h, index]");
}

TEST(ScoreExpr, ConditionsAndNumbersDoNotMix) {
  EXPECT_EQ(failure("i - j", Type::Bool), "column 1: the expression must be a condition, got a "
                                          "number");
  EXPECT_EQ(failure("score * (i < j)"),
            "column 10: the right side of '*' must be a number, got a condition (a comparison, "
            "and, or, not)");
  EXPECT_EQ(failure("i and j < 2", Type::Bool),
            "column 1: the left side of 'and' (column 3) must be a condition, got a number");
  EXPECT_EQ(failure("where(i, 1, 2)"),
            "column 7: argument 1 of where(...) must be a condition, got a number");
}

// Any text is an expression or an error with a column inside it (or just past its end), never
// a crash or a hang: 20000 mutations (characters inserted, deleted, replaced, from the
// language's alphabet and beyond) of valid expressions of both types.
TEST(ScoreExpr, MutatedTextsParseOrFailWithAColumn) {
  const std::vector<std::string> seeds = {"score - m[h] * abs(i - j)",
                                          "where(i > j, score, -1e4) / 2",
                                          "abs(i - j) <= 128 or j < 4",
                                          "not (i < j) and j != 3 or i >= 5",
                                          "30 * tanh(score / 30) + min(i, max(j, .5))",
                                          "score + rel[h, min(max(i - j, -2), 2) + 2]"};
  const std::string alphabet = "ijhms()[],.+-*/<>=! 0123456789eabcdnortwx_\"'\t#{}:";
  std::mt19937 rng(7);
  int parsed = 0;
  for (int n = 0; n < 20000; ++n) {
    std::string text = seeds[n % seeds.size()];
    for (int edits = 1 + (int)(rng() % 4); edits > 0; --edits) {
      size_t at = text.empty() ? 0 : rng() % (text.size() + 1);
      char c = rng() % 8 == 0 ? (char)(rng() % 256) : alphabet[rng() % alphabet.size()];
      switch (rng() % 3) {
      case 0:
        text.insert(text.begin() + at, c);
        break;
      case 1:
        if (at < text.size())
          text.erase(at, 1);
        break;
      default:
        if (at < text.size())
          text[at] = c;
      }
    }
    for (Type want : {Type::Number, Type::Bool}) {
      expr::Error error;
      auto node = expr::parse(text, kNames, want, error, kPerHead, {{"rel", 5}});
      if (node) {
        ++parsed;
        EXPECT_EQ(node->type, want) << text;
      } else {
        EXPECT_GE(error.column, 1u) << text;
        EXPECT_LE(error.column, text.size() + 1) << text;
        EXPECT_FALSE(error.message.empty()) << text;
      }
    }
  }
  EXPECT_GT(parsed, 100); // the mutations do not all break the text
}

// The section in a spec: each problem at its key (or at the part of params that has it),
// all reported at once.
std::string problems(const std::string &attention, const std::string &task = "seq2seq") {
  std::vector<Diagnostic> diags;
  std::optional<Spec> spec =
      parseSpecString("name: m\ntask: " + task +
                          "\ndata: {builtin: reverse}\nmodel:\n  transformer:\n"
                          "    d_model: 8\n    heads: 2\n    attention:\n" +
                          attention,
                      "m.yaml", {}, diags);
  if (spec)
    checkConsistency(*spec, diags);
  std::string all;
  for (const Diagnostic &d : diags)
    all += d.str() + "\n";
  return all;
}

TEST(ScoreExpr, TheSectionIsCheckedWhereItIsWritten) {
  EXPECT_EQ(problems("      score_mod: score - slope * abs(i - j)\n"
                     "      params: {slope: {init: 0.5}}\n"
                     "      mask: abs(i - j) < 8 or j == 0\n"
                     "      sliding_window: 16\n      softcap: 30\n"),
            "");
  std::string all = problems("      score_mod: score - slope * i\n"
                             "      mask: i - j\n"
                             "      params: {slope: {init: x}, i: {init: 1}, b: {init: 1, "
                             "shape: [2]}, c: {learn: 1}}\n");
  EXPECT_EQ(problems("      score_mod: score - m[h] * abs(i - j)\n"
                     "      params: {m: {shape: [heads], init: alibi, learn: false}}\n"),
            "");
  EXPECT_NE(all.find("m.yaml:11:30: error: the init of param 'slope' must be a number or alibi"),
            std::string::npos)
      << all;
  EXPECT_NE(all.find("m.yaml:11:34: error: 'i' cannot name a param"), std::string::npos) << all;
  EXPECT_NE(all.find("m.yaml:11:68: error: the shape of param 'b' must be [] (a scalar), "
                     "[heads] (one per head) or [heads, N] (a table of N per head, N from 1 "
                     "to 256)"),
            std::string::npos)
      << all;
  EXPECT_NE(all.find("learn of param 'c' must be true or false"), std::string::npos) << all;
  EXPECT_NE(all.find("param 'c' needs an init"), std::string::npos) << all;
  EXPECT_EQ(all.find("param 'slope' needs an init"), std::string::npos) << all; // it has one
  EXPECT_NE(all.find("m.yaml:10:7: error: model.transformer.attention.mask \"i - j\", column 1: "
                     "the expression must be a condition, got a number"),
            std::string::npos)
      << all;
  EXPECT_NE(problems("      params: {slope: {init: 1}}\n")
                .find("model.transformer.attention.params are read by score_mod and mask"),
            std::string::npos);
  EXPECT_NE(problems("      sliding_window: -1\n").find("sliding_window"), std::string::npos);
  // Constants that would make every score infinite or NaN are refused where they are written.
  for (const char *bad : {"score + 1e39", "score * 1e400", "score / 0", "0 / 0", "score / (0)"}) {
    std::string said = problems("      score_mod: " + std::string(bad) + "\n");
    EXPECT_TRUE(said.find("beyond f32's range") != std::string::npos ||
                said.find("division by zero") != std::string::npos)
        << bad << ": " << said;
  }
  EXPECT_NE(problems("      score_mod: score - s * i\n      params: {s: {init: 1e39}}\n")
                .find("the init of param 's' (1e39) is not a finite f32 number"),
            std::string::npos);
  EXPECT_EQ(problems("      score_mod: score / 2 + 1e30 * 0\n"), "");
  // An alibi param given another shape: the errors ask for shape [heads], and none says to
  // drop the [h] that such a param is read with.
  std::string alibi = problems("      score_mod: score - slope[h] * abs(i - j)\n"
                               "      params: {slope: {shape: [3], init: alibi}}\n");
  EXPECT_NE(alibi.find("give it shape: [heads]"), std::string::npos) << alibi;
  EXPECT_EQ(alibi.find("without [h]"), std::string::npos) << alibi;
}

// The masks that are sliding windows reach the flash kernels as window arguments: the region
// build() makes of them is one score_region::slidingWindow reads the window back from (the
// spec's sliding_window, comparisons of i - j, j - i and abs(i - j) with a number), and a mask
// that is not only a window, or one that hides every key, is not read as one.
TEST(ScoreExpr, WindowMasksBuildRegionsTheLoweringReadsAsWindows) {
  mlir::MLIRContext context;
  context.loadDialect<mlir::attn::AttnDialect>();
  auto window = [&](std::unique_ptr<Node> mask) -> std::optional<std::pair<int64_t, int64_t>> {
    mlir::Block block;
    mlir::OpBuilder b(&context);
    auto scalar = mlir::RankedTensorType::get({}, b.getF32Type());
    mlir::Location l = b.getUnknownLoc();
    std::map<std::string, mlir::Value> values;
    for (const char *name : {"i", "j", "slope"})
      values[name] = block.addArgument(scalar, l);
    b.setInsertionPointToEnd(&block);
    b.create<mlir::attn::YieldOp>(l, mlir::ValueRange{expr::build(b, l, *mask, values)});
    auto w = mlir::attn::score_region::slidingWindow(block);
    if (!w)
      return std::nullopt;
    return std::make_pair(w->left, w->right);
  };
  auto text = [&](const std::string &t) {
    expr::Error error;
    auto node = expr::parse(t, {"i", "j", "slope"}, Type::Bool, error);
    EXPECT_TRUE(node) << t << ": " << error.message;
    return node;
  };
  using W = std::optional<std::pair<int64_t, int64_t>>;
  EXPECT_EQ(window(expr::withWindow(nullptr, 6)), W({5, 5}));
  EXPECT_EQ(window(text("i - j < 256")), W({255, -1}));
  EXPECT_EQ(window(text("i - j <= 255.5")), W({255, -1}));
  EXPECT_EQ(window(text("j - i <= 2")), W({-1, 2}));
  EXPECT_EQ(window(text("abs(i - j) <= 128")), W({128, 128}));
  EXPECT_EQ(window(text("i - j < 0.5")), W({0, -1}));
  EXPECT_EQ(window(text("abs(i - j) <= 128 or j < 4")), std::nullopt);
  EXPECT_EQ(window(expr::withWindow(text("j < 4"), 6)), std::nullopt);
  EXPECT_EQ(window(text("i - j < slope")), std::nullopt);
  EXPECT_EQ(window(text("i - j < 0")), std::nullopt);
  EXPECT_EQ(window(text("i >= j")), std::nullopt);
  EXPECT_EQ(window(text("2 * (i - j) < 8")), std::nullopt);
}

} // namespace
