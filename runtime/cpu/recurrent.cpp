// oneDNN implementations of the recurrent kernels declared in attn/kernels.h: a whole layer of
// a vanilla (tanh) RNN, a linear-before-reset GRU (PyTorch's GRU) or an LSTM (with diagonal
// peepholes, with a projection without bias: oneDNN's LSTMP), forward and backward.
//
// Layouts. attn's sequences are batch-major [B, T, C]: oneDNN's `ntc` format, so they are
// passed through without copies when dense. attn's weights [I, G*H] are oneDNN's `ldigo` with
// one layer and one direction; the primitives pick their own weight formats (`any`), and
// the kernels copy attn's weights straight into a plain one (the forward's, rows padded apart)
// and reorder into the others (the backward's, transposed). PyTorch's GRU gates (r, z, n) are
// oneDNN's (u, r, o) = (z, r, n), and its two biases become oneDNN's four (u, r, o, u'):
// b_ih + b_hh for z and r, then b_ih[n] and b_hh[n]; the kernels permute on the way in and
// back. A projection w_proj [H, P] is oneDNN's `ldio`; with it the hidden state (h0, h_n,
// outputs, w_hh's rows) is P wide, the cell state H wide.
//
// Workspace. oneDNN's backward needs the workspace of a training forward. A forward called with
// `training` keeps its workspace in a small cache keyed by its `outputs` buffer (address and a
// hash of the contents); the backward takes it from there, or recomputes the forward when the
// entry is missing or stale. Counters (attn/cpu/Recurrent.h) tell which happened.
// ATTN_RNN_RECOMPUTE=1 in the environment turns the cache off (every backward recomputes its
// forward): kept to measure what the cache saves (docs/benchmarks.md).
//
// Masked layers (padded batches). Each row's steps of mask 1 are packed in processing order,
// the rows sorted longest first, and the layer runs as a left-to-right oneDNN layer per
// segment of packed steps over which the set of running rows is constant: PyTorch's packed
// sequences, in as many oneDNN calls as the batch has distinct lengths. The outputs are
// scattered back to time order (a step of mask 0 repeats the state), and the backward runs
// the segments in reverse, carrying the state gradients from one to the next. The cache
// keeps every segment's inputs, outputs and workspace. A mask with other values than 0 and 1
// runs one step per segment over every row, blending the states as the scan does.
//
// bf16 (the _bf16 kernels, attn-precision's bf16 policy): the same layers on oneDNN's bf16
// primitives, the data and weights rounded on the way in (Descs says which), the results
// widened on the way out, every gradient f32. oneDNN 2.6's bf16 LSTMP computes another layer
// than its f32 one, so a projected LSTM has no bf16 form (the kernel refuses it).
//
// Called from compiled code through a C ABI: these functions must not throw; a oneDNN error
// prints a message to stderr and aborts.
#include "attn/cpu/Recurrent.h"
#include "attn/Alloc.h"
#include "attn/kernels.h"

#include "OneDNN.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#define ATTN_EXPORT __attribute__((visibility("default")))

