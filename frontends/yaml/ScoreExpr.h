// The expressions of model.transformer.attention (docs/transformer.md, "Your own attention"):
// `score_mod` changes a score, `mask` says which keys a query may see. Both are arithmetic
// over scalars (the score, the positions i and j, named learned scalars), parsed here with
// the column of every mistake, then built as attn ops inside attn.fused_attention's score and
// mask regions, which attnc differentiates and runs on the flash kernels' GEMM tiles.
//
//   expr    := or
//   or      := and ("or" and)*            booleans
//   and     := not ("and" not)*
//   not     := "not" not | compare
//   compare := sum (("<" | "<=" | ">" | ">=" | "==" | "!=") sum)?   numbers -> a boolean
//   sum     := product (("+" | "-") product)*
//   product := unary (("*" | "/") unary)*
//   unary   := "-" unary | primary
//   primary := number | name | name "[" "h" "]" | name "[" "h" "," expr "]"
//            | function "(" expr ("," expr)* ")" | "(" expr ")"
//
// `name[h]` reads a per-head param, one value per head, at the head the score is for: ALiBi's
// `score - slope[h] * abs(i - j)`. A per-head param is always read so, a scalar never.
// `name[h, index]` reads a table, N values per head (shape [heads, N]), at the column nearest
// the index, clamped to 0 .. N - 1: T5's learned relative bias
// `score + bias[h, min(max(i - j, -8), 8) + 8]` over a [heads, 17] table.
// Functions: abs, exp, log, sqrt, tanh, sigmoid (a number), min, max (two numbers),
// where(condition, a, b). A boolean is not a number: `mask` must be a boolean, `score_mod` a
// number, and `(i < j) * 2` is an error rather than a guess.
#pragma once

#include "frontends/yaml/Family.h"

#include "mlir/IR/Builders.h"

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace attn::yaml::expr {

enum class Type { Number, Bool };

struct Node {
  enum class Kind { Number, Name, Unary, Binary, Call };
  Kind kind = Kind::Number;
  Type type = Type::Number;
  double number = 0; // Number
  std::string op;    // Name: the name; Unary, Binary: "-", "not", "+", "<=", "and", ...;
                     // Call: the function
  std::vector<std::unique_ptr<Node>> args;
  size_t column = 1; // where it starts in the text, 1-based
};

// What is wrong with an expression, and at which column of its text (1-based).
struct Error {
  size_t column = 1;
  std::string message;
};

// `text` as an expression of type `want` whose names are `names` (each a number), `perHead`
// (each read as name[h]) and `tables` (name -> N, each read as name[h, index]). Null, with
// `error` saying why, when it is not one. A table read is a Name node whose one argument is
// the index.
std::unique_ptr<Node> parse(const std::string &text, const std::vector<std::string> &names,
                            Type want, Error &error, const std::vector<std::string> &perHead = {},
                            const std::map<std::string, int64_t> &tables = {});

// `mask` and abs(i - j) < window (a sliding window: either alone where the other is absent,
// null / 0).
std::unique_ptr<Node> withWindow(std::unique_ptr<Node> mask, int64_t window);

// `node` as attn ops on rank-0 f32 tensors at the builder's insertion point, each name bound
// to its value in `values` (tensor<f32>; a per-head param's, its head's; a table's column c
// as `name[c]`); a boolean is 1 or 0.
mlir::Value build(mlir::OpBuilder &b, mlir::Location l, const Node &node,
                  const std::map<std::string, mlir::Value> &values);

// What an attn.fused_attention built from expressions computes (fusedAttention below).
struct AttentionRegions {
  const Node *score = nullptr; // a number over `base`, i, j and the names; null: `base` itself
  const Node *mask = nullptr;  // a condition over i, j and the names; null: no mask region
  double softcap = 0;          // > 0: cap * tanh(s / cap) of the score
  std::string base = "score";  // the name of scale * sum(q * k)
  float scale = 1.0f;
  // Names read from outside the op, its captures: scalars (tensor<f32>, tensor<1xf32>), or
  // tensor<Hxf32> that each head reads its element of (perHead).
  struct Capture {
    std::string name;
    mlir::Value value;
    bool perHead = false;
  };
  std::vector<Capture> captures;
  std::map<std::string, double> constants; // names of fixed scalars
  mlir::Value iOffset; // tensor<f32> added to i (a decoding step's position), or null
};

// The most columns a table may have: each is a capture of the regions and a step of the
// lookup's chain.
constexpr int64_t kMaxTableColumns = 256;

// A table [H, N] that the expressions read as name[h, index]: its N columns as the per-head
// captures name[0] ... name[N-1] of `r` (slices of the table, so that its gradient is theirs).
void addTable(mlir::OpBuilder &b, mlir::Location l, AttentionRegions &r, const std::string &name,
              mlir::Value table);

// attn.fused_attention of q [B, H, T, D], keys [B, H, S, D], values [B, H, S, Dv] under
// keyMask [B, S] (and `causal`) with the score and mask regions `r` builds; its output
// [B, H, T, Dv].
mlir::Value fusedAttention(mlir::OpBuilder &b, mlir::Location l, mlir::Value q, mlir::Value keys,
                           mlir::Value values, mlir::Value keyMask, bool causal,
                           const AttentionRegions &r);

// model.transformer.attention, read and checked: its learned scalars and its expressions.
struct Param {
  std::string name;
  double init = 0.0;
  bool alibi = false;   // init: alibi (per head): 2^(-8 (h + 1) / heads)
  bool perHead = false; // shape [heads]: one value per head, read as name[h]
  int64_t columns = 0;  // shape [heads, N]: a table of N per head, read as name[h, index]
  bool learn = true;    // false: a constant
};
struct AttentionMods {
  std::vector<Param> params;
  std::unique_ptr<Node> scoreMod, mask; // null where the spec writes none
  double softcap = 0.0;
  int64_t slidingWindow = 0;
};

// Every problem of the section goes to `problems`, at its key (a param's, at its part);
// what could be read is returned.
AttentionMods read(const Spec &spec, Problems &problems);

} // namespace attn::yaml::expr
