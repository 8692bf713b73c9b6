// One recurrent step of attn.rnn_cell, attn.lstm_cell and attn.gru_cell's three forms in
// double on the CPU,
// with the cases and checks that both tests of the GPU recurrent kernels share:
// recurrent-kernels-test.cpp (on a GPU) and emulated-recurrent-kernels-test.cpp (the same
// kernels on tests/cuda/WarpEmulator.h, in CI).
//
// The forward is the cell's equations (docs/recurrent.md). The gradients are not derived by
// hand a second time: they are central differences of that forward, on the objective
// L = sum(dh * h) [+ sum(dcNext * c)], so the kernels' backward is checked against the
// forward's definition. Each case's inputs are drawn here, in f32.
#ifndef ATTN_TESTS_CUDA_RECURRENTREFERENCE_H
#define ATTN_TESTS_CUDA_RECURRENTREFERENCE_H

#include "TrainReference.h"

#include "attn/cuda/Recurrent.h"

#include <functional>
#include <map>

namespace attn::cuda::testing {

enum class Cell { Rnn, Lstm, LstmPeephole, Gru, GruMinimal, GruSeed };

struct CellCase {
  const char *name;
  Cell cell;
  int64_t batch, hidden;
};

// gtest's name for a case in failure messages.
inline void PrintTo(const CellCase &c, std::ostream *os) { *os << c.name; }

// Hidden sizes below, at and past one block of 128 threads, and not multiples of 32.
inline std::vector<CellCase> cellCases() {
  return {{"rnn 3x20", Cell::Rnn, 3, 20},
          {"rnn 2x130", Cell::Rnn, 2, 130},
          {"lstm 3x20", Cell::Lstm, 3, 20},
          {"lstm 2x130", Cell::Lstm, 2, 130},
          {"lstm peephole 5x33", Cell::LstmPeephole, 5, 33},
          {"gru 4x33", Cell::Gru, 4, 33},
          {"gru 2x150", Cell::Gru, 2, 150},
          {"gru minimal 3x40", Cell::GruMinimal, 3, 40},
          {"gru seed 3x24", Cell::GruSeed, 3, 24},
          {"gru seed 4x40", Cell::GruSeed, 4, 40}};
}

// Named f32 tensors, row-major.
using Tensors = std::map<std::string, std::vector<float>>;

struct CellProblem {
  CellCase c;
  // Inputs: rnn z [B, H]; lstm z [B, 4H], cPrev [B, H], peephole [3, H]; gru a, bh [B, 3H]; gru
  // minimal a, bh [B, 2H]; gru seed a [B, 3H], bur [B, 2H], whc [H, H] (W_hh[:, c]), bhc [H]; all
  // hPrev [B, H] (but the LSTM's, whose h<t-1> is in z) and dh [B, H]; lstm dcNext [B, H].
  Tensors in;
  // The definition's outputs: h (lstm: and c) and the gradients of L with respect to each
  // differentiable input, named "d" + its name.
  std::map<std::string, std::vector<double>> want;
};

namespace detail {

inline double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

using Vars = std::map<std::string, std::vector<double>>;

// The cell's forward: h (and the LSTM's c) from the inputs.
inline Vars forward(Cell cell, int64_t B, int64_t H, const Vars &in) {
  Vars out;
  std::vector<double> &h = out["h"];
  h.assign(B * H, 0.0);
  auto at = [&](const char *name, int64_t i) { return in.at(name)[i]; };
  if (cell == Cell::Rnn) {
    for (int64_t e = 0; e < B * H; ++e)
      h[e] = std::tanh(at("z", e));
    return out;
  }
  if (cell == Cell::Lstm || cell == Cell::LstmPeephole) {
    std::vector<double> &c = out["c"];
    c.assign(B * H, 0.0);
    const bool peep = cell == Cell::LstmPeephole;
    for (int64_t b = 0; b < B; ++b)
      for (int64_t u = 0; u < H; ++u) {
        auto z = [&](int k) { return at("z", b * 4 * H + k * H + u); };
        auto p = [&](int k) { return peep ? at("peephole", k * H + u) : 0.0; };
        const double cp = at("cPrev", b * H + u);
        const double i = sigmoid(z(0) + p(0) * cp), f = sigmoid(z(1) + p(1) * cp),
                     g = std::tanh(z(2));
        const double cn = f * cp + i * g;
        c[b * H + u] = cn;
        h[b * H + u] = sigmoid(z(3) + p(2) * cn) * std::tanh(cn);
      }
    return out;
  }
  if (cell == Cell::Gru) {
    for (int64_t b = 0; b < B; ++b)
      for (int64_t u = 0; u < H; ++u) {
        auto a = [&](int k) { return at("a", b * 3 * H + k * H + u); };
        auto bh = [&](int k) { return at("bh", b * 3 * H + k * H + u); };
        const double r = sigmoid(a(0) + bh(0)), z = sigmoid(a(1) + bh(1));
        const double n = std::tanh(a(2) + r * bh(2));
        h[b * H + u] = (1 - z) * n + z * at("hPrev", b * H + u);
      }
    return out;
  }
  if (cell == Cell::GruMinimal) {
    for (int64_t b = 0; b < B; ++b)
      for (int64_t u = 0; u < H; ++u) {
        auto a = [&](int k) { return at("a", b * 2 * H + k * H + u); };
        auto bh = [&](int k) { return at("bh", b * 2 * H + k * H + u); };
        const double uu = sigmoid(a(0) + bh(0)), cc = std::tanh(a(1) + bh(1));
        h[b * H + u] = uu * cc + (1 - uu) * at("hPrev", b * H + u);
      }
    return out;
  }
  // The seed's form: the candidate reads (r h<t-1>) W_hh[:, c].
  for (int64_t b = 0; b < B; ++b) {
    std::vector<double> rh(H);
    for (int64_t u = 0; u < H; ++u)
      rh[u] = sigmoid(at("a", b * 3 * H + H + u) + at("bur", b * 2 * H + H + u)) *
              at("hPrev", b * H + u);
    for (int64_t u = 0; u < H; ++u) {
      double bc = at("bhc", u);
      for (int64_t k = 0; k < H; ++k)
        bc += rh[k] * at("whc", k * H + u);
      const double uu = sigmoid(at("a", b * 3 * H + u) + at("bur", b * 2 * H + u));
      const double cc = std::tanh(at("a", b * 3 * H + 2 * H + u) + bc);
      h[b * H + u] = uu * cc + (1 - uu) * at("hPrev", b * H + u);
    }
  }
  return out;
}

// L = sum(dh * h) + sum(dcNext * c).
inline double objective(Cell cell, int64_t B, int64_t H, const Vars &in) {
  Vars out = forward(cell, B, H, in);
  double l = 0;
  for (int64_t i = 0; i < B * H; ++i) {
    l += in.at("dh")[i] * out.at("h")[i];
    if (out.count("c"))
      l += in.at("dcNext")[i] * out.at("c")[i];
  }
  return l;
}

} // namespace detail

inline CellProblem makeCellProblem(const CellCase &c, std::mt19937 &rng) {
  const int64_t B = c.batch, H = c.hidden;
  CellProblem p{c, {}, {}};
  std::vector<std::string> differentiable;
  auto draw = [&](const char *name, size_t n, float sigma, bool diff) {
    p.in[name] = randomFloats(n, rng, 0.0f, sigma);
    if (diff)
      differentiable.push_back(name);
  };
  switch (c.cell) {
  case Cell::Rnn:
    draw("z", B * H, 1.0f, true);
    break;
  case Cell::Lstm:
  case Cell::LstmPeephole:
    draw("z", B * 4 * H, 1.0f, true);
    draw("cPrev", B * H, 1.0f, true);
    if (c.cell == Cell::LstmPeephole)
      draw("peephole", 3 * H, 0.5f, true);
    draw("dcNext", B * H, 1.0f, false);
    break;
  case Cell::Gru:
    draw("a", B * 3 * H, 1.0f, true);
    draw("bh", B * 3 * H, 1.0f, true);
    draw("hPrev", B * H, 1.0f, true);
    break;
  case Cell::GruMinimal:
    draw("a", B * 2 * H, 1.0f, true);
    draw("bh", B * 2 * H, 1.0f, true);
    draw("hPrev", B * H, 1.0f, true);
    break;
  case Cell::GruSeed:
    draw("a", B * 3 * H, 1.0f, true);
    draw("bur", B * 2 * H, 1.0f, true);
    draw("hPrev", B * H, 1.0f, true);
    draw("whc", H * H, float(1.0 / std::sqrt(double(H))), true);
    draw("bhc", H, 0.5f, false);
    break;
  }
  draw("dh", B * H, 1.0f, false);

  detail::Vars vars;
  for (const auto &[name, v] : p.in)
    vars[name].assign(v.begin(), v.end());
  for (auto &[name, v] : detail::forward(c.cell, B, H, vars))
    p.want[name] = v;
  // Central differences: the objective is smooth, and with a step of 1e-5 in double both the
  // truncation (~1e-10) and the cancellation (~1e-11) stay far below f32's rounding.
  const double step = 1e-5;
  for (const std::string &name : differentiable) {
    std::vector<double> &x = vars[name], &g = p.want["d" + name];
    g.assign(x.size(), 0.0);
    for (size_t i = 0; i < x.size(); ++i) {
      const double x0 = x[i];
      x[i] = x0 + step;
      const double up = detail::objective(c.cell, B, H, vars);
      x[i] = x0 - step;
      const double down = detail::objective(c.cell, B, H, vars);
      x[i] = x0;
      g[i] = (up - down) / (2 * step);
    }
  }
  return p;
}

// C [M, N] (+)= A [M, K] B [K, N] in f32, A and B each optionally transposed in storage: the
// tests' stand-in for the GEMMs a step's caller runs (cuBLASLt on the GPU).
inline std::vector<float> hostGemm(const std::vector<float> &a, bool transA,
                                   const std::vector<float> &b, bool transB, int64_t M, int64_t K,
                                   int64_t N, const std::vector<float> *bias = nullptr) {
  std::vector<float> c(M * N);
  for (int64_t m = 0; m < M; ++m)
    for (int64_t n = 0; n < N; ++n) {
      float s = bias ? (*bias)[n] : 0.0f;
      for (int64_t k = 0; k < K; ++k)
        s += (transA ? a[k * M + m] : a[m * K + k]) * (transB ? b[n * K + k] : b[k * N + n]);
      c[m * N + n] = s;
    }
  return c;
}

// Columns [c0, c1) of a row-major [rows, cols] matrix.
template <typename T>
std::vector<double> columns(const std::vector<T> &m, int64_t rows, int64_t cols, int64_t c0,
                            int64_t c1) {
  std::vector<double> out;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = c0; c < c1; ++c)
      out.push_back(m[r * cols + c]);
  return out;
}

