// Fused against unfused attention. Each case is one attention written twice with the same
// parameters: as attn.fused_attention over [B, H, T, D] with its score region (what the
// generated kernels and the derived backward compute), and as the unfused ops it stands for
// (attn.attention_scores of the family, attn.local_window, attn.attention) over the B H T query
// rows with the keys repeated per query, the causal mask as a constant. Both go through
// attn-autodiff and the JIT; the loss sum(o^2)/2 (+ sum(w^2)/2 with weights) and every gradient
// must agree within 1e-5 of each tensor's largest magnitude (expectClose). The Transformer's family (`sdpa`)
// is attn.scaled_dot_product_attention itself against the fused op with a scaled-dot score,
// which runs as the FlashAttention-2 kernels. The grid is T in {1, 7, 33, 129} and S in
// {1, 5, 127, 513} with an odd head width, padded keys and causal masks, and a batch row
// whose keys are all padding (rows without keys are zero rows in every form); each family
// also once with the fused op made by attn-fuse-attention from the unfused ops.
#include "compiler/Driver/Session.h"
#include "compiler/Transforms/Passes.h"
#include "dialect/AttnOps.h"

#include "attn/Program.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <iomanip>
#include <map>
#include <sstream>

namespace {

constexpr double kRelTol = 1e-5;
constexpr int64_t kBatch = 2, kHeads = 2, kWidth = 5, kValueWidth = 3, kQueryWidth = 4;
constexpr int64_t kWindow = 2, kSlide = 4;

enum class Family { Dot, ScaledDot, General, Additive, Cosine, LocalMonotonic, LocalPredictive, Sdpa };

const char *name(Family f) {
  switch (f) {
  case Family::Dot: return "dot";
  case Family::ScaledDot: return "scaled_dot";
  case Family::General: return "general";
  case Family::Additive: return "additive";
  case Family::Cosine: return "cosine";
  case Family::LocalMonotonic: return "local_m";
  case Family::LocalPredictive: return "local_p";
  case Family::Sdpa: return "sdpa";
  }
  return "";
}

struct Case {
  Family family;
  int64_t T, S;
  bool causal, weights;
  bool emptyRow = false; // the second batch row's keys all padding: rows without keys
  // A mask region on the fused op: a query sees only the kSlide keys up to its own position
  // (i + S - T), a sliding window; unfused, the same as a constant mask.
  bool sliding = false;
  std::string label() const {
    return std::string(name(family)) + "_T" + std::to_string(T) + "_S" + std::to_string(S) +
           (causal ? "_causal" : "") + (weights ? "_weights" : "") +
           (emptyRow ? "_empty_row" : "") + (sliding ? "_sliding" : "");
  }
  bool local() const {
    return family == Family::LocalMonotonic || family == Family::LocalPredictive;
  }
  // The score kind of attn.attention_scores (local attention scores with a dot here).
  const char *kind() const {
    return family == Family::ScaledDot ? "scaled_dot"
           : family == Family::General ? "general"
           : family == Family::Additive ? "additive"
           : family == Family::Cosine   ? "cosine"
                                        : "dot";
  }
};

std::string shape(std::initializer_list<int64_t> dims) {
  std::string s = "tensor<";
  for (int64_t d : dims)
    s += std::to_string(d) + "x";
  return s + "f32>";
}

// The second batch row's last third of keys is padding (all of them with `emptyRow`).
std::vector<float> keyMask(const Case &c) {
  int64_t S = c.S;
  std::vector<float> m(kBatch * S, 1.0f);
  for (int64_t j = c.emptyRow ? 0 : S - S / 3; j < S; ++j)
    m[S + j] = 0.0f;
  return m;
}

// A constant of any shape, as MLIR's hex form of its raw little-endian floats.
std::string dense(const std::vector<float> &values, const std::string &type) {
  std::string hex = "0x";
  const char *digits = "0123456789ABCDEF";
  for (float v : values) {
    uint32_t bits;
    std::memcpy(&bits, &v, 4);
    for (int byte = 0; byte < 4; ++byte, bits >>= 8) {
      hex += digits[(bits >> 4) & 15];
      hex += digits[bits & 15];
    }
  }
  return "dense<\"" + hex + "\"> : " + type;
}

// Parameters of both forms: q [B, H, T, Q or D], k [B, H, S, D], v [B, H, S, Dv], the family's
// weight, and for local attention the centres %p (spread over the keys; learned offsets for
// local-p).
void params(const Case &c, std::ostringstream &o) {
  int64_t B = kBatch, H = kHeads, T = c.T, S = c.S, D = kWidth;
  int64_t Q = c.family == Family::General ? kQueryWidth : D;
  o << "  %q = attn.param \"q\" {scale = 1.0 : f32} : " << shape({B, H, T, Q}) << "\n"
    << "  %k = attn.param \"k\" {scale = 1.0 : f32} : " << shape({B, H, S, D}) << "\n"
    << "  %v = attn.param \"v\" {scale = 1.0 : f32} : " << shape({B, H, S, kValueWidth}) << "\n";
  if (c.family == Family::General)
    o << "  %w = attn.param \"w\" {scale = 0.5 : f32} : " << shape({Q, D}) << "\n";
  if (c.family == Family::Additive)
    o << "  %w = attn.param \"w\" {scale = 1.0 : f32} : " << shape({D}) << "\n";
  if (c.family == Family::Cosine)
    o << "  %w = attn.param \"w\" {scale = 3.0 : f32} : " << shape({1}) << "\n";
  if (c.local()) {
    std::vector<float> centres;
    for (int64_t i = 0; i < B * H * T; ++i)
      centres.push_back(0.3f + (float)((i % T) * (S - 1)) / (float)std::max<int64_t>(T - 1, 1));
    if (c.family == Family::LocalPredictive) {
      o << "  %p0 = attn.constant " << dense(centres, shape({B, H, T})) << "\n"
        << "  %dp = attn.param \"dp\" {scale = 0.5 : f32} : " << shape({B, H, T}) << "\n"
        << "  %p = attn.add %p0, %dp : " << shape({B, H, T}) << ", " << shape({B, H, T}) << "\n";
    } else {
      o << "  %p = attn.constant " << dense(centres, shape({B, H, T})) << "\n";
    }
  }
}

// loss = sum(o^2) / 2 (+ sum(w^2) / 2): every output element reaches it.
void lossOf(std::ostringstream &o, const std::string &value, const std::string &type, int rank,
            const std::string &into) {
  std::string axes;
  for (int a = 0; a < rank; ++a)
    axes += (a ? ", " : "") + std::to_string(a);
  o << "  %" << into << "_sq = attn.mul %" << value << ", %" << value << " : " << type << ", "
    << type << "\n"
    << "  %" << into << " = attn.reduce_sum %" << into << "_sq {axes = array<i64: " << axes
    << ">} : " << type << "\n";
}

std::string finish(const Case &c, std::ostringstream &o, const std::string &out,
                   const std::string &weights) {
  int64_t B = kBatch, H = kHeads, T = c.T, S = c.S;
  lossOf(o, out, shape({B, H, T, kValueWidth}), 4, "lo");
  std::string total = "lo";
  if (c.weights) {
    lossOf(o, weights, shape({B, H, T, S}), 4, "lw");
    o << "  %both = attn.add %lo, %lw : tensor<f32>, tensor<f32>\n";
    total = "both";
  }
  o << "  %half = attn.constant dense<0.5> : tensor<f32>\n"
    << "  %loss = attn.mul %" << total << ", %half : tensor<f32>, tensor<f32>\n"
    << "  return %loss : tensor<f32>\n}\n";
  return o.str();
}

// The Transformer's op, which decomposes into batched matmuls, the masks and a softmax.
std::string scaledDotProduct(const Case &c) {
  int64_t B = kBatch, H = kHeads, T = c.T, S = c.S, D = kWidth, Dv = kValueWidth;
  std::ostringstream o;
  o << "func.func @loss() -> tensor<f32> {\n";
  params(c, o);
  o << "  %m = attn.constant " << dense(keyMask(c), shape({B, S})) << "\n"
    << "  %o, %wts = attn.scaled_dot_product_attention %q, %k, %v, %m"
    << (c.causal ? " {causal = true}" : "") << " : " << shape({B, H, T, D}) << ", "
    << shape({B, H, S, D}) << ", " << shape({B, H, S, Dv}) << ", " << shape({B, S}) << "\n";
  return finish(c, o, "o", "wts");
}

// The unfused ops over R = B H T query rows, keys and values repeated per query.
std::string unfused(const Case &c) {
  if (c.family == Family::Sdpa)
    return scaledDotProduct(c);
  int64_t B = kBatch, H = kHeads, T = c.T, S = c.S, D = kWidth, Dv = kValueWidth;
  int64_t R = B * H * T, Q = c.family == Family::General ? kQueryWidth : D;
  std::ostringstream o;
  o << "func.func @loss() -> tensor<f32> {\n";
  params(c, o);
  auto repeat = [&](const char *x, int64_t width) {
    o << "  %" << x << "1 = attn.reshape %" << x << " : " << shape({B, H, S, width}) << " -> "
      << shape({B, H, 1, S, width}) << "\n"
      << "  %" << x << "2 = attn.broadcast %" << x << "1 : " << shape({B, H, 1, S, width})
      << " -> " << shape({B, H, T, S, width}) << "\n"
      << "  %" << x << "r = attn.reshape %" << x << "2 : " << shape({B, H, T, S, width}) << " -> "
      << shape({R, S, width}) << "\n";
  };
  o << "  %qr = attn.reshape %q : " << shape({B, H, T, Q}) << " -> " << shape({R, Q}) << "\n";
  repeat("k", D);
  repeat("v", Dv);
  std::vector<float> keys = keyMask(c), rows;
  for (int64_t b = 0; b < B; ++b)
    for (int64_t r = 0; r < H * T; ++r)
      for (int64_t j = 0; j < S; ++j) {
        int64_t i = r % T;
        bool visible = (!c.causal || j <= i + S - T) && (!c.sliding || i + S - T - j < kSlide);
        rows.push_back(visible ? keys[b * S + j] : 0.0f);
      }
  o << "  %m = attn.constant " << dense(rows, shape({R, S})) << "\n";
  o << "  %e = attn.attention_scores " << c.kind() << " %qr, %kr"
    << (c.family == Family::General || c.family == Family::Additive || c.family == Family::Cosine
            ? ", %w"
            : "")
    << " : " << shape({R, Q}) << ", " << shape({R, S, D});
  if (c.family == Family::General)
    o << ", " << shape({Q, D});
  if (c.family == Family::Additive)
    o << ", " << shape({D});
  if (c.family == Family::Cosine)
    o << ", " << shape({1});
  o << "\n";
  std::string mask = "%m", weighting;
  if (c.local()) {
    o << "  %pr = attn.reshape %p : " << shape({B, H, T}) << " -> " << shape({R, 1}) << "\n"
      << "  %wm, %g = attn.local_window %pr, %m {window = " << kWindow << " : i64} : "
      << shape({R, 1}) << ", " << shape({R, S}) << "\n";
    mask = "%wm";
    if (c.family == Family::LocalPredictive)
      weighting = " weighting(%g : " + shape({R, S}) + ")";
  }
  o << "  %c, %a = attn.attention %e, " << mask << ", %vr" << weighting << " : "
    << shape({R, S}) << ", " << shape({R, S}) << ", " << shape({R, S, Dv}) << "\n"
    << "  %o = attn.reshape %c : " << shape({R, Dv}) << " -> " << shape({B, H, T, Dv}) << "\n"
    << "  %wts = attn.reshape %a : " << shape({R, S}) << " -> " << shape({B, H, T, S}) << "\n";
  return finish(c, o, "o", "wts");
}

// x / sqrt(sum x^2 + 1e-12) over the last axis of a [B, H, N, D] tensor.
void normalise(std::ostringstream &o, const std::string &x, int64_t n) {
  std::string t = shape({kBatch, kHeads, n, kWidth}), r = shape({kBatch, kHeads, n, 1});
  o << "  %" << x << "sq = attn.mul %" << x << ", %" << x << " : " << t << ", " << t << "\n"
    << "  %" << x << "ss = attn.reduce_sum %" << x << "sq {axes = array<i64: 3>, keepdims = true} : "
    << t << "\n"
    << "  %" << x << "eps = attn.constant dense<1.0e-12> : tensor<f32>\n"
    << "  %" << x << "se = attn.add %" << x << "ss, %" << x << "eps : " << r << ", tensor<f32>\n"
    << "  %" << x << "n = attn.sqrt %" << x << "se : " << r << "\n"
    << "  %" << x << "u = attn.div %" << x << ", %" << x << "n : " << t << ", " << r << "\n";
}

// The fused op over [B, H, T, D], its score region written for the family.
std::string fused(const Case &c) {
  int64_t B = kBatch, H = kHeads, T = c.T, S = c.S, D = kWidth, Dv = kValueWidth;
  std::ostringstream o;
  o << "func.func @loss() -> tensor<f32> {\n";
  params(c, o);
  std::string q = "%q", k = "%k";
  if (c.family == Family::General) {
    o << "  %qr = attn.reshape %q : " << shape({B, H, T, kQueryWidth}) << " -> "
      << shape({B * H * T, kQueryWidth}) << "\n"
      << "  %qw = attn.matmul %qr, %w : " << shape({B * H * T, kQueryWidth}) << ", "
      << shape({kQueryWidth, D}) << "\n"
      << "  %qp = attn.reshape %qw : " << shape({B * H * T, D}) << " -> " << shape({B, H, T, D})
      << "\n";
    q = "%qp";
  }
  if (c.family == Family::Cosine) {
    normalise(o, "q", T);
    normalise(o, "k", S);
    q = "%qu";
    k = "%ku";
  }
  o << "  %m = attn.constant " << dense(keyMask(c), shape({B, S})) << "\n";
  std::string captures, captureArg, attrs;
  if (c.family == Family::Additive) {
    captures = " captures(%w : " + shape({D}) + ")";
    captureArg = ", %wa: " + shape({D});
  }
  if (c.family == Family::Cosine) {
    captures = " captures(%w : " + shape({1}) + ")";
    captureArg = ", %wa: " + shape({1});
  }
  std::vector<std::string> a;
  if (c.causal)
    a.push_back("causal = true");
  if (c.local())
    a.push_back("window = " + std::to_string(kWindow) + " : i64");
  if (c.family == Family::LocalPredictive)
    a.push_back("gaussian");
  if (c.weights)
    a.push_back("with_weights");
  for (size_t i = 0; i < a.size(); ++i)
    attrs += (i ? ", " : " {") + a[i] + (i + 1 == a.size() ? "}" : "");
  std::string row = shape({D});
  o << "  %o, %lse" << (c.weights ? ", %wts" : "") << " = attn.fused_attention " << q << ", "
    << k << ", %v, %m" << (c.local() ? " center(%p : " + shape({B, H, T}) + ")" : "")
    << captures << attrs << " : " << shape({B, H, T, D}) << ", " << shape({B, H, S, D}) << ", "
    << shape({B, H, S, Dv}) << ", " << shape({B, S}) << " -> " << shape({B, H, T, Dv}) << ", "
    << shape({B, H, T}) << (c.weights ? ", " + shape({B, H, T, S}) : "") << " {\n"
    << "  ^bb0(%qi: " << row << ", %kj: " << row << ", %i: tensor<f32>, %j: tensor<f32>"
    << captureArg << "):\n";
  if (c.family == Family::Additive) {
    o << "    %s = attn.add %qi, %kj : " << row << ", " << row << "\n"
      << "    %t = attn.tanh %s : " << row << "\n"
      << "    %tv = attn.mul %t, %wa : " << row << ", " << row << "\n"
      << "    %e = attn.reduce_sum %tv {axes = array<i64: 0>} : " << row << "\n";
  } else {
    o << "    %pr = attn.mul %qi, %kj : " << row << ", " << row << "\n"
      << "    %d = attn.reduce_sum %pr {axes = array<i64: 0>} : " << row << "\n";
    if (c.family == Family::ScaledDot || c.family == Family::Sdpa)
      o << "    %sc = attn.constant dense<" << std::setprecision(9) << 1.0f / std::sqrt((float)D)
        << "> : tensor<f32>\n"
        << "    %e = attn.mul %d, %sc : tensor<f32>, tensor<f32>\n";
    if (c.family == Family::Cosine)
      o << "    %dt = attn.mul %d, %wa : tensor<f32>, " << shape({1}) << "\n"
        << "    %e = attn.reshape %dt : " << shape({1}) << " -> tensor<f32>\n";
  }
  bool named = c.family == Family::Additive || c.family == Family::ScaledDot ||
               c.family == Family::Sdpa || c.family == Family::Cosine;
  o << "    attn.yield " << (named ? "%e" : "%d") << " : tensor<f32>\n  }";
  if (c.sliding) // allowed where kSlide - 0.5 - (i + S - T - j) > 0
    o << " mask {\n  ^bb0(%i: tensor<f32>, %j: tensor<f32>" << captureArg << "):\n"
      << "    %ij = attn.sub %i, %j : tensor<f32>, tensor<f32>\n"
      << "    %room = attn.constant dense<" << (float)kSlide - 0.5f - (float)(S - T)
      << "> : tensor<f32>\n"
      << "    %left = attn.sub %room, %ij : tensor<f32>, tensor<f32>\n"
      << "    %in = attn.step %left : tensor<f32>\n"
      << "    attn.yield %in : tensor<f32>\n  }";
  o << "\n";
  return finish(c, o, "o", "wts");
}

struct Result {
  std::map<std::string, std::vector<float>> grads; // by parameter name; "loss" too
};

// `module` (text) differentiated (after attn-fuse-attention with `fuse`), JIT-compiled
// unfused, run on `params` (by name; the seed's where none is given yet, then recorded).
Result run(const std::string &text, bool fuse, std::map<std::string, attn::Tensor> &params,
           const std::string &label) {
  attn::driver::SessionOptions options;
  options.fuse = false; // the stages after autodiff fuse nothing more
  attn::driver::Session session(options);
  mlir::MLIRContext &context = session.context();
  auto module = mlir::parseSourceString<mlir::ModuleOp>(text, &context);
  EXPECT_TRUE(module) << label << ": the module does not parse:\n" << text.substr(0, 4000);
  if (!module)
    return {};
  mlir::PassManager pm(&context);
  if (fuse)
    pm.addPass(mlir::attn::createAttnFuseAttention());
  pm.addPass(mlir::attn::createAttnAutodiff());
  EXPECT_TRUE(mlir::succeeded(pm.run(*module))) << label;
  if (fuse) {
    int fusedOps = 0;
    module->walk([&](mlir::attn::FusedAttentionOp) { ++fusedOps; });
    EXPECT_GT(fusedOps, 0) << label << ": attn-fuse-attention fused nothing";
  }
  session.setModule(std::move(module), "attention_" + label);
  std::unique_ptr<attn::driver::Model> model = session.loadModel(/*seed=*/3);
  EXPECT_TRUE(model) << label << " does not compile";
  if (!model)
    return {};
  const attn_program_info &info = model->program->info();
  for (int p = 0; p < info.num_params; ++p) {
    auto [it, fresh] = params.try_emplace(info.params[p].name, model->params[p]);
    if (!fresh)
      model->params[p] = it->second;
  }
  std::vector<attn::Tensor> out = model->program->call("loss_grad", model->params, {});
  const attn_entry_info &entry = model->program->entry("loss_grad");
  Result r;
  for (int o = 0; o < entry.num_outputs; ++o) {
    std::string n = entry.outputs[o].name;
    if (n.rfind("grad:", 0) == 0)
      n = n.substr(5);
    r.grads[n].assign(out[o].data<float>(), out[o].data<float>() + out[o].numel());
  }
  return r;
}

// Within kRelTol of the tensor's largest magnitude, or of a tenth of the largest of all the
// case's tensors where that is larger: a gradient that is exactly 0 by cancellation (a softmax
// over one key has no score gradient) comes out of f32 arithmetic as the rounding error of the
// terms that cancel, which are of the other gradients' size. A weight's gradient sums `terms`
// products (one per batch row, query and key); two f32 sums of n terms in different orders
// differ by about sqrt(n) roundings, so past 4096 terms the tolerance grows as sqrt(n / 4096).
void expectClose(const Result &fused, const Result &reference, const std::string &label,
                 int64_t terms) {
  const double tol = kRelTol * std::max(1.0, std::sqrt(terms / 4096.0));
  ASSERT_EQ(fused.grads.size(), reference.grads.size()) << label;
  float overall = 0.0f;
  for (const auto &[n, want] : reference.grads)
    for (float x : want)
      overall = std::max(overall, std::fabs(x));
  for (const auto &[n, want] : reference.grads) {
    auto it = fused.grads.find(n);
    ASSERT_NE(it, fused.grads.end()) << label << ": no gradient for " << n;
    const std::vector<float> &got = it->second;
    ASSERT_EQ(got.size(), want.size()) << label << " " << n;
    float scale = 0.0f;
    for (float x : want)
      scale = std::max(scale, std::fabs(x));
    int bad = 0;
    for (size_t i = 0; i < want.size() && bad < 5; ++i)
      if (!(std::fabs(got[i] - want[i]) <= tol * std::max({scale, 0.1f * overall, 1e-3f}))) {
        ++bad;
        ADD_FAILURE() << label << " " << n << "[" << i << "]: fused " << got[i] << ", unfused "
                      << want[i] << " (largest " << scale << ")";
      }
  }
}

class FusedAttention : public ::testing::TestWithParam<Case> {};

TEST_P(FusedAttention, MatchesTheUnfusedOps) {
  const Case &c = GetParam();
  std::map<std::string, attn::Tensor> params;
  Result reference = run(unfused(c), /*fuse=*/false, params, c.label() + "_unfused");
  Result native = run(fused(c), /*fuse=*/false, params, c.label() + "_fused");
  expectClose(native, reference, c.label(), kBatch * c.T * c.S);
}

// attn-fuse-attention's own regions (and its query projection and normalisation) for each
// family, against the same unfused ops.
TEST_P(FusedAttention, TheFusionPassMatchesTheUnfusedOps) {
  const Case &c = GetParam();
  if (c.T > 7 || c.S > 127)
    GTEST_SKIP() << "the pass is checked on the smaller sizes";
  std::map<std::string, attn::Tensor> params;
  Result reference = run(unfused(c), /*fuse=*/false, params, c.label() + "_unfused");
  Result pass = run(unfused(c), /*fuse=*/true, params, c.label() + "_pass");
  expectClose(pass, reference, c.label(), kBatch * c.T * c.S);
}

std::vector<Case> cases() {
  std::vector<Case> all;
  for (int64_t T : {1, 7, 33, 129})
    for (int64_t S : {1, 5, 127, 513}) {
      all.push_back({Family::Additive, T, S, /*causal=*/false, /*weights=*/T <= 7});
      if (T <= S)
        all.push_back({Family::ScaledDot, T, S, /*causal=*/true, /*weights=*/false});
      if (T <= S) // the op's causal mask needs as many keys as queries
        all.push_back({Family::Sdpa, T, S, /*causal=*/true, /*weights=*/false});
    }
  all.push_back({Family::Sdpa, 7, 127, /*causal=*/false, /*weights=*/false});
  all.push_back({Family::Sdpa, 5, 7, /*causal=*/true, /*weights=*/true});
  // Rows without keys are zero rows, fused (flash kernels, generated kernel) and unfused.
  all.push_back({Family::Sdpa, 7, 127, /*causal=*/false, /*weights=*/false, /*emptyRow=*/true});
  all.push_back({Family::Sdpa, 5, 7, /*causal=*/true, /*weights=*/true, /*emptyRow=*/true});
  all.push_back({Family::Additive, 7, 5, /*causal=*/false, /*weights=*/true, /*emptyRow=*/true});
  // A mask region (a sliding window of kSlide keys): the generated kernels, also for a dot.
  for (auto [T, S] : {std::pair<int64_t, int64_t>{7, 127}, {33, 33}})
    for (Family f : {Family::Dot, Family::Additive})
      all.push_back({f, T, S, /*causal=*/true, /*weights=*/f == Family::Additive,
                     /*emptyRow=*/false, /*sliding=*/true});
  // Every family over the whole grid (weights on the smaller query counts), dot also causal.
  for (Family f : {Family::Dot, Family::General, Family::Cosine, Family::LocalMonotonic,
                   Family::LocalPredictive})
    for (int64_t T : {1, 7, 33, 129})
      for (int64_t S : {1, 5, 127, 513}) {
        bool weights = T <= 7 && (f == Family::LocalPredictive || f == Family::Dot);
        all.push_back({f, T, S, /*causal=*/false, weights});
        if (f == Family::Dot && T <= S)
          all.push_back({f, T, S, /*causal=*/true, /*weights=*/T <= 7});
      }
  return all;
}

INSTANTIATE_TEST_SUITE_P(Families, FusedAttention, ::testing::ValuesIn(cases()),
                         [](const auto &info) { return info.param.label(); });

} // namespace