namespace attn::cpu {
namespace {

using dims = dnnl::memory::dims;
using tag = dnnl::memory::format_tag;
using dt = dnnl::memory::data_type;
using md = dnnl::memory::desc;

[[noreturn]] void fail(const char *kernel, const std::string &msg) {
  std::fprintf(stderr, "attn runtime: %s: %s\n", kernel, msg.c_str());
  std::fflush(stderr);
  std::abort();
}

using onednn::addScratchpad;
using onednn::engine;
using onednn::stream;
using onednn::userScratchpad;

// Temporaries on the runtime's recycled buffers (attn/Alloc.h): a training step's
// workspaces, packed sequences and reordered weights are then not fresh pages, page-faulted
// in, at every call. Sized without zeroing (`Floats v(n)`, `resize`): each is written whole
// before it is read, and the few that accumulate are filled explicitly (`Floats v(n, 0.0f)`).
struct Uninitialised : attn::BufferAllocator<float> {
  template <typename U> struct rebind { using other = Uninitialised; };
  void construct(float *p) noexcept { ::new (static_cast<void *>(p)) float; }
  void construct(float *p, float v) noexcept { ::new (static_cast<void *>(p)) float(v); }
  template <typename V> void construct(float *p, V &&v) noexcept {
    ::new (static_cast<void *>(p)) float(std::forward<V>(v));
  }
};
using Floats = std::vector<float, Uninitialised>;

// oneDNN memories on recycled buffers, alive as long as the arena.
struct Arena {
  std::vector<std::shared_ptr<void>> buffers;
  dnnl::memory make(const dnnl::memory::desc &d) {
    void *p = attn::bufferAlloc(std::max<size_t>(d.get_size(), 1));
    buffers.emplace_back(p, attn::bufferFree);
    return dnnl::memory(d, engine(), p);
  }
};

std::atomic<size_t> workspaceHits{0}, workspaceMisses{0};

bool keepWorkspaces() {
  static const bool keep = [] {
    const char *v = std::getenv("ATTN_RNN_RECOMPUTE");
    return !(v && *v && std::strcmp(v, "0") != 0);
  }();
  return keep;
}

//===- strided memrefs <-> dense buffers ------------------------------------------------===//

// A memref descriptor seen through its rank: base pointer, sizes, strides.
struct Strided {
  float *base;
  int rank;
  int64_t sizes[3], strides[3];
  int64_t numel() const {
    int64_t n = 1;
    for (int i = 0; i < rank; ++i)
      n *= sizes[i];
    return n;
  }
  bool dense() const {
    int64_t expect = 1;
    for (int i = rank; i-- > 0;) {
      if (sizes[i] != 1 && strides[i] != expect)
        return false;
      expect *= sizes[i];
    }
    return true;
  }
  // Visits every element in row-major order with its flat dense index.
  template <typename F> void forEach(F f) const {
    int64_t s0 = rank > 0 ? sizes[0] : 1, s1 = rank > 1 ? sizes[1] : 1, s2 = rank > 2 ? sizes[2] : 1;
    int64_t t0 = rank > 0 ? strides[0] : 0, t1 = rank > 1 ? strides[1] : 0, t2 = rank > 2 ? strides[2] : 0;
    int64_t k = 0;
    for (int64_t i = 0; i < s0; ++i)
      for (int64_t j = 0; j < s1; ++j)
        for (int64_t l = 0; l < s2; ++l)
          f(base + i * t0 + j * t1 + l * t2, k++);
  }
};

template <typename M> Strided strided(M *m, int rank) {
  Strided s{m->aligned + m->offset, rank, {1, 1, 1}, {0, 0, 0}};
  for (int i = 0; i < rank; ++i) {
    s.sizes[i] = m->sizes[i];
    s.strides[i] = m->strides[i];
  }
  return s;
}

// The contents as a dense row-major buffer: the memref itself when dense, else a copy.
const float *readDense(const Strided &m, Floats &tmp) {
  if (m.dense())
    return m.base;
  tmp.resize(m.numel());
  m.forEach([&](const float *p, int64_t k) { tmp[k] = *p; });
  return tmp.data();
}

// Where to write a dense result: the memref itself when dense, else `tmp` (then writeBack).
float *writeDense(const Strided &m, Floats &tmp) {
  if (m.dense())
    return m.base;
  tmp.resize(m.numel());
  return tmp.data();
}
// n floats from src (stride ss) to dst (stride ds): the packing, scattering and weight-layout
// loops, which are a memcpy in the usual case of contiguous rows.
void copyStrided(float *dst, int64_t ds, const float *src, int64_t ss, int64_t n) {
  if (ds == 1 && ss == 1) {
    std::memcpy(dst, src, n * sizeof(float));
    return;
  }
  for (int64_t i = 0; i < n; ++i)
    dst[i * ds] = src[i * ss];
}
// dst[i] += src[i * ss] (vectorised when ss is 1).
void addStrided(float *dst, const float *src, int64_t ss, int64_t n) {
  if (ss == 1) {
    for (int64_t i = 0; i < n; ++i)
      dst[i] += src[i];
    return;
  }
  for (int64_t i = 0; i < n; ++i)
    dst[i] += src[i * ss];
}

// The contents of `src` (dense, row-major) into `m`, whatever its strides.
void copyInto(const Strided &m, const float *src) {
  m.forEach([&](float *p, int64_t k) { *p = src[k]; });
}

void writeBack(const Strided &m, const Floats &tmp) {
  if (!m.dense())
    copyInto(m, tmp.data());
}

// A dense copy of the contents, also when `m` is dense (for what must outlive its buffer).
Floats copyOf(const Strided &m) {
  Floats out(m.numel());
  m.forEach([&](const float *p, int64_t k) { out[k] = *p; });
  return out;
}

//===- shapes, descriptors, primitives ---------------------------------------------------===//

// H is the cell's width (gates, the LSTM's c), P the hidden state's (h, outputs): the
// projection's size, else H.
struct Shape {
  int64_t kind, reverse, B, T, I, H, P, peephole, projection, masked = 0;
  int64_t bf16 = 0; // the primitives' data (sequences, hidden states, weights) in bf16
  int64_t gates() const { return kind == ATTN_RNN_LSTM ? 4 : kind == ATTN_RNN_GRU ? 3 : 1; }
  int64_t biasGates() const { return kind == ATTN_RNN_GRU ? 4 : gates(); }
  std::vector<int64_t> key() const {
    return {kind, reverse, B, T, I, H, P, peephole, projection, masked, bf16};
  }
  std::string str() const {
    return "B=" + std::to_string(B) + " T=" + std::to_string(T) + " I=" + std::to_string(I) +
           " H=" + std::to_string(H) + (projection ? " P=" + std::to_string(P) : "");
  }
};

// The descriptors every primitive of one shape is built from (plain formats; weights `any`).
// `iter` is the hidden state [B, P], `iterC` the LSTM's cell state [B, H].
//
// Data types. attn's buffers are f32: `layerIn`, `layerOut`, `iter` and the plain weights
// describe them, and every gradient (oneDNN's bf16 backward takes and gives f32 gradients,
// its weight gradients included). What the primitives read and write, `*Data` and the
// weights, is bf16 in a bf16 layer (f32 sums inside): the kernels round the f32 buffers into
// bf16 copies on the way in and widen the bf16 results on the way out. The LSTM's cell state,
// the peepholes and the bias stay f32 in either.
struct Descs {
  md layerIn, layerOut, iter, layerInData, layerOutData, iterData, iterC, wLayer, wIter, dwLayer,
      dwIter, bias, wLayerPlain, wIterPlain, peephole, wProj, dwProj, wProjPlain;
  explicit Descs(const Shape &s)
      : layerIn({s.T, s.B, s.I}, dt::f32, tag::ntc), layerOut({s.T, s.B, s.P}, dt::f32, tag::ntc),
        iter({1, 1, s.B, s.P}, dt::f32, tag::ldnc), layerInData({s.T, s.B, s.I}, data(s), tag::ntc),
        layerOutData({s.T, s.B, s.P}, data(s), tag::ntc),
        iterData({1, 1, s.B, s.P}, data(s), tag::ldnc), iterC({1, 1, s.B, s.H}, dt::f32, tag::ldnc),
        wLayer({1, 1, s.I, s.gates(), s.H}, data(s), tag::any),
        wIter({1, 1, s.P, s.gates(), s.H}, data(s), tag::any),
        dwLayer({1, 1, s.I, s.gates(), s.H}, dt::f32, tag::any),
        dwIter({1, 1, s.P, s.gates(), s.H}, dt::f32, tag::any),
        bias({1, 1, s.biasGates(), s.H}, dt::f32, tag::ldgo),
        wLayerPlain({1, 1, s.I, s.gates(), s.H}, dt::f32, tag::ldigo),
        wIterPlain({1, 1, s.P, s.gates(), s.H}, dt::f32, tag::ldigo),
        peephole({1, 1, 3, s.H}, dt::f32, tag::ldgo), wProj({1, 1, s.H, s.P}, data(s), tag::any),
        dwProj({1, 1, s.H, s.P}, dt::f32, tag::any),
        wProjPlain({1, 1, s.H, s.P}, dt::f32, tag::ldio) {}
  static dt data(const Shape &s) { return s.bf16 ? dt::bf16 : dt::f32; }
};

dnnl::rnn_direction direction(const Shape &s) {
  return s.reverse ? dnnl::rnn_direction::unidirectional_right2left
                   : dnnl::rnn_direction::unidirectional_left2right;
}

// Per cell: how its forward and backward descriptors are made.
struct Vanilla {
  static constexpr onednn::Kind kKind = onednn::kRnn;
  using Fwd = dnnl::vanilla_rnn_forward;
  using Bwd = dnnl::vanilla_rnn_backward;
  static Fwd::desc fwd(dnnl::prop_kind pk, const Shape &s, const Descs &d) {
    return Fwd::desc(pk, dnnl::algorithm::eltwise_tanh, direction(s), d.layerInData, d.iterData,
                     d.wLayer, d.wIter, d.bias, d.layerOutData, d.iterData);
  }
  static Bwd::desc bwd(const Shape &s, const Descs &d) {
    return Bwd::desc(dnnl::prop_kind::backward, dnnl::algorithm::eltwise_tanh, direction(s),
                     d.layerInData, d.iterData, d.wLayer, d.wIter, d.bias, d.layerOutData,
                     d.iterData, d.layerIn, d.iter, d.dwLayer, d.dwIter, d.bias, d.layerOut,
                     d.iter);
  }
};
struct Gru {
  static constexpr onednn::Kind kKind = onednn::kGru;
  using Fwd = dnnl::lbr_gru_forward;
  using Bwd = dnnl::lbr_gru_backward;
  static Fwd::desc fwd(dnnl::prop_kind pk, const Shape &s, const Descs &d) {
    return Fwd::desc(pk, direction(s), d.layerInData, d.iterData, d.wLayer, d.wIter, d.bias,
                     d.layerOutData, d.iterData);
  }
  static Bwd::desc bwd(const Shape &s, const Descs &d) {
    return Bwd::desc(dnnl::prop_kind::backward, direction(s), d.layerInData, d.iterData, d.wLayer,
                     d.wIter, d.bias, d.layerOutData, d.iterData, d.layerIn, d.iter, d.dwLayer,
                     d.dwIter, d.bias, d.layerOut, d.iter);
  }
};
struct Lstm {
  static constexpr onednn::Kind kKind = onednn::kLstm;
  using Fwd = dnnl::lstm_forward;
  using Bwd = dnnl::lstm_backward;
  // Without peepholes (a projection), a zero peephole (projection) descriptor.
  static Fwd::desc fwd(dnnl::prop_kind pk, const Shape &s, const Descs &d) {
    md peep = s.peephole ? d.peephole : md(), proj = s.projection ? d.wProj : md();
    return Fwd::desc(pk, direction(s), d.layerInData, d.iterData, d.iterC, d.wLayer, d.wIter, peep,
                     proj, d.bias, d.layerOutData, d.iterData, d.iterC);
  }
  static Bwd::desc bwd(const Shape &s, const Descs &d) {
    md peep = s.peephole ? d.peephole : md(), proj = s.projection ? d.wProj : md();
    md dproj = s.projection ? d.dwProj : md();
    return Bwd::desc(dnnl::prop_kind::backward, direction(s), d.layerInData, d.iterData, d.iterC,
                     d.wLayer, d.wIter, peep, proj, d.bias, d.layerOutData, d.iterData, d.iterC,
                     d.layerIn, d.iter, d.iterC, d.dwLayer, d.dwIter, peep, dproj, d.bias,
                     d.layerOut, d.iter, d.iterC);
  }
};

// The primitives of one cell and shape, made on first use and kept (in the shared cache).
template <typename Cell> struct Prims {
  typename Cell::Fwd::primitive_desc inferencePd, trainingPd;
  typename Cell::Fwd inference, training;
  typename Cell::Bwd::primitive_desc backwardPd;
  typename Cell::Bwd backward;
  bool hasInference = false, hasTraining = false, hasBackward = false;
};

// Guards the lazily made members of every Prims (the cache's own lookups have their mutex).
std::mutex primsMutex;

// The entry of this cell and shape; the shared_ptr keeps it alive while the caller runs it,
// even if the bounded cache evicts it meanwhile.
template <typename Cell> std::shared_ptr<Prims<Cell>> primsFor(const Shape &s) {
  onednn::Key key{Cell::kKind};
  std::vector<int64_t> shape = s.key();
  key.insert(key.end(), shape.begin(), shape.end());
  return onednn::cached<Prims<Cell>>(key, [] { return Prims<Cell>(); });
}

template <typename Cell> std::shared_ptr<Prims<Cell>> forwardPrims(const Shape &s, bool training) {
  std::shared_ptr<Prims<Cell>> entry = primsFor<Cell>(s);
  std::lock_guard<std::mutex> lock(primsMutex);
  Prims<Cell> &p = *entry;
  Descs d(s);
  if (training && !p.hasTraining) {
    p.trainingPd = typename Cell::Fwd::primitive_desc(
        Cell::fwd(dnnl::prop_kind::forward_training, s, d), userScratchpad(), engine());
    p.training = typename Cell::Fwd(p.trainingPd);
    p.hasTraining = true;
  }
  if (!training && !p.hasInference) {
    p.inferencePd = typename Cell::Fwd::primitive_desc(
        Cell::fwd(dnnl::prop_kind::forward_inference, s, d), userScratchpad(), engine());
    p.inference = typename Cell::Fwd(p.inferencePd);
    p.hasInference = true;
  }
  return entry;
}

template <typename Cell> std::shared_ptr<Prims<Cell>> backwardPrims(const Shape &s) {
  std::shared_ptr<Prims<Cell>> entry = forwardPrims<Cell>(s, /*training=*/true);
  Prims<Cell> &p = *entry;
  std::lock_guard<std::mutex> lock(primsMutex);
  if (!p.hasBackward) {
    Descs d(s);
    p.backwardPd = typename Cell::Bwd::primitive_desc(Cell::bwd(s, d), userScratchpad(),
                                                      engine(), p.trainingPd);
    p.backward = typename Cell::Bwd(p.backwardPd);
    p.hasBackward = true;
  }
  return entry;
}

// `plain` (a user-format memory) in the format `want`: itself, or a reordered copy in `arena`.
dnnl::memory inFormat(const dnnl::memory &plain, const md &want, Arena &arena) {
  if (plain.get_desc() == want)
    return plain;
  dnnl::memory out = arena.make(want);
  dnnl::reorder(plain, out).execute(stream(), const_cast<dnnl::memory &>(plain), out);
  return out;
}

dnnl::memory wrap(const md &d, const float *p) {
  return dnnl::memory(d, engine(), const_cast<float *>(p));
}

// A primitive's data argument of descriptor `want` (f32 or bf16) read from the f32 buffer
// `p` laid out as `plain`: the buffer itself, or its bf16 rounding in `arena`.
dnnl::memory dataIn(const md &want, const md &plain, const float *p, Arena &arena) {
  return inFormat(wrap(plain, p), want, arena);
}

// A primitive's data results of descriptor `want` written to f32 buffers: the buffer itself,
// or a bf16 memory in `arena` that `widen` copies into it once the primitive has run.
struct DataOut {
  Arena &arena;
  std::vector<std::pair<dnnl::memory, dnnl::memory>> pending; // (written, f32 buffer)
  dnnl::memory to(const md &want, const md &plain, float *p) {
    dnnl::memory buffer = wrap(plain, p);
    if (want == plain)
      return buffer;
    dnnl::memory m = arena.make(want);
    pending.push_back({m, buffer});
    return m;
  }
  void widen() {
    for (auto &[m, buffer] : pending)
      dnnl::reorder(m, buffer).execute(stream(), m, buffer);
    stream().wait();
    pending.clear();
  }
};

//===- attn layouts <-> oneDNN layouts ----------------------------------------------------===//

// oneDNN gate g reads attn gate block gateOf(g): PyTorch's GRU (r, z, n) is oneDNN's (z, r, n).
int64_t gateOf(const Shape &s, int64_t g) {
  if (s.kind == ATTN_RNN_GRU && g < 2)
    return 1 - g;
  return g;
}

// Where oneDNN keeps element (row, gate, h) of a weight [1, 1, rows, G, H] in a plain layout
// with h innermost: dense ldigo is {G*H, H, 1}; the forward primitives' own format is ldigo
// with rows padded apart (oneDNN sets the row stride off a multiple of 4 KiB).
struct GateStrides {
  int64_t row, gate;
};
GateStrides denseLdigo(const Shape &s) { return {s.gates() * s.H, s.H}; }

// The strides of `d` when it is such a layout (no blocking, no extra data, h innermost).
std::optional<GateStrides> gateStrides(const md &d) {
  const dnnl_memory_desc_t &c = d.data;
  if (c.data_type != dnnl_f32 || c.format_kind != dnnl_blocked || c.ndims != 5 || c.offset0 != 0 ||
      c.extra.flags != 0 || c.format_desc.blocking.inner_nblks != 0 ||
      c.format_desc.blocking.strides[4] != 1)
    return std::nullopt;
  for (int i = 0; i < 5; ++i)
    if (c.padded_dims[i] != c.dims[i])
      return std::nullopt;
  return GateStrides{c.format_desc.blocking.strides[2], c.format_desc.blocking.strides[3]};
}

// attn weights [rows, G*H] -> oneDNN's [rows][G][H] at `out` (its gate order), laid out `to`.
void weightsIn(const Shape &s, const Strided &w, float *out, GateStrides to) {
  int64_t rows = w.sizes[0], G = s.gates(), H = s.H;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t g = 0; g < G; ++g)
      copyStrided(out + r * to.row + g * to.gate, 1,
                  w.base + r * w.strides[0] + gateOf(s, g) * H * w.strides[1], w.strides[1], H);
}
Floats weightsIn(const Shape &s, const Strided &w) {
  Floats out(w.sizes[0] * s.gates() * s.H);
  weightsIn(s, w, out.data(), denseLdigo(s));
  return out;
}

// oneDNN's [rows][G][H] gradient at `in`, laid out `from` -> attn's [rows, G*H] (the inverse
// of weightsIn).
void weightsOut(const Shape &s, const float *in, GateStrides from, const Strided &w) {
  int64_t rows = w.sizes[0], G = s.gates(), H = s.H;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t g = 0; g < G; ++g)
      copyStrided(w.base + r * w.strides[0] + gateOf(s, g) * H * w.strides[1], w.strides[1],
                  in + r * from.row + g * from.gate, 1, H);
}
void weightsOut(const Shape &s, const float *in, const Strided &w) {
  weightsOut(s, in, denseLdigo(s), w);
}

