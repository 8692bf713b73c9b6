// The definitions of attn.layer_norm, attn.cross_entropy (and _grad) and attn.adam_update in
// double on the CPU, with the cases and checks that both tests of the GPU train kernels share:
// train-kernels-test.cpp (on a GPU) and emulated-train-kernels-test.cpp (the same kernels on
// tests/cuda/WarpEmulator.h, in CI). Each case's inputs are drawn here, in f32.
#ifndef ATTN_TESTS_CUDA_TRAINREFERENCE_H
#define ATTN_TESTS_CUDA_TRAINREFERENCE_H

#include "attn/cuda/Kernels.h"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <ostream>
#include <random>
#include <string>
#include <vector>

namespace attn::cuda::testing {

inline std::vector<float> randomFloats(size_t n, std::mt19937 &rng, float mean = 0.0f,
                                       float sigma = 1.0f) {
  std::normal_distribution<float> dist(mean, sigma);
  std::vector<float> v(n);
  for (float &x : v)
    x = dist(rng);
  return v;
}

// ||got - want|| / ||want|| (||got - want|| when want is 0); infinity for a non-finite element
// (outputs are poisoned with NaN before the kernels run).
template <typename Got>
double relativeL2(const std::vector<Got> &got, const std::vector<double> &want) {
  double num = 0, den = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    if (!std::isfinite(double(got[i])))
      return INFINITY;
    num += (double(got[i]) - want[i]) * (double(got[i]) - want[i]);
    den += want[i] * want[i];
  }
  return den == 0 ? std::sqrt(num) : std::sqrt(num / den);
}

// f32 kernels against double: rounding only.
constexpr double kTrainTolerance = 1e-5;

struct Checked {
  std::string name;
  double error;
};

// The failures among named errors (each against kTrainTolerance), after printing them.
inline std::vector<std::string> failuresOf(const char *what, const std::vector<Checked> &errors) {
  std::string line = std::string("    ") + what + ":";
  std::vector<std::string> failures;
  for (const Checked &c : errors) {
    char buf[64];
    std::snprintf(buf, sizeof buf, " %s %.2e", c.name.c_str(), c.error);
    line += buf;
    if (!(c.error <= kTrainTolerance))
      failures.push_back(std::string(what) + ": " + c.name + " relative error " +
                         std::to_string(c.error) +
                         (std::isinf(c.error) ? " (an element is not finite: unwritten?)" : ""));
  }
  std::printf("%s\n", line.c_str());
  return failures;
}

//===- layer norm ----------------------------------------------------------------------------===//

struct LayerNormCase {
  const char *name;
  int64_t rows, dim;
  float epsilon;
};
inline void PrintTo(const LayerNormCase &c, std::ostream *os) { *os << c.name; }

// Rows below, at and past the 64-row chunks of dgamma; widths below and off the 128 threads.
inline std::vector<LayerNormCase> layerNormCases() {
  return {{"narrow", 37, 70, 1e-5f},
          {"wide, off the block", 130, 300, 1e-5f},
          {"one long row", 1, 1000, 1e-3f}};
}

struct LayerNormProblem {
  LayerNormCase c;
  std::vector<float> x, gamma, beta, dy;
  std::vector<double> y, mean, rstd, dx, dgamma, dbeta;
};