// What a run of the kernels returns, by the names of CellProblem::want (the kernels' own
// outputs, recombined by the test where one gradient is split between a kernel and a GEMM):
// rnn h, dz; lstm h, c, dz, dcPrev, dpeephole; gru h, da, dbh, dhPrev; gru minimal h, dz (for da
// and dbh), dhPrev; gru seed h, da, dbur (da's u and r blocks), dhPrev, dwhc.
using CellOutputs = Tensors;

inline std::vector<std::string> compare(const CellProblem &p, const CellOutputs &got) {
  const int64_t B = p.c.batch, H = p.c.hidden;
  std::vector<Checked> errors;
  auto check = [&](const std::string &name, const std::vector<double> &want) {
    auto it = got.find(name);
    errors.push_back({name, it == got.end() || it->second.size() != want.size()
                                ? INFINITY
                                : relativeL2(it->second, want)});
  };
  const bool minimal = p.c.cell == Cell::GruMinimal;
  for (std::string name : {"h", "c", "dz", "dcPrev", "dpeephole", "da", "dbh", "dhPrev", "dwhc"})
    if (p.want.count(name) && !(minimal && (name == "da" || name == "dbh")))
      check(name, p.want.at(name));
  if (minimal) { // one gradient for both a and bh
    auto dz = got.find("dz");
    for (const char *name : {"da", "dbh"})
      errors.push_back({std::string("dz (as ") + name + ")",
                        dz == got.end() ? INFINITY : relativeL2(dz->second, p.want.at(name))});
  }
  if (p.c.cell == Cell::GruSeed)
    errors.push_back(
        {"da[u r] (as dbur)", relativeL2(columns(got.at("da"), B, 3 * H, 0, 2 * H),
                                         p.want.at("dbur"))});
  return failuresOf(p.c.name, errors);
}