// A primitive's weight gradient `dw`, in its format, into attn's `w`: read in place when the
// format is plain with h innermost (the usual case), else through a dense ldigo reorder.
void weightsOut(const Shape &s, const dnnl::memory &dw, const md &denseDesc, const Strided &w,
                Arena &arena) {
  if (std::optional<GateStrides> from = gateStrides(dw.get_desc())) {
    weightsOut(s, static_cast<const float *>(dw.get_data_handle()), *from, w);
    return;
  }
  dnnl::memory dense = inFormat(dw, denseDesc, arena);
  stream().wait();
  weightsOut(s, static_cast<const float *>(dense.get_data_handle()), w);
}

float at(const Strided &v, int64_t i) { return v.base[i * v.strides[0]]; }
float &at(Strided &v, int64_t i) { return v.base[i * v.strides[0]]; }

// attn biases -> oneDNN's ldgo bias.
Floats biasIn(const Shape &s, const Strided &bih, const Strided &bhh) {
  int64_t H = s.H;
  Floats out(s.biasGates() * H);
  if (s.kind != ATTN_RNN_GRU) {
    for (int64_t i = 0; i < s.gates() * H; ++i)
      out[i] = at(bih, i);
    return out;
  }
  for (int64_t h = 0; h < H; ++h) {
    out[0 * H + h] = at(bih, 1 * H + h) + at(bhh, 1 * H + h); // u = z
    out[1 * H + h] = at(bih, 0 * H + h) + at(bhh, 0 * H + h); // r
    out[2 * H + h] = at(bih, 2 * H + h);                      // o = n, input side
    out[3 * H + h] = at(bhh, 2 * H + h);                      // u' = n, hidden side
  }
  return out;
}

// oneDNN's bias gradient -> attn's.
void biasOut(const Shape &s, const float *in, Strided &dbih, Strided &dbhh) {
  int64_t H = s.H;
  if (s.kind != ATTN_RNN_GRU) {
    for (int64_t i = 0; i < s.gates() * H; ++i)
      at(dbih, i) = in[i];
    return;
  }
  for (int64_t h = 0; h < H; ++h) {
    at(dbih, 0 * H + h) = at(dbhh, 0 * H + h) = in[1 * H + h];
    at(dbih, 1 * H + h) = at(dbhh, 1 * H + h) = in[0 * H + h];
    at(dbih, 2 * H + h) = in[2 * H + h];
    at(dbhh, 2 * H + h) = in[3 * H + h];
  }
}

//===- the workspace cache ----------------------------------------------------------------===//

// FNV-1a over 64-bit words (two floats each) in four independent lanes: one multiply per
// two elements, and no chain the lanes wait on.
uint64_t hashOf(const float *data, int64_t n) {
  uint64_t lanes[4] = {1469598103934665603ull, 7, 11, 13};
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    for (int k = 0; k < 4; ++k) {
      uint64_t w;
      std::memcpy(&w, data + i + 2 * k, sizeof(w));
      lanes[k] = (lanes[k] ^ w) * 1099511628211ull;
    }
  for (; i < n; ++i) {
    uint32_t w;
    std::memcpy(&w, data + i, sizeof(w));
    lanes[0] = (lanes[0] ^ w) * 1099511628211ull;
  }
  return lanes[0] ^ (lanes[1] * 3) ^ (lanes[2] * 5) ^ (lanes[3] * 7);
}

struct MaskedRun;

// What a training forward keeps for its backward: oneDNN's workspace, or for a masked layer
// every segment's inputs, outputs and workspace.
struct Saved {
  std::vector<int64_t> key;
  const float *outputs;
  uint64_t hash;
  dnnl::memory workspace;
  Arena arena; // the workspace's buffer
  std::shared_ptr<MaskedRun> run;
};
// A few layers' worth: a stacked, bidirectional model keeps one entry per layer and direction
// between its forward and its backward.
constexpr size_t kMaxSaved = 16;
std::mutex savedMutex;
std::deque<Saved> saved;

void keepWorkspace(const Shape &s, const float *outputs, uint64_t hash, dnnl::memory ws,
                   Arena arena, std::shared_ptr<MaskedRun> run = nullptr) {
  std::lock_guard<std::mutex> lock(savedMutex);
  for (auto it = saved.begin(); it != saved.end(); ++it)
    if (it->outputs == outputs) {
      saved.erase(it);
      break;
    }
  if (saved.size() >= kMaxSaved)
    saved.pop_front();
  saved.push_back({s.key(), outputs, hash, std::move(ws), std::move(arena), std::move(run)});
}

// What the training forward that wrote `outputs` kept (removed from the cache), or an empty
// entry.
Saved takeSaved(const Shape &s, const float *outputs, uint64_t hash) {
  std::lock_guard<std::mutex> lock(savedMutex);
  for (auto it = saved.begin(); it != saved.end(); ++it)
    if (it->outputs == outputs) {
      Saved found;
      if (it->key == s.key() && it->hash == hash)
        found = std::move(*it);
      saved.erase(it);
      return found;
    }
  return Saved();
}

//===- the kernels ------------------------------------------------------------------------===//

// A layer's operands, as the kernels receive them (attn's layouts; see attn/kernels.h for
// which a cell reads).
struct LayerOperands {
  Strided x, h0, c0, wih, whh, bih, bhh, wp, wproj;
};
// The backward's other operands: the gradients of the forward's results in, of its operands
// out.
struct LayerGradients {
  Strided dout, dhn, dcn, dx, dh0, dc0, dwih, dwhh, dbih, dbhh, dwp, dwproj;
};