inline LayerNormProblem makeLayerNorm(const LayerNormCase &c, std::mt19937 &rng) {
  const int64_t R = c.rows, D = c.dim;
  // An offset mean: a one-pass variance would lose digits here.
  LayerNormProblem p{c,
                     randomFloats(R * D, rng, 3.0f, 2.0f),
                     randomFloats(D, rng, 1.0f, 0.2f),
                     randomFloats(D, rng, 0.0f, 0.2f),
                     randomFloats(R * D, rng),
                     {},
                     {},
                     {},
                     {},
                     {},
                     {}};
  p.y.resize(R * D);
  p.mean.resize(R);
  p.rstd.resize(R);
  p.dx.resize(R * D);
  p.dgamma.assign(D, 0.0);
  p.dbeta.assign(D, 0.0);
  for (int64_t r = 0; r < R; ++r) {
    double mu = 0, var = 0;
    for (int64_t i = 0; i < D; ++i)
      mu += p.x[r * D + i];
    mu /= D;
    for (int64_t i = 0; i < D; ++i)
      var += (p.x[r * D + i] - mu) * (p.x[r * D + i] - mu);
    const double rs = 1.0 / std::sqrt(var / D + c.epsilon);
    p.mean[r] = mu;
    p.rstd[r] = rs;
    double a = 0, b = 0;
    for (int64_t i = 0; i < D; ++i) {
      const double xhat = (p.x[r * D + i] - mu) * rs, g = double(p.dy[r * D + i]) * p.gamma[i];
      p.y[r * D + i] = xhat * p.gamma[i] + p.beta[i];
      a += g;
      b += g * xhat;
      p.dgamma[i] += double(p.dy[r * D + i]) * xhat;
      p.dbeta[i] += p.dy[r * D + i];
    }
    for (int64_t i = 0; i < D; ++i) {
      const double xhat = (p.x[r * D + i] - mu) * rs, g = double(p.dy[r * D + i]) * p.gamma[i];
      p.dx[r * D + i] = rs * (g - a / D - xhat * b / D);
    }
  }
  return p;
}

struct LayerNormOutputs {
  std::vector<float> y, mean, rstd, dx, dgamma, dbeta;
};

inline std::vector<std::string> compare(const LayerNormProblem &p, const LayerNormOutputs &got) {
  return failuresOf("layer_norm", {{"y", relativeL2(got.y, p.y)},
                                   {"mean", relativeL2(got.mean, p.mean)},
                                   {"rstd", relativeL2(got.rstd, p.rstd)},
                                   {"dx", relativeL2(got.dx, p.dx)},
                                   {"dgamma", relativeL2(got.dgamma, p.dgamma)},
                                   {"dbeta", relativeL2(got.dbeta, p.dbeta)}});
}

//===- cross-entropy -------------------------------------------------------------------------===//

struct CrossEntropyCase {
  const char *name;
  int64_t rows, classes;
  CrossEntropyOptions options;
  bool noneContribute; // every label ignored: loss 0, no gradient
};
inline void PrintTo(const CrossEntropyCase &c, std::ostream *os) { *os << c.name; }

inline std::vector<CrossEntropyCase> crossEntropyCases() {
  return {{"plain", 33, 1000, {-1, 0.0f}, false},
          {"ignored and out-of-range labels, smoothing", 40, 257, {0, 0.1f}, false},
          {"no row contributes", 8, 50, {-1, 0.0f}, true}};
}

struct CrossEntropyProblem {
  CrossEntropyCase c;
  std::vector<float> logits;
  std::vector<int32_t> labels;
  float grad = 0.7f; // the loss's gradient
  double loss = 0;
  std::vector<double> dlogits;
};

inline CrossEntropyProblem makeCrossEntropy(const CrossEntropyCase &c, std::mt19937 &rng) {
  const int64_t R = c.rows, C = c.classes;
  CrossEntropyProblem p{c,   randomFloats(R * C, rng, 0.0f, 3.0f), std::vector<int32_t>(R), 0.7f,
                        0.0, std::vector<double>(R * C, 0.0)};
  std::uniform_int_distribution<int32_t> label(0, int32_t(C - 1));
  for (int64_t r = 0; r < R; ++r)
    p.labels[r] = c.noneContribute ? -1 : label(rng);
  if (!c.noneContribute && R > 3) {
    p.labels[1] = int32_t(c.options.ignoreIndex); // ignored
    p.labels[2] = int32_t(C);                     // out of range: ignored too
    p.labels[3] = -5;
  }
  const double e = c.options.labelSmoothing;
  auto valid = [&](int32_t l) { return l != c.options.ignoreIndex && l >= 0 && l < C; };
  double sum = 0;
  int64_t count = 0;
  std::vector<double> lse(R);
  for (int64_t r = 0; r < R; ++r) {
    double mx = -INFINITY, se = 0, sx = 0;
    for (int64_t i = 0; i < C; ++i)
      mx = std::max(mx, double(p.logits[r * C + i]));
    for (int64_t i = 0; i < C; ++i) {
      se += std::exp(p.logits[r * C + i] - mx);
      sx += p.logits[r * C + i];
    }
    lse[r] = mx + std::log(se);
    if (!valid(p.labels[r]))
      continue;
    sum += lse[r] - (1 - e) * p.logits[r * C + p.labels[r]] - e / C * sx;
    ++count;
  }
  p.loss = count ? sum / count : 0.0;
  for (int64_t r = 0; r < R && count; ++r)
    for (int64_t i = 0; valid(p.labels[r]) && i < C; ++i) {
      const double q = (i == p.labels[r] ? 1 - e : 0.0) + e / C;
      p.dlogits[r * C + i] = p.grad * (std::exp(p.logits[r * C + i] - lse[r]) - q) / count;
    }
  return p;
}