//===- whole sequences (attn/cuda/Recurrent.h) -------------------------------------------===//

// A case's mask: none, padded rows (0/1: a full row, a shorter one, one with a gap, one with no
// step), or the same with some steps at 0.5 (the ops' blend takes any value).
enum class Mask { None, Padding, Fractional };

struct SequenceCase {
  const char *name;
  RecurrentCell cell;
  int64_t batch, steps, input, hidden;
  bool reverse, peephole;
  Mask mask = Mask::None;
  int64_t projection = 0; // P of an LSTM's projection w_proj [H, P]; 0: none
  // The width of h (and of the outputs): P with a projection, else H.
  int64_t state() const { return projection ? projection : hidden; }
};

inline void PrintTo(const SequenceCase &c, std::ostream *os) { *os << c.name; }

inline std::vector<SequenceCase> sequenceCases() {
  return {{"rnn", RecurrentCell::Rnn, 2, 4, 3, 5, false, false},
          {"rnn masked reverse", RecurrentCell::Rnn, 4, 4, 3, 3, true, false, Mask::Padding},
          {"lstm", RecurrentCell::Lstm, 2, 4, 3, 5, false, false},
          {"lstm reverse peephole", RecurrentCell::Lstm, 3, 3, 2, 4, true, true},
          {"gru", RecurrentCell::Gru, 2, 4, 3, 5, false, false},
          {"gru reverse", RecurrentCell::Gru, 3, 3, 4, 3, true, false},
          {"lstm masked peephole", RecurrentCell::Lstm, 4, 4, 2, 3, false, true, Mask::Padding},
          {"gru masked reverse", RecurrentCell::Gru, 4, 4, 3, 3, true, false, Mask::Padding},
          {"lstm mask 0.5", RecurrentCell::Lstm, 4, 3, 2, 3, true, false, Mask::Fractional},
          {"lstm projection", RecurrentCell::Lstm, 2, 4, 3, 5, false, false, Mask::None, 3},
          {"lstm projection masked peephole reverse", RecurrentCell::Lstm, 4, 4, 2, 4, true, true,
           Mask::Padding, 2}};
}