Shape shapeOf(const char *kernel, const LayerOperands &o, const Strided &mask, int64_t kind,
              int64_t reverse, int64_t peephole, int64_t projection, int64_t masked) {
  const auto &[x, h0, c0, wih, whh, bih, bhh, wp, wproj] = o;
  if (kind != ATTN_RNN_VANILLA && kind != ATTN_RNN_GRU && kind != ATTN_RNN_LSTM)
    fail(kernel, "unknown cell kind " + std::to_string(kind));
  if ((peephole || projection) && kind != ATTN_RNN_LSTM)
    fail(kernel, "peepholes and projections need an LSTM");
  int64_t P = h0.sizes[1], H = projection ? wproj.sizes[0] : P;
  Shape s{kind, reverse ? 1 : 0, x.sizes[0], x.sizes[1], x.sizes[2], H, P, peephole ? 1 : 0,
          projection ? 1 : 0, masked ? 1 : 0};
  bool ok = h0.sizes[0] == s.B && wih.sizes[0] == s.I && wih.sizes[1] == s.gates() * s.H &&
            whh.sizes[0] == s.P && whh.sizes[1] == s.gates() * s.H &&
            (!peephole || (wp.sizes[0] == 3 && wp.sizes[1] == s.H)) &&
            (!projection || wproj.sizes[1] == s.P) &&
            (!masked || (mask.sizes[0] == s.B && mask.sizes[1] == s.T && mask.sizes[2] == 1));
  if (!ok)
    fail(kernel, "inconsistent shapes: x [" + std::to_string(s.B) + ", " + std::to_string(s.T) +
                     ", " + std::to_string(s.I) + "], h0 [" + std::to_string(h0.sizes[0]) +
                     ", " + std::to_string(s.H) + "], w_ih [" + std::to_string(wih.sizes[0]) +
                     ", " + std::to_string(wih.sizes[1]) + "]");
  return s;
}

// attn's weights `w` in the format `want`, in `arena`. A plain format with h innermost (the
// forward's) is written directly; another (the backward's, transposed) is reordered from dense
// ldigo: attn's buffer itself where it is one (not the GRU's, whose gates oneDNN orders
// otherwise), else a copy.
dnnl::memory weights(const Shape &s, const Strided &w, const md &denseDesc, const md &want,
                     Arena &arena) {
  dnnl::memory m = arena.make(want);
  if (std::optional<GateStrides> to = gateStrides(want)) {
    weightsIn(s, w, static_cast<float *>(m.get_data_handle()), *to);
    return m;
  }
  Floats copy;
  const float *dense = w.base;
  if (s.kind == ATTN_RNN_GRU || w.strides[1] != 1 || w.strides[0] != s.gates() * s.H) {
    copy = weightsIn(s, w);
    dense = copy.data();
  }
  dnnl::memory from = wrap(denseDesc, dense);
  dnnl::reorder(from, m).execute(stream(), from, m);
  stream().wait(); // before `copy` goes
  return m;
}

// The forward's dense inputs in oneDNN terms; its weights are made per primitive, in the
// format that primitive wants.
struct ForwardInputs {
  Shape shape;
  Strided wih, whh;
  md wLayerDense, wIterDense;
  Floats xTmp, h0Tmp, c0Tmp, peepTmp, projTmp, bias;
  Arena rounded; // x and h0 in bf16
  dnnl::memory x, h0, c0, b, peep, wProjPlain;
  ForwardInputs(const Shape &s, const Descs &d, const LayerOperands &o)
      : shape(s), wih(o.wih), whh(o.whh), wLayerDense(d.wLayerPlain), wIterDense(d.wIterPlain),
        bias(biasIn(s, o.bih, o.bhh)) {
    x = dataIn(d.layerInData, d.layerIn, readDense(o.x, xTmp), rounded);
    h0 = dataIn(d.iterData, d.iter, readDense(o.h0, h0Tmp), rounded);
    if (s.kind == ATTN_RNN_LSTM)
      c0 = wrap(d.iterC, readDense(o.c0, c0Tmp));
    b = wrap(d.bias, bias.data());
    if (s.peephole)
      peep = wrap(d.peephole, readDense(o.wp, peepTmp));
    if (s.projection) // attn's [H, P] is ldio
      wProjPlain = wrap(d.wProjPlain, readDense(o.wproj, projTmp));
  }
  dnnl::memory layerWeights(const md &want, Arena &arena) const {
    return weights(shape, wih, wLayerDense, want, arena);
  }
  dnnl::memory iterWeights(const md &want, Arena &arena) const {
    return weights(shape, whh, wIterDense, want, arena);
  }
};

// Runs a forward primitive of pd `pd`; `ws` is null for inference.
template <typename Cell>
void runForward(const Shape &s, const typename Cell::Fwd &prim,
                const typename Cell::Fwd::primitive_desc &pd, const ForwardInputs &in,
                const dnnl::memory &out, const dnnl::memory &hn, const dnnl::memory &cn,
                const dnnl::memory *ws) {
  Arena arena;
  std::unordered_map<int, dnnl::memory> args{
      {DNNL_ARG_SRC_LAYER, in.x},
      {DNNL_ARG_SRC_ITER, in.h0},
      {DNNL_ARG_WEIGHTS_LAYER, in.layerWeights(pd.weights_layer_desc(), arena)},
      {DNNL_ARG_WEIGHTS_ITER, in.iterWeights(pd.weights_iter_desc(), arena)},
      {DNNL_ARG_BIAS, in.b},
      {DNNL_ARG_DST_LAYER, out},
      {DNNL_ARG_DST_ITER, hn}};
  if (s.kind == ATTN_RNN_LSTM) {
    args[DNNL_ARG_SRC_ITER_C] = in.c0;
    args[DNNL_ARG_DST_ITER_C] = cn;
  }
  if (s.peephole)
    args[DNNL_ARG_WEIGHTS_PEEPHOLE] = in.peep;
  if (s.projection)
    args[DNNL_ARG_WEIGHTS_PROJECTION] = inFormat(in.wProjPlain, pd.weights_projection_desc(), arena);
  if (ws)
    args[DNNL_ARG_WORKSPACE] = *ws;
  addScratchpad(args, pd.scratchpad_desc());
  prim.execute(stream(), args);
  stream().wait();
}

template <typename Cell>
void forward(const Shape &s, const LayerOperands &o, const Strided &out, const Strided &hn,
             const Strided &cn, bool training) {
  Descs d(s);
  ForwardInputs in(s, d, o);
  Floats outTmp, hnTmp, cnTmp;
  float *outP = writeDense(out, outTmp), *hnP = writeDense(hn, hnTmp);
  float *cnP = s.kind == ATTN_RNN_LSTM ? writeDense(cn, cnTmp) : nullptr;
  Arena widened;
  DataOut results{widened};
  dnnl::memory outM = results.to(d.layerOutData, d.layerOut, outP);
  dnnl::memory hnM = results.to(d.iterData, d.iter, hnP);
  dnnl::memory cnM = cnP ? wrap(d.iterC, cnP) : dnnl::memory();
  training = training && keepWorkspaces();
  std::shared_ptr<Prims<Cell>> entry = forwardPrims<Cell>(s, training);
  Prims<Cell> &p = *entry;
  if (training) {
    Arena arena;
    dnnl::memory ws = arena.make(p.trainingPd.workspace_desc());
    runForward<Cell>(s, p.training, p.trainingPd, in, outM, hnM, cnM, &ws);
    results.widen();
    keepWorkspace(s, out.base, hashOf(outP, out.numel()), ws, std::move(arena));
  } else {
    runForward<Cell>(s, p.inference, p.inferencePd, in, outM, hnM, cnM, nullptr);
    results.widen();
  }
  writeBack(out, outTmp);
  writeBack(hn, hnTmp);
  if (cnP)
    writeBack(cn, cnTmp);
}