struct CrossEntropyOutputs {
  float loss;
  std::vector<float> dlogits;
};

inline std::vector<std::string> compare(const CrossEntropyProblem &p,
                                        const CrossEntropyOutputs &got) {
  return failuresOf("cross_entropy", {{"loss", relativeL2(std::vector<float>{got.loss}, {p.loss})},
                                      {"dlogits", relativeL2(got.dlogits, p.dlogits)}});
}

//===- Adam ----------------------------------------------------------------------------------===//

struct AdamCase {
  const char *name;
  int64_t n;
  AdamOptions options;
  float lr;
  int64_t step;
};
inline void PrintTo(const AdamCase &c, std::ostream *os) { *os << c.name; }

inline std::vector<AdamCase> adamCases() {
  return {{"adam, L2 decay", 1000, {0.9f, 0.999f, 1e-8f, 0.01f, false}, 1e-3f, 3},
          {"adamw", 777, {0.9f, 0.98f, 1e-6f, 0.1f, true}, 5e-4f, 1},
          {"plain, many blocks", 70000, {}, 1e-2f, 10}};
}

struct AdamProblem {
  AdamCase c;
  std::vector<float> param, grad, m, v;
  std::vector<double> newParam, newM, newV;
};

inline AdamProblem makeAdam(const AdamCase &c, std::mt19937 &rng) {
  AdamProblem p{c,
                randomFloats(c.n, rng),
                randomFloats(c.n, rng, 0.0f, 0.1f),
                randomFloats(c.n, rng, 0.0f, 0.01f),
                randomFloats(c.n, rng, 0.0f, 1e-3f),
                {},
                {},
                {}};
  for (float &x : p.v)
    x = std::fabs(x);
  const AdamOptions &o = c.options;
  const double bc1 = 1 - std::pow(double(o.beta1), double(c.step));
  const double bc2 = 1 - std::pow(double(o.beta2), double(c.step));
  for (int64_t i = 0; i < c.n; ++i) {
    double g = p.grad[i];
    if (!o.decoupled)
      g += double(o.weightDecay) * p.param[i];
    const double m = o.beta1 * double(p.m[i]) + (1 - double(o.beta1)) * g;
    const double v = o.beta2 * double(p.v[i]) + (1 - double(o.beta2)) * g * g;
    double step = c.lr * (m / bc1) / (std::sqrt(v / bc2) + o.epsilon);
    if (o.decoupled)
      step += double(c.lr) * o.weightDecay * p.param[i];
    p.newParam.push_back(p.param[i] - step);
    p.newM.push_back(m);
    p.newV.push_back(v);
  }
  return p;
}

struct AdamOutputs {
  std::vector<float> param, m, v;
};

inline std::vector<std::string> compare(const AdamProblem &p, const AdamOutputs &got) {
  return failuresOf("adam_update", {{"param", relativeL2(got.param, p.newParam)},
                                    {"m", relativeL2(got.m, p.newM)},
                                    {"v", relativeL2(got.v, p.newV)}});
}

} // namespace attn::cuda::testing

#endif // ATTN_TESTS_CUDA_TRAINREFERENCE_H