// Row b of a case's mask [B, T, 1]: 0: every step; 1: the first half; 2: a gap at step 1;
// 3 and on: no step. Fractional: the held steps of rows 1 and 2 are 0.5 instead of 0.
inline std::vector<float> sequenceMask(const SequenceCase &c) {
  std::vector<float> m(c.batch * c.steps, 1.0f);
  const float held = c.mask == Mask::Fractional ? 0.5f : 0.0f;
  for (int64_t b = 0; b < c.batch; ++b)
    for (int64_t t = 0; t < c.steps; ++t)
      if ((b == 1 && t >= (c.steps + 1) / 2) || (b == 2 && t == 1))
        m[b * c.steps + t] = held;
      else if (b >= 3)
        m[b * c.steps + t] = 0.0f;
  return m;
}

struct SequenceProblem {
  SequenceCase c;
  // x, h0, c0 (LSTM), wIh, wHh, bIh, bHh (GRU), peephole, wProj, mask; dOutputs, dhn, dcn
  // (LSTM).
  Tensors in;
  // outputs, hn, cn (LSTM) and "d" + each differentiable input's name.
  std::map<std::string, std::vector<double>> want;
};

// The width of a layer's gates: 4H (LSTM), 3H (GRU), H (vanilla RNN).
inline int64_t gatesOf(RecurrentCell cell, int64_t H) {
  return (cell == RecurrentCell::Lstm ? 4 : cell == RecurrentCell::Gru ? 3 : 1) * H;
}