template <typename Cell>
void backward(const Shape &s, const LayerOperands &o, const Strided &out, const Strided &hn,
              const Strided &cn, LayerGradients g) {
  auto &[dout, dhn, dcn, dx, dh0, dc0, dwih, dwhh, dbih, dbhh, dwp, dwproj] = g;
  Descs d(s);
  bool lstm = s.kind == ATTN_RNN_LSTM;
  ForwardInputs in(s, d, o);
  std::shared_ptr<Prims<Cell>> entry = backwardPrims<Cell>(s);
  Prims<Cell> &p = *entry;

  Floats outTmp, hnTmp, cnTmp;
  const float *outP = readDense(out, outTmp);
  Saved kept = takeSaved(s, out.base, hashOf(outP, out.numel()));
  Arena &arena = kept.arena;
  dnnl::memory ws = kept.workspace;
  dnnl::memory outM, hnM, cnM;
  if (ws) { // (a bf16 layer's f32 results round back to the bf16 ones exactly)
    ++workspaceHits;
    outM = dataIn(d.layerOutData, d.layerOut, outP, arena);
    hnM = dataIn(d.iterData, d.iter, readDense(hn, hnTmp), arena);
    if (lstm)
      cnM = wrap(d.iterC, readDense(cn, cnTmp));
  } else { // recompute the training forward for its workspace
    ++workspaceMisses;
    ws = arena.make(p.trainingPd.workspace_desc());
    outM = arena.make(d.layerOutData);
    hnM = arena.make(d.iterData);
    if (lstm)
      cnM = arena.make(d.iterC);
    runForward<Cell>(s, p.training, p.trainingPd, in, outM, hnM, cnM, &ws);
  }

  Floats doutTmp, dhnTmp, dcnTmp, dxTmp, dh0Tmp, dc0Tmp;
  dnnl::memory doutM = wrap(d.layerOut, readDense(dout, doutTmp));
  dnnl::memory dhnM = wrap(d.iter, readDense(dhn, dhnTmp));
  float *dxP = writeDense(dx, dxTmp), *dh0P = writeDense(dh0, dh0Tmp);
  float *dc0P = lstm ? writeDense(dc0, dc0Tmp) : nullptr;

  // Weight gradients accumulate in oneDNN: start from zeros.
  dnnl::memory dwLayer = arena.make(p.backwardPd.diff_weights_layer_desc());
  dnnl::memory dwIter = arena.make(p.backwardPd.diff_weights_iter_desc());
  Floats dbias(s.biasGates() * s.H, 0.0f);
  std::memset(dwLayer.get_data_handle(), 0, p.backwardPd.diff_weights_layer_desc().get_size());
  std::memset(dwIter.get_data_handle(), 0, p.backwardPd.diff_weights_iter_desc().get_size());
  dnnl::memory dbM = wrap(d.bias, dbias.data());
  Floats dpeep(s.peephole ? 3 * s.H : 0, 0.0f);
  dnnl::memory dwProj;
  if (s.projection) {
    dwProj = arena.make(p.backwardPd.diff_weights_projection_desc());
    std::memset(dwProj.get_data_handle(), 0, p.backwardPd.diff_weights_projection_desc().get_size());
  }

  std::unordered_map<int, dnnl::memory> args{
      {DNNL_ARG_SRC_LAYER, in.x},
      {DNNL_ARG_SRC_ITER, in.h0},
      {DNNL_ARG_WEIGHTS_LAYER, in.layerWeights(p.backwardPd.weights_layer_desc(), arena)},
      {DNNL_ARG_WEIGHTS_ITER, in.iterWeights(p.backwardPd.weights_iter_desc(), arena)},
      {DNNL_ARG_BIAS, in.b},
      {DNNL_ARG_DST_LAYER, outM},
      {DNNL_ARG_DST_ITER, hnM},
      {DNNL_ARG_WORKSPACE, ws},
      {DNNL_ARG_DIFF_DST_LAYER, doutM},
      {DNNL_ARG_DIFF_DST_ITER, dhnM},
      {DNNL_ARG_DIFF_SRC_LAYER, wrap(d.layerIn, dxP)},
      {DNNL_ARG_DIFF_SRC_ITER, wrap(d.iter, dh0P)},
      {DNNL_ARG_DIFF_WEIGHTS_LAYER, dwLayer},
      {DNNL_ARG_DIFF_WEIGHTS_ITER, dwIter},
      {DNNL_ARG_DIFF_BIAS, dbM}};
  if (lstm) {
    args[DNNL_ARG_SRC_ITER_C] = in.c0;
    args[DNNL_ARG_DST_ITER_C] = cnM;
    args[DNNL_ARG_DIFF_DST_ITER_C] = wrap(d.iterC, readDense(dcn, dcnTmp));
    args[DNNL_ARG_DIFF_SRC_ITER_C] = wrap(d.iterC, dc0P);
  }
  if (s.peephole) {
    args[DNNL_ARG_WEIGHTS_PEEPHOLE] = in.peep;
    args[DNNL_ARG_DIFF_WEIGHTS_PEEPHOLE] = wrap(d.peephole, dpeep.data());
  }
  if (s.projection) {
    args[DNNL_ARG_WEIGHTS_PROJECTION] =
        inFormat(in.wProjPlain, p.backwardPd.weights_projection_desc(), arena);
    args[DNNL_ARG_DIFF_WEIGHTS_PROJECTION] = dwProj;
  }
  addScratchpad(args, p.backwardPd.scratchpad_desc());
  p.backward.execute(stream(), args);
  stream().wait();

  weightsOut(s, dwLayer, d.wLayerPlain, dwih, arena);
  weightsOut(s, dwIter, d.wIterPlain, dwhh, arena);
  biasOut(s, dbias.data(), dbih, dbhh);
  if (s.peephole)
    copyInto(dwp, dpeep.data());
  if (s.projection) {
    dnnl::memory plain = inFormat(dwProj, d.wProjPlain, arena);
    stream().wait();
    const float *q = static_cast<const float *>(plain.get_data_handle());
    copyInto(dwproj, q);
  }
  writeBack(dx, dxTmp);
  writeBack(dh0, dh0Tmp);
  if (dc0P)
    writeBack(dc0, dc0Tmp);
}

//===- masked layers: packed rows ---------------------------------------------------------===//

// How a masked layer's rows are packed: each row's steps of mask 1 in processing order
// (backwards in time when reversed), the rows sorted by how many they have, longest first.
// Segment s runs packed steps [k0, k1) of the first `rows` sorted rows: the rows still
// running over those steps, so each segment is one oneDNN call over a dense batch.
struct Packing {
  struct Segment {
    int64_t k0, k1, rows;
  };
  std::vector<int64_t> order;             // sorted position r -> row b
  std::vector<std::vector<int64_t>> time; // per sorted r: the time of each packed step
  std::vector<Segment> segments;
  std::vector<int64_t> segmentOf; // packed step k -> its segment
  // A mask with values other than 0 and 1 has no packed form: every step of every row is
  // then a step of its own segment, and the state is blended, s + m (cell - s), with
  // weight[r * T + k] the mask of row r at its k-th step.
  bool blend = false;
  std::vector<float> weight;
  int64_t length(int64_t r) const { return (int64_t)time[r].size(); }
};

// The processing order of times: forwards, or backwards when reversed.
int64_t timeAt(const Shape &s, int64_t i) { return s.reverse ? s.T - 1 - i : i; }

// The blended form of a mask that is not all 0 and 1 (Packing::blend).
Packing blended(const Shape &s, const Strided &mask) {
  Packing p;
  p.blend = true;
  for (int64_t b = 0; b < s.B; ++b) {
    p.order.push_back(b);
    p.time.emplace_back();
    for (int64_t i = 0; i < s.T; ++i) {
      int64_t t = timeAt(s, i);
      p.time.back().push_back(t);
      p.weight.push_back(mask.base[b * mask.strides[0] + t * mask.strides[1]]);
    }
  }
  for (int64_t k = 0; k < s.T; ++k) {
    p.segments.push_back({k, k + 1, s.B});
    p.segmentOf.push_back(k);
  }
  return p;
}

Packing pack(const Shape &s, const Strided &mask) {
  Packing p;
  std::vector<std::vector<int64_t>> times(s.B);
  for (int64_t b = 0; b < s.B; ++b)
    for (int64_t i = 0; i < s.T; ++i) {
      int64_t t = timeAt(s, i);
      float m = mask.base[b * mask.strides[0] + t * mask.strides[1]];
      if (m == 1.0f)
        times[b].push_back(t);
      else if (m != 0.0f)
        return blended(s, mask);
    }
  p.order.resize(s.B);
  for (int64_t b = 0; b < s.B; ++b)
    p.order[b] = b;
  std::stable_sort(p.order.begin(), p.order.end(),
                   [&](int64_t a, int64_t b) { return times[a].size() > times[b].size(); });
  for (int64_t b : p.order)
    p.time.push_back(std::move(times[b]));
  int64_t longest = s.B ? p.length(0) : 0;
  int64_t rows = s.B;
  for (int64_t k = 0; k < longest; ++k) {
    while (p.length(rows - 1) <= k)
      --rows;
    if (p.segments.empty() || p.segments.back().rows != rows)
      p.segments.push_back({k, k + 1, rows});
    else
      p.segments.back().k1 = k + 1;
    p.segmentOf.push_back((int64_t)p.segments.size() - 1);
  }
  return p;
}

// A state [B, W] with its rows in the packing's sorted order, dense.
Floats sortedRows(const Packing &p, const Strided &state) {
  int64_t rows = state.sizes[0], width = state.sizes[1];
  Floats out(rows * width);
  for (int64_t r = 0; r < rows; ++r)
    copyStrided(out.data() + r * width, 1, state.base + p.order[r] * state.strides[0],
                state.strides[1], width);
  return out;
}

// Plain weights in whatever formats one call's primitives want, each reordered once.
struct Reordered {
  dnnl::memory plain;
  Arena arena;
  std::vector<std::pair<md, dnnl::memory>> made;
  dnnl::memory in(const md &want) {
    for (auto &[d, m] : made)
      if (d == want)
        return m;
    made.push_back({want, inFormat(plain, want, arena)});
    return made.back().second;
  }
};

// One segment of a masked forward, as its backward needs it.
struct SegmentRun {
  Shape shape;
  Floats x, y, h0, hn, c0, cn; // dense [rows, T, I], [rows, T, P], [rows, P], [rows, H]
  Floats kept, keptC;          // blended: the states after the step, [rows, P], [rows, H]
  dnnl::memory workspace;
  Arena arena; // the workspace's buffer
};
// A layer's weights in oneDNN's plain layouts (its gate order, the GRU's four biases), and
// in the formats its primitives want, each reordered once: the forward's serve its backward.
struct LayerWeights {
  Floats wLayer, wIter, bias, peep, proj;
  Reordered layer, iter, projection;
  dnnl::memory peephole;
  LayerWeights(const Shape &s, const LayerOperands &o)
      : wLayer(weightsIn(s, o.wih)), wIter(weightsIn(s, o.whh)), bias(biasIn(s, o.bih, o.bhh)) {
    Descs d(s);
    layer.plain = wrap(d.wLayerPlain, wLayer.data());
    iter.plain = wrap(d.wIterPlain, wIter.data());
    // Copies: the backward may outlive the caller's buffers.
    if (s.peephole) {
      peep = copyOf(o.wp);
      peephole = wrap(d.peephole, peep.data());
    }
    if (s.projection) {
      proj = copyOf(o.wproj);
      projection.plain = wrap(d.wProjPlain, proj.data());
    }
  }
};

struct MaskedRun {
  std::unique_ptr<LayerWeights> weights;
  std::vector<SegmentRun> segments;
  // Whether this run is of packing `p` (the backward's): the cache checks the outputs, not
  // the mask.
  bool of(const Packing &p) const {
    if (segments.size() != p.segments.size())
      return false;
    for (size_t g = 0; g < segments.size(); ++g)
      if (segments[g].shape.B != p.segments[g].rows ||
          segments[g].shape.T != p.segments[g].k1 - p.segments[g].k0 ||
          segments[g].kept.empty() != !p.blend)
        return false;
    return true;
  }
};

// The arguments a segment's forward and its backward share: its inputs and outputs, and the
// weights in the formats `pd` (either's primitive descriptor) wants. The forward passes
// `results`, where its outputs are written (widened from bf16 there); the backward reads
// them (rounded into `arena`), as it reads the inputs.
template <typename Pd>
std::unordered_map<int, dnnl::memory> segmentArgs(const Shape &s, SegmentRun &seg, const Descs &d,
                                                  LayerWeights &w, const Pd &pd, Arena &arena,
                                                  DataOut *results) {
  auto dataOut = [&](const md &want, const md &plain, Floats &v) {
    return results ? results->to(want, plain, v.data()) : dataIn(want, plain, v.data(), arena);
  };
  std::unordered_map<int, dnnl::memory> args{
      {DNNL_ARG_SRC_LAYER, dataIn(d.layerInData, d.layerIn, seg.x.data(), arena)},
      {DNNL_ARG_SRC_ITER, dataIn(d.iterData, d.iter, seg.h0.data(), arena)},
      {DNNL_ARG_WEIGHTS_LAYER, w.layer.in(pd.weights_layer_desc())},
      {DNNL_ARG_WEIGHTS_ITER, w.iter.in(pd.weights_iter_desc())},
      {DNNL_ARG_BIAS, wrap(d.bias, w.bias.data())},
      {DNNL_ARG_DST_LAYER, dataOut(d.layerOutData, d.layerOut, seg.y)},
      {DNNL_ARG_DST_ITER, dataOut(d.iterData, d.iter, seg.hn)}};
  if (s.kind == ATTN_RNN_LSTM) {
    args[DNNL_ARG_SRC_ITER_C] = wrap(d.iterC, seg.c0.data());
    args[DNNL_ARG_DST_ITER_C] = wrap(d.iterC, seg.cn.data());
  }
  if (s.peephole)
    args[DNNL_ARG_WEIGHTS_PEEPHOLE] = w.peephole;
  if (s.projection)
    args[DNNL_ARG_WEIGHTS_PROJECTION] = w.projection.in(pd.weights_projection_desc());
  return args;
}

// The segment's shape: a forward (packing already put the steps in processing order) layer
// over `rows` rows and `k1 - k0` steps.
Shape segmentShape(const Shape &s, const Packing::Segment &g) {
  return Shape{s.kind, 0, g.rows, g.k1 - g.k0, s.I, s.H, s.P, s.peephole, s.projection, 0, s.bf16};
}

// Runs a masked layer segment by segment, keeping what each segment's backward needs.
template <typename Cell>
std::shared_ptr<MaskedRun> runMasked(const Shape &s, const Packing &p, const LayerOperands &o,
                                     bool training) {
  const Strided &x = o.x;
  bool lstm = s.kind == ATTN_RNN_LSTM;
  auto run = std::make_shared<MaskedRun>();
  run->weights = std::make_unique<LayerWeights>(s, o);
  LayerWeights &w = *run->weights;
  // The running states, by sorted row: h [B, P], c [B, H].
  Floats h = sortedRows(p, o.h0), c = lstm ? sortedRows(p, o.c0) : Floats();
  for (const Packing::Segment &g : p.segments) {
    SegmentRun seg{segmentShape(s, g)};
    const Shape &z = seg.shape;
    Descs d(z);
    seg.x.resize(z.B * z.T * z.I);
    for (int64_t r = 0; r < z.B; ++r)
      for (int64_t j = 0; j < z.T; ++j) {
        const float *src = x.base + p.order[r] * x.strides[0] + p.time[r][g.k0 + j] * x.strides[1];
        copyStrided(seg.x.data() + (r * z.T + j) * z.I, 1, src, x.strides[2], z.I);
      }
    seg.y.resize(z.B * z.T * z.P);
    seg.h0.assign(h.begin(), h.begin() + z.B * z.P);
    seg.hn.resize(z.B * z.P);
    if (lstm) {
      seg.c0.assign(c.begin(), c.begin() + z.B * z.H);
      seg.cn.resize(z.B * z.H);
    }
    std::shared_ptr<Prims<Cell>> entry = forwardPrims<Cell>(z, training);
    Prims<Cell> &prims = *entry;
    const auto &pd = training ? prims.trainingPd : prims.inferencePd;
    Arena converted;
    DataOut results{converted};
    std::unordered_map<int, dnnl::memory> args = segmentArgs(s, seg, d, w, pd, converted, &results);
    if (training) {
      seg.workspace = seg.arena.make(pd.workspace_desc());
      args[DNNL_ARG_WORKSPACE] = seg.workspace;
    }
    addScratchpad(args, pd.scratchpad_desc());
    (training ? prims.training : prims.inference).execute(stream(), args);
    results.widen();
    if (p.blend) { // s + m (cell - s), per row
      for (int64_t r = 0; r < z.B; ++r) {
        float m = p.weight[r * s.T + g.k0];
        for (int64_t j = 0; j < s.P; ++j) {
          float &hv = h[r * s.P + j];
          hv += m * (seg.hn[r * s.P + j] - hv);
        }
        for (int64_t j = 0; lstm && j < s.H; ++j) {
          float &cv = c[r * s.H + j];
          cv += m * (seg.cn[r * s.H + j] - cv);
        }
      }
      seg.kept.assign(h.begin(), h.end());
      if (lstm)
        seg.keptC.assign(c.begin(), c.end());
    } else {
      std::copy(seg.hn.begin(), seg.hn.end(), h.begin());
      if (lstm)
        std::copy(seg.cn.begin(), seg.cn.end(), c.begin());
    }
    run->segments.push_back(std::move(seg));
  }
  return run;
}

// Where sorted row r's packed step k lives: its segment, and the offset of its [P] vector in
// that segment's [rows, T, P] outputs (and their gradients).
std::pair<int64_t, int64_t> packedAt(const Shape &s, const Packing &p, int64_t r, int64_t k) {
  int64_t g = p.segmentOf[k];
  const Packing::Segment &seg = p.segments[g];
  return {g, (r * (seg.k1 - seg.k0) + k - seg.k0) * s.P};
}

template <typename Cell>
void forwardMasked(const Shape &s, const Packing &p, const LayerOperands &o, const Strided &out,
                   const Strided &hn, const Strided &cn, bool training) {
  const Strided &h0 = o.h0, &c0 = o.c0;
  training = training && keepWorkspaces();
  std::shared_ptr<MaskedRun> run = runMasked<Cell>(s, p, o, training);
  bool lstm = s.kind == ATTN_RNN_LSTM;
  // Every time step's output is the state after the row's latest packed step (h0 before its
  // first); the final states are the last ones.
  for (int64_t r = 0; r < s.B; ++r) {
    int64_t b = p.order[r], k = 0;
    const float *cur = h0.base + b * h0.strides[0];
    int64_t curStride = h0.strides[1];
    for (int64_t i = 0; i < s.T; ++i) {
      int64_t t = timeAt(s, i);
      if (k < p.length(r) && p.time[r][k] == t) {
        auto [g, at] = packedAt(s, p, r, k++);
        const SegmentRun &seg = run->segments[g];
        cur = (p.blend ? seg.kept : seg.y).data() + at;
        curStride = 1;
      }
      copyStrided(out.base + b * out.strides[0] + t * out.strides[1], out.strides[2], cur,
                  curStride, s.P);
    }
    for (int64_t j = 0; j < s.P; ++j)
      hn.base[b * hn.strides[0] + j * hn.strides[1]] = cur[j * curStride];
    if (lstm) {
      // c after the row's last segment: that segment's final c (or c0 without steps).
      const float *cFinal = c0.base + b * c0.strides[0];
      int64_t cStride = c0.strides[1];
      if (p.length(r) > 0) {
        const SegmentRun &last = run->segments[p.segmentOf[p.length(r) - 1]];
        cFinal = (p.blend ? last.keptC : last.cn).data() + r * s.H;
        cStride = 1;
      }
      for (int64_t j = 0; j < s.H; ++j)
        cn.base[b * cn.strides[0] + j * cn.strides[1]] = cFinal[j * cStride];
    }
  }
  if (training) {
    Floats tmp;
    keepWorkspace(s, out.base, hashOf(readDense(out, tmp), out.numel()), dnnl::memory(), Arena(),
                  run);
  }
}