namespace detail {

// The layer's forward over time (processing order reversed with `reverse`), from the step
// equations above: outputs [B, T, R], hn [B, R] (and cn [B, H]); with a projection, h is the
// cell's h times w_proj.
inline Vars sequenceForward(const SequenceCase &c, const Vars &in) {
  const int64_t B = c.batch, T = c.steps, I = c.input, H = c.hidden, R = c.state();
  const bool lstm = c.cell == RecurrentCell::Lstm, gru = c.cell == RecurrentCell::Gru;
  const int64_t G = gatesOf(c.cell, H);
  std::vector<double> h = in.at("h0"), cs = lstm ? in.at("c0") : std::vector<double>();
  Vars out;
  out["outputs"].assign(B * T * R, 0.0);
  for (int64_t k = 0; k < T; ++k) {
    const int64_t t = c.reverse ? T - 1 - k : k;
    // xw = x_t W_ih + b_ih, hw = h W_hh (+ b_hh for the GRU), [B, G] each.
    std::vector<double> xw(B * G), hw(B * G);
    for (int64_t b = 0; b < B; ++b)
      for (int64_t g = 0; g < G; ++g) {
        double sx = in.at("bIh")[g], sh = gru ? in.at("bHh")[g] : 0.0;
        for (int64_t i = 0; i < I; ++i)
          sx += in.at("x")[(b * T + t) * I + i] * in.at("wIh")[i * G + g];
        for (int64_t j = 0; j < R; ++j)
          sh += h[b * R + j] * in.at("wHh")[j * G + g];
        xw[b * G + g] = sx;
        hw[b * G + g] = sh;
      }
    Vars step;
    if (!gru) {
      std::vector<double> z(B * G);
      for (int64_t e = 0; e < B * G; ++e)
        z[e] = xw[e] + hw[e];
      step = {{"z", z}};
      if (lstm)
        step["cPrev"] = cs;
      if (c.peephole)
        step["peephole"] = in.at("peephole");
    } else {
      step = {{"a", xw}, {"bh", hw}, {"hPrev", h}};
    }
    const Cell stepCell = lstm  ? (c.peephole ? Cell::LstmPeephole : Cell::Lstm)
                          : gru ? Cell::Gru
                                : Cell::Rnn;
    Vars next = forward(stepCell, B, H, step);
    std::vector<double> hCell = next.at("h");
    if (c.projection) {
      hCell.assign(B * R, 0.0);
      for (int64_t b = 0; b < B; ++b)
        for (int64_t p = 0; p < R; ++p)
          for (int64_t j = 0; j < H; ++j)
            hCell[b * R + p] += next.at("h")[b * H + j] * in.at("wProj")[j * R + p];
    }
    // s' = s + m (cell(x, s) - s) with the row's mask at time t.
    for (int64_t b = 0; b < B; ++b) {
      const double m = c.mask == Mask::None ? 1.0 : in.at("mask")[b * T + t];
      for (int64_t j = 0; j < R; ++j)
        h[b * R + j] += m * (hCell[b * R + j] - h[b * R + j]);
      if (lstm)
        for (int64_t j = 0; j < H; ++j)
          cs[b * H + j] += m * (next.at("c")[b * H + j] - cs[b * H + j]);
    }
    for (int64_t b = 0; b < B; ++b)
      for (int64_t j = 0; j < R; ++j)
        out["outputs"][(b * T + t) * R + j] = h[b * R + j];
  }
  out["hn"] = h;
  if (lstm)
    out["cn"] = cs;
  return out;
}

// L = sum(dOutputs * outputs) + sum(dhn * hn) [+ sum(dcn * cn)].
inline double sequenceObjective(const SequenceCase &c, const Vars &in) {
  Vars out = sequenceForward(c, in);
  double l = 0;
  for (auto [name, grad] : {std::pair{"outputs", "dOutputs"}, {"hn", "dhn"}, {"cn", "dcn"}}) {
    if (!out.count(name))
      continue;
    const std::vector<double> &o = out.at(name), &d = in.at(grad);
    for (size_t i = 0; i < o.size(); ++i)
      l += d[i] * o[i];
  }
  return l;
}

} // namespace detail

inline SequenceProblem makeSequenceProblem(const SequenceCase &c, std::mt19937 &rng) {
  const int64_t B = c.batch, T = c.steps, I = c.input, H = c.hidden, R = c.state();
  const bool lstm = c.cell == RecurrentCell::Lstm;
  const int64_t G = gatesOf(c.cell, H);
  const float w = float(1.0 / std::sqrt(double(H)));
  SequenceProblem p{c, {}, {}};
  std::vector<std::string> differentiable;
  auto draw = [&](const char *name, size_t n, float sigma, bool diff) {
    p.in[name] = randomFloats(n, rng, 0.0f, sigma);
    if (diff)
      differentiable.push_back(name);
  };
  draw("x", B * T * I, 1.0f, true);
  draw("h0", B * R, 0.5f, true);
  draw("wIh", I * G, w, true);
  draw("wHh", R * G, w, true);
  draw("bIh", G, w, true);
  if (lstm) {
    draw("c0", B * H, 0.5f, true);
    if (c.peephole)
      draw("peephole", 3 * H, 0.5f, true);
    if (c.projection)
      draw("wProj", H * R, w, true);
    draw("dcn", B * H, 1.0f, false);
  } else if (c.cell == RecurrentCell::Gru) {
    draw("bHh", G, w, true);
  }
  draw("dOutputs", B * T * R, 1.0f, false);
  draw("dhn", B * R, 1.0f, false);
  if (c.mask != Mask::None)
    p.in["mask"] = sequenceMask(c);

  detail::Vars vars;
  for (const auto &[name, v] : p.in)
    vars[name].assign(v.begin(), v.end());
  for (auto &[name, v] : detail::sequenceForward(c, vars))
    p.want[name] = v;
  const double step = 1e-5; // as makeCellProblem's
  for (const std::string &name : differentiable) {
    std::vector<double> &x = vars[name], &g = p.want["d" + name];
    g.assign(x.size(), 0.0);
    for (size_t i = 0; i < x.size(); ++i) {
      const double x0 = x[i];
      x[i] = x0 + step;
      const double up = detail::sequenceObjective(c, vars);
      x[i] = x0 - step;
      const double down = detail::sequenceObjective(c, vars);
      x[i] = x0;
      g[i] = (up - down) / (2 * step);
    }
  }
  return p;
}

// Every output and gradient of a run (named as SequenceProblem::want) against the reference.
inline std::vector<std::string> compare(const SequenceProblem &p, const Tensors &got) {
  std::vector<Checked> errors;
  for (const auto &[name, want] : p.want) {
    auto it = got.find(name);
    errors.push_back({name, it == got.end() || it->second.size() != want.size()
                                ? INFINITY
                                : relativeL2(it->second, want)});
  }
  return failuresOf(p.c.name, errors);
}

} // namespace attn::cuda::testing

#endif // ATTN_TESTS_CUDA_RECURRENTREFERENCE_H