template <typename Cell>
void backwardMasked(const Shape &s, const Packing &p, const LayerOperands &o,
                    const Strided &out, LayerGradients g) {
  auto &[dout, dhn, dcn, dx, dh0, dc0, dwih, dwhh, dbih, dbhh, dwp, dwproj] = g;
  bool lstm = s.kind == ATTN_RNN_LSTM;
  Floats outTmp;
  std::shared_ptr<MaskedRun> run =
      takeSaved(s, out.base, hashOf(readDense(out, outTmp), out.numel())).run;
  if (run && run->of(p)) {
    ++workspaceHits;
  } else {
    ++workspaceMisses;
    run = runMasked<Cell>(s, p, o, /*training=*/true);
  }
  LayerWeights &w = *run->weights;
  Descs whole(s);

  // The gradient reaching each packed output: d_outputs of every time step that repeats it.
  // A packed step's own time comes first in processing order, so it initialises its slot
  // and the masked steps after it add to theirs. Steps before a row's first packed step
  // repeat h0: theirs goes to d_h0.
  std::vector<Floats> dy(p.segments.size());
  for (size_t g = 0; g < p.segments.size(); ++g)
    dy[g].resize(run->segments[g].y.size());
  Floats dhFirst(s.B * s.P, 0.0f); // by row b
  for (int64_t r = 0; r < s.B; ++r) {
    int64_t b = p.order[r], k = -1;
    for (int64_t i = 0; i < s.T; ++i) {
      int64_t t = timeAt(s, i);
      bool own = k + 1 < p.length(r) && p.time[r][k + 1] == t;
      k += own;
      const float *g = dout.base + b * dout.strides[0] + t * dout.strides[1];
      if (k < 0) {
        addStrided(dhFirst.data() + b * s.P, g, dout.strides[2], s.P);
        continue;
      }
      auto [seg, at] = packedAt(s, p, r, k);
      if (own)
        copyStrided(dy[seg].data() + at, 1, g, dout.strides[2], s.P);
      else
        addStrided(dy[seg].data() + at, g, dout.strides[2], s.P);
    }
  }
  // The state gradients carried between segments, by sorted row: d_h_n (d_c_n) to start.
  Floats dh = sortedRows(p, dhn), dc = lstm ? sortedRows(p, dcn) : Floats();
  // d_x is 0 at the masked steps; the segments write the packed ones.
  std::vector<char> packed(s.T);
  for (int64_t r = 0; r < s.B; ++r) {
    std::fill(packed.begin(), packed.end(), 0);
    for (int64_t t : p.time[r])
      packed[t] = 1;
    for (int64_t t = 0; t < s.T; ++t)
      if (!packed[t])
        for (int64_t j = 0; j < s.I; ++j)
          dx.base[p.order[r] * dx.strides[0] + t * dx.strides[1] + j * dx.strides[2]] = 0.0f;
  }
  // Weight gradients accumulate in oneDNN, over every segment: one zeroed accumulator per
  // format the primitives want.
  std::vector<std::pair<md, dnnl::memory>> dLayer, dIter, dProj;
  Arena arena;
  auto accumulator = [&](std::vector<std::pair<md, dnnl::memory>> &all, const md &want) {
    for (auto &[d, m] : all)
      if (d == want)
        return m;
    dnnl::memory m = arena.make(want);
    std::memset(m.get_data_handle(), 0, want.get_size());
    all.push_back({want, m});
    return m;
  };
  Floats dbias(s.biasGates() * s.H, 0.0f), dpeep(s.peephole ? 3 * s.H : 0, 0.0f);
  for (size_t g = p.segments.size(); g-- > 0;) {
    SegmentRun &seg = run->segments[g];
    const Shape &z = seg.shape;
    const Packing::Segment &range = p.segments[g];
    Descs d(z);
    std::shared_ptr<Prims<Cell>> entry = backwardPrims<Cell>(z);
    Prims<Cell> &prims = *entry;
    const auto &pd = prims.backwardPd;
    Floats dxs(z.B * z.T * z.I), dhIn(z.B * z.P), dcIn(lstm ? z.B * z.H : 0);
    Floats dhOut(dh.begin(), dh.begin() + z.B * z.P), dcOut;
    if (lstm)
      dcOut.assign(dc.begin(), dc.begin() + z.B * z.H);
    // Blended, s_t = s + m (cell - s): the cell's outputs get m times the gradient of s_t
    // (its output's and its carried one's, summed), and s directly the rest.
    Floats heldH, heldC;
    if (p.blend) {
      heldH.resize(z.B * z.P);
      if (lstm)
        heldC.resize(z.B * z.H);
      for (int64_t r = 0; r < z.B; ++r) {
        float m = p.weight[r * s.T + range.k0];
        for (int64_t j = 0; j < s.P; ++j) {
          int64_t q = r * s.P + j;
          float gh = dhOut[q] + dy[g][q];
          dy[g][q] = m * gh;
          dhOut[q] = 0.0f;
          heldH[q] = (1.0f - m) * gh;
        }
        for (int64_t j = 0; lstm && j < s.H; ++j) {
          int64_t q = r * s.H + j;
          heldC[q] = (1.0f - m) * dcOut[q];
          dcOut[q] *= m;
        }
      }
    }
    Arena rounded;
    std::unordered_map<int, dnnl::memory> args =
        segmentArgs(s, seg, d, w, pd, rounded, /*results=*/nullptr);
    args[DNNL_ARG_WORKSPACE] = seg.workspace;
    args[DNNL_ARG_DIFF_DST_LAYER] = wrap(d.layerOut, dy[g].data());
    args[DNNL_ARG_DIFF_DST_ITER] = wrap(d.iter, dhOut.data());
    args[DNNL_ARG_DIFF_SRC_LAYER] = wrap(d.layerIn, dxs.data());
    args[DNNL_ARG_DIFF_SRC_ITER] = wrap(d.iter, dhIn.data());
    args[DNNL_ARG_DIFF_WEIGHTS_LAYER] = accumulator(dLayer, pd.diff_weights_layer_desc());
    args[DNNL_ARG_DIFF_WEIGHTS_ITER] = accumulator(dIter, pd.diff_weights_iter_desc());
    args[DNNL_ARG_DIFF_BIAS] = wrap(d.bias, dbias.data());
    if (lstm) {
      args[DNNL_ARG_DIFF_DST_ITER_C] = wrap(d.iterC, dcOut.data());
      args[DNNL_ARG_DIFF_SRC_ITER_C] = wrap(d.iterC, dcIn.data());
    }
    if (s.peephole)
      args[DNNL_ARG_DIFF_WEIGHTS_PEEPHOLE] = wrap(d.peephole, dpeep.data());
    if (s.projection)
      args[DNNL_ARG_DIFF_WEIGHTS_PROJECTION] =
          accumulator(dProj, pd.diff_weights_projection_desc());
    addScratchpad(args, pd.scratchpad_desc());
    prims.backward.execute(stream(), args);
    stream().wait();
    for (size_t q = 0; q < heldH.size(); ++q)
      dhIn[q] += heldH[q];
    for (size_t q = 0; q < heldC.size(); ++q)
      dcIn[q] += heldC[q];
    std::copy(dhIn.begin(), dhIn.end(), dh.begin());
    if (lstm)
      std::copy(dcIn.begin(), dcIn.end(), dc.begin());
    for (int64_t r = 0; r < z.B; ++r)
      for (int64_t j = 0; j < z.T; ++j) {
        float *dst = dx.base + p.order[r] * dx.strides[0] + p.time[r][range.k0 + j] * dx.strides[1];
        copyStrided(dst, dx.strides[2], dxs.data() + (r * z.T + j) * z.I, 1, z.I);
      }
  }
  for (int64_t r = 0; r < s.B; ++r) {
    int64_t b = p.order[r];
    for (int64_t j = 0; j < s.P; ++j)
      dh0.base[b * dh0.strides[0] + j * dh0.strides[1]] = dh[r * s.P + j] + dhFirst[b * s.P + j];
    for (int64_t j = 0; lstm && j < s.H; ++j)
      dc0.base[b * dc0.strides[0] + j * dc0.strides[1]] = dc[r * s.H + j];
  }
  // The accumulated weight gradients in the plain format, summed over formats.
  auto plainSum = [&](std::vector<std::pair<md, dnnl::memory>> &all, const md &plain) {
    Floats sum(plain.get_size() / sizeof(float));
    if (all.empty()) { // no segment ran
      std::fill(sum.begin(), sum.end(), 0.0f);
      return sum;
    }
    // The first format reordered into the sum itself; the others added to it.
    dnnl::memory first = wrap(plain, sum.data());
    dnnl::reorder(all[0].second, first).execute(stream(), all[0].second, first);
    stream().wait();
    for (size_t f = 1; f < all.size(); ++f) {
      dnnl::memory pm = inFormat(all[f].second, plain, arena);
      stream().wait();
      const float *q = static_cast<const float *>(pm.get_data_handle());
      for (size_t i = 0; i < sum.size(); ++i)
        sum[i] += q[i];
    }
    return sum;
  };
  weightsOut(s, plainSum(dLayer, whole.wLayerPlain).data(), dwih);
  weightsOut(s, plainSum(dIter, whole.wIterPlain).data(), dwhh);
  biasOut(s, dbias.data(), dbih, dbhh);
  if (s.peephole)
    copyInto(dwp, dpeep.data());
  if (s.projection) {
    Floats sum = plainSum(dProj, whole.wProjPlain);
    copyInto(dwproj, sum.data());
  }
}

} // namespace

size_t recurrentWorkspaceHits() { return workspaceHits; }
size_t recurrentWorkspaceMisses() { return workspaceMisses; }
void clearRecurrentWorkspaces() {
  std::lock_guard<std::mutex> lock(savedMutex);
  saved.clear();
}

} // namespace attn::cpu

using namespace attn::cpu;

namespace {
// The kernels' operands from their memrefs.
LayerOperands operandsOf(attn_memref3 *x, attn_memref2 *h0, attn_memref2 *c0, attn_memref2 *w_ih,
                         attn_memref2 *w_hh, attn_memref1 *b_ih, attn_memref1 *b_hh,
                         attn_memref2 *w_peephole, attn_memref2 *w_proj) {
  return {strided(x, 3),    strided(h0, 2),   strided(c0, 2),
          strided(w_ih, 2), strided(w_hh, 2), strided(b_ih, 1),
          strided(b_hh, 1), strided(w_peephole, 2), strided(w_proj, 2)};
}

// Runs `body` with the cell type of `kind`; an error (oneDNN's, or any other exception)
// aborts with the kernel's name: these functions are called from compiled code.
template <typename Body> void withCell(const char *kernel, const Shape &s, Body body) {
  try {
    if (s.kind == ATTN_RNN_LSTM)
      body(Lstm{});
    else if (s.kind == ATTN_RNN_GRU)
      body(Gru{});
    else
      body(Vanilla{});
  } catch (const dnnl::error &e) {
    fail(kernel, std::string("oneDNN error: ") + e.what() + " (" + s.str() + ")");
  } catch (const std::exception &e) { // out of memory for a temporary, say: not past the C ABI
    fail(kernel, std::string(e.what()) + " (" + s.str() + ")");
  }
}
// The layer's forward, its data in f32 or bf16 (`bf16`).
void forwardKernel(const char *kName, bool bf16, attn_memref3 *x, attn_memref2 *h0,
                   attn_memref2 *c0, attn_memref2 *w_ih, attn_memref2 *w_hh, attn_memref1 *b_ih,
                   attn_memref1 *b_hh, attn_memref2 *w_peephole, attn_memref2 *w_proj,
                   attn_memref3 *mask, attn_memref3 *outputs, attn_memref2 *h_n, attn_memref2 *c_n,
                   int64_t kind, int64_t reverse, int64_t training, int64_t peephole,
                   int64_t projection, int64_t masked) {
  LayerOperands o = operandsOf(x, h0, c0, w_ih, w_hh, b_ih, b_hh, w_peephole, w_proj);
  Strided smask = strided(mask, 3), out = strided(outputs, 3), hn = strided(h_n, 2),
          cn = strided(c_n, 2);
  Shape s = shapeOf(kName, o, smask, kind, reverse, peephole, projection, masked);
  s.bf16 = bf16;
  if (bf16 && projection) // oneDNN 2.6's bf16 LSTMP computes another layer (RecurrentTest)
    fail(kName, "no bf16 LSTM with a projection");
  withCell(kName, s, [&](auto cell) {
    using Cell = decltype(cell);
    if (masked)
      forwardMasked<Cell>(s, pack(s, smask), o, out, hn, cn, training != 0);
    else
      forward<Cell>(s, o, out, hn, cn, training != 0);
  });
}

void backwardKernel(const char *kName, bool bf16, attn_memref3 *x, attn_memref2 *h0,
                    attn_memref2 *c0, attn_memref2 *w_ih, attn_memref2 *w_hh, attn_memref1 *b_ih,
                    attn_memref1 *b_hh, attn_memref2 *w_peephole, attn_memref2 *w_proj,
                    attn_memref3 *mask, attn_memref3 *outputs, attn_memref2 *h_n, attn_memref2 *c_n,
                    attn_memref3 *d_outputs, attn_memref2 *d_h_n, attn_memref2 *d_c_n,
                    attn_memref3 *d_x, attn_memref2 *d_h0, attn_memref2 *d_c0, attn_memref2 *d_w_ih,
                    attn_memref2 *d_w_hh, attn_memref1 *d_b_ih, attn_memref1 *d_b_hh,
                    attn_memref2 *d_w_peephole, attn_memref2 *d_w_proj, int64_t kind,
                    int64_t reverse, int64_t peephole, int64_t projection, int64_t masked) {
  LayerOperands o = operandsOf(x, h0, c0, w_ih, w_hh, b_ih, b_hh, w_peephole, w_proj);
  LayerGradients g{strided(d_outputs, 3), strided(d_h_n, 2),    strided(d_c_n, 2),
                   strided(d_x, 3),       strided(d_h0, 2),     strided(d_c0, 2),
                   strided(d_w_ih, 2),    strided(d_w_hh, 2),   strided(d_b_ih, 1),
                   strided(d_b_hh, 1),    strided(d_w_peephole, 2), strided(d_w_proj, 2)};
  Strided smask = strided(mask, 3), out = strided(outputs, 3);
  Shape s = shapeOf(kName, o, smask, kind, reverse, peephole, projection, masked);
  s.bf16 = bf16;
  if (bf16 && projection) // oneDNN 2.6's bf16 LSTMP computes another layer (RecurrentTest)
    fail(kName, "no bf16 LSTM with a projection");
  withCell(kName, s, [&](auto cell) {
    using Cell = decltype(cell);
    if (masked)
      backwardMasked<Cell>(s, pack(s, smask), o, out, g);
    else
      backward<Cell>(s, o, out, strided(h_n, 2), strided(c_n, 2), g);
  });
}
} // namespace

#define ATTN_RNN_FORWARD_PARAMS                                                                    \
  attn_memref3 *x, attn_memref2 *h0, attn_memref2 *c0, attn_memref2 *w_ih, attn_memref2 *w_hh,     \
      attn_memref1 *b_ih, attn_memref1 *b_hh, attn_memref2 *w_peephole, attn_memref2 *w_proj,      \
      attn_memref3 *mask, attn_memref3 *outputs, attn_memref2 *h_n, attn_memref2 *c_n,             \
      int64_t kind, int64_t reverse, int64_t training, int64_t peephole, int64_t projection,       \
      int64_t masked
#define ATTN_RNN_FORWARD_ARGS                                                                      \
  x, h0, c0, w_ih, w_hh, b_ih, b_hh, w_peephole, w_proj, mask, outputs, h_n, c_n, kind, reverse,   \
      training, peephole, projection, masked
#define ATTN_RNN_BACKWARD_PARAMS                                                                   \
  attn_memref3 *x, attn_memref2 *h0, attn_memref2 *c0, attn_memref2 *w_ih, attn_memref2 *w_hh,     \
      attn_memref1 *b_ih, attn_memref1 *b_hh, attn_memref2 *w_peephole, attn_memref2 *w_proj,      \
      attn_memref3 *mask, attn_memref3 *outputs, attn_memref2 *h_n, attn_memref2 *c_n,             \
      attn_memref3 *d_outputs, attn_memref2 *d_h_n, attn_memref2 *d_c_n, attn_memref3 *d_x,        \
      attn_memref2 *d_h0, attn_memref2 *d_c0, attn_memref2 *d_w_ih, attn_memref2 *d_w_hh,          \
      attn_memref1 *d_b_ih, attn_memref1 *d_b_hh, attn_memref2 *d_w_peephole,                      \
      attn_memref2 *d_w_proj, int64_t kind, int64_t reverse, int64_t peephole, int64_t projection, \
      int64_t masked
#define ATTN_RNN_BACKWARD_ARGS                                                                     \
  x, h0, c0, w_ih, w_hh, b_ih, b_hh, w_peephole, w_proj, mask, outputs, h_n, c_n, d_outputs,       \
      d_h_n, d_c_n, d_x, d_h0, d_c0, d_w_ih, d_w_hh, d_b_ih, d_b_hh, d_w_peephole, d_w_proj, kind, \
      reverse, peephole, projection, masked

extern "C" ATTN_EXPORT void _mlir_ciface_attn_rt_rnn_forward(ATTN_RNN_FORWARD_PARAMS) {
  forwardKernel("attn_rt_rnn_forward", false, ATTN_RNN_FORWARD_ARGS);
}
extern "C" ATTN_EXPORT void _mlir_ciface_attn_rt_rnn_forward_bf16(ATTN_RNN_FORWARD_PARAMS) {
  forwardKernel("attn_rt_rnn_forward_bf16", true, ATTN_RNN_FORWARD_ARGS);
}
extern "C" ATTN_EXPORT void _mlir_ciface_attn_rt_rnn_backward(ATTN_RNN_BACKWARD_PARAMS) {
  backwardKernel("attn_rt_rnn_backward", false, ATTN_RNN_BACKWARD_ARGS);
}
extern "C" ATTN_EXPORT void _mlir_ciface_attn_rt_rnn_backward_bf16(ATTN_RNN_BACKWARD_PARAMS) {
  backwardKernel("attn_rt_rnn_backward_bf16", true, ATTN_RNN_BACKWARD_ARGS);
}
