// model.conv -> attn IR: the convolutional sequence-to-sequence model of Gehring et al.
// (2017), "Convolutional Sequence to Sequence Learning" (seed 003), in fairseq's fconv's
// layout less its extra scalings (docs/convs2s.md says which). With e the embedding width and
// C the channels:
//
//   embed     e_j = E_src[x_j] + P_src[j],  g_i = E_tgt[y_i] + P_tgt[i]  (learned positions)
//   encoder   h = e W_in + b; per block: h = (GLU(conv(h)) + h) sqrt(0.5), the convolution
//             over the source with (K-1)/2 zeros each side (padding zeroed before it, so a
//             sentence's states do not depend on the padding after it); z = h W_out + b.
//   decoder   h = g W_in + b; per block: a = GLU(causal conv(h)) (K-1 zeros before the first
//             step), the multi-step attention
//               d_i = a_i W_d + b_d + g_i,  alpha_ij = softmax_j(d_i . z_j) (padding masked),
//               c_i = sum_j alpha_ij (z_j + e_j),
//             a = (a + c W_c + b_c) sqrt(0.5), h = (a + h) sqrt(0.5);
//             then logits = (h W_out + b) W_o + b_o.
//
// Decoding is incremental: @decode_step takes each decoder block's last K-1 inputs (zeros at
// the start, as the training-time padding) and returns them shifted by the new one, so a step
// costs one position's convolutions and attention. @decode_full recomputes every position.
#include "attn/Names.h"
#include "frontends/yaml/Family.h"
#include "frontends/yaml/ImportBuilder.h"

#include "llvm/ADT/StringMap.h"

#include <cmath>

using namespace mlir;

namespace attn::yaml {
namespace {

constexpr float kSqrtHalf = 0.70710678f; // keeps the variance of a residual sum

class ConvImporter : ImportBuilder {
public:
  using ImportBuilder::ImportBuilder;

  OwningOpRef<ModuleOp> run() {
    OwningOpRef<ModuleOp> module = newModule();
    buildLoss(*module);
    buildDecoding(*module);
    if (options.decodeFull)
      buildDecodeFull(*module);
    return module;
  }

private:
  const ConvSpec &c() const { return *spec.model.conv; }
  int64_t channels() const { return c().channels; }
  int64_t width() const { return c().embedding; }
  int64_t taps() const { return c().kernel; }
  int64_t decoderLayers() const { return c().decoderLayers > 0 ? c().decoderLayers : c().layers; }
  bool paperInit() const { return c().init == ConvInit::Paper; }
  Location cloc() { return loc(c().loc); }

  Value add(Value x, Value y, Location l) { return b.create<mlir::attn::AddOp>(l, x, y); }
  Value mul(Value x, Value y, Location l) { return b.create<mlir::attn::MulOp>(l, x, y); }
  Value reshape(Value x, ArrayRef<int64_t> shape, Location l) {
    return b.create<mlir::attn::ReshapeOp>(l, f32(shape), x);
  }

  //===- parameters --------------------------------------------------------------------===//

  // The weight `name` of `shape` ([..., outputs]) fed `fanIn` inputs per output: N(0, sqrt(gain
  // p / fanIn)) (the paper's, gain 4 in front of a GLU, p the keep probability) or
  // U(+-1/sqrt(fanIn)) (PyTorch's nn.Linear / nn.Conv1d). With weight_norm, w = g v / |v|
  // (the norm over every axis but the outputs'), v drawn the same way and g starting at 1.
  Value weight(const std::string &name, ArrayRef<int64_t> shape, int64_t fanIn, float gain,
               Location l) {
    float scale = paperInit() ? std::sqrt(gain * (1.0f - (float)c().dropout) / (float)fanIn)
                              : 1.0f / std::sqrt((float)fanIn);
    Init init = paperInit() ? Init::normal : Init::uniform;
    if (!c().weightNorm)
      return param(l, name + ".weight", shape, init, scale);
    Value v = param(l, name + ".weight_v", shape, init, scale);
    Value g = param(l, name + ".weight_g", {shape.back()}, Init::ones, 1.0f);
    SmallVector<int64_t> axes;
    for (int64_t d = 0; d + 1 < (int64_t)shape.size(); ++d)
      axes.push_back(d);
    Value squares = b.create<mlir::attn::ReduceSumOp>(l, mul(v, v, l), b.getDenseI64ArrayAttr(axes),
                                                      b.getBoolAttr(true));
    Value norm = b.create<mlir::attn::SqrtOp>(l, add(squares, scalar(1e-12f, l), l));
    return mul(v, b.create<mlir::attn::DivOp>(l, g, norm), l);
  }
  Value bias(const std::string &name, int64_t n, int64_t fanIn, Location l) {
    if (paperInit())
      return param(l, name + ".bias", {n}, Init::zeros, 0.0f);
    return param(l, name + ".bias", {n}, Init::uniform, 1.0f / std::sqrt((float)fanIn));
  }

  // x [..., k] -> [..., n]; `gain` 4 when a GLU follows.
  Value linear(const std::string &name, Value x, int64_t n, Location l, float gain = 1.0f) {
    int64_t k = cast<RankedTensorType>(x.getType()).getShape().back();
    return b.create<mlir::attn::DenseOp>(l, x, weight(name, {k, n}, k, gain, l),
                                         bias(name, n, k, l));
  }

  // GLU(conv(x)): x [K, T, C] -> [K, T + low + high - taps + 1, C], the convolution
  // `name` [taps, C, 2C] with `low` / `high` zeros around x.
  Value gatedConv(const std::string &name, Value x, int64_t low, int64_t high, Location l) {
    int64_t fanIn = taps() * channels();
    Value w = weight(name, {taps(), channels(), 2 * channels()}, fanIn, 4.0f, l);
    Value y = b.create<mlir::attn::Conv1dOp>(l, x, w, bias(name, 2 * channels(), fanIn, l),
                                             b.getI64IntegerAttr(low), b.getI64IntegerAttr(high));
    return b.create<mlir::attn::GluOp>(l, y);
  }

  // Embedding tables: N(0, 0.1) (the paper) or N(0, 1) (nn.Embedding).
  Value table(const std::string &name, int64_t rows, Location l) {
    return param(l, name, {rows, width()}, Init::normal, paperInit() ? 0.1f : 1.0f);
  }
  Value sourceTable(Location l) { return table("encoder.embedding", options.sourceVocab, l); }
  Value targetTable(Location l) { return table("decoder.embedding", options.targetVocab, l); }

  // The longest decode: the decoder positions' length L.
  int64_t decodeLength() const { return std::max(options.targetLength, spec.decode.maxLength); }
  // The decoder's positions [L, e]: a learned table for the target length, zeros past it
  // (checkpoints keep one shape whatever decode.max_length is).
  Value decoderPositions(Location l) {
    Value positions = table("decoder.positions", options.targetLength, l);
    if (decodeLength() == options.targetLength)
      return positions;
    return b.create<mlir::attn::PadOp>(
        l, positions, b.getDenseI64ArrayAttr({0, 0}),
        b.getDenseI64ArrayAttr({decodeLength() - options.targetLength, 0}));
  }

  // The encoder's positions: a learned table of data.max_len rows (the full program's source
  // length), whatever length this program is compiled for, so that the programs of
  // decode.buckets share it.
  Value encoderPositions(Location l) {
    return table("encoder.positions", std::max<int64_t>(spec.data.maxLen, options.sourceLength), l);
  }

  // ids [K, T] -> E[ids] + P[0, T) [K, T, e].
  Value embed(Value tableValue, Value positions, Value ids, Location l) {
    int64_t steps = cast<RankedTensorType>(ids.getType()).getShape()[1];
    if (cast<RankedTensorType>(positions.getType()).getShape()[0] != steps)
      positions = b.create<mlir::attn::SliceOp>(l, positions, b.getDenseI64ArrayAttr({0, 0}),
                                                b.getDenseI64ArrayAttr({steps, width()}));
    return add(b.create<mlir::attn::EmbeddingOp>(l, tableValue, ids), positions, l);
  }

  //===- dropout -----------------------------------------------------------------------===//

  // @loss takes one keep mask [B, T, width] per site (`dropout.<site>`, drawn by the trainer
  // every step, all ones in validation); other entries have none.
  llvm::StringMap<Value> dropout;
  struct Site {
    std::string name;
    int64_t steps, width;
  };

  Value drop(const std::string &site, Value x, Location l) {
    auto it = dropout.find(site);
    return it == dropout.end() ? x : mul(x, it->second, l);
  }

  SmallVector<Site> sites(int64_t srcLen, int64_t tgtLen) {
    SmallVector<Site> all;
    if (c().dropout <= 0)
      return all;
    all.push_back({"encoder.embedding", srcLen, width()});
    for (int64_t layer = 0; layer < c().layers; ++layer)
      all.push_back({"encoder.layer" + std::to_string(layer), srcLen, channels()});
    all.push_back({"decoder.embedding", tgtLen, width()});
    for (int64_t layer = 0; layer < decoderLayers(); ++layer)
      all.push_back({"decoder.layer" + std::to_string(layer), tgtLen, channels()});
    all.push_back({"decoder.output", tgtLen, width()});
    return all;
  }

  //===- encoder -----------------------------------------------------------------------===//

  // What the decoder's attention reads: keys z [K, S, e] and values z + e [K, S, e].
  struct Memory {
    Value keys, values;
  };

  Memory encode(Value src, Value mask, Location l) {
    ArrayRef<int64_t> shape = cast<RankedTensorType>(src.getType()).getShape();
    int64_t rows = shape[0], steps = shape[1];
    Value e = drop("encoder.embedding", embed(sourceTable(l), encoderPositions(l), src, l), l);
    Value h = linear("encoder.input", e, channels(), l);
    Value keep = reshape(mask, {rows, steps, 1}, l);
    int64_t low = (taps() - 1) / 2, high = taps() - 1 - low;
    for (int64_t layer = 0; layer < c().layers; ++layer) {
      std::string p = "encoder.layer" + std::to_string(layer);
      Value in = mul(drop(p, h, l), keep, l);
      h = mul(add(gatedConv(p + ".conv", in, low, high, l), h, l), scalar(kSqrtHalf, l), l);
    }
    Value z = linear("encoder.output", h, width(), l);
    return {z, add(z, e, l)};
  }

  //===- decoder -----------------------------------------------------------------------===//

  // Block `layer`'s attention and residuals, after its GLU: a [K, T, C] from the block's
  // input h [K, T, C], the target embeddings g [K, T, e]. Returns the block's output;
  // `weights` gets alpha [K, 1, T, S].
  Value attendAndAdd(int64_t layer, Value h, Value a, Value g, const Memory &mem, Value srcMask,
                     Value *weights, Location l) {
    std::string p = "decoder.layer" + std::to_string(layer) + ".attention";
    ArrayRef<int64_t> shape = cast<RankedTensorType>(a.getType()).getShape();
    int64_t rows = shape[0], steps = shape[1];
    int64_t srcLen = cast<RankedTensorType>(mem.keys.getType()).getShape()[1];
    Value d = add(linear(p + ".in", a, width(), l), g, l);
    // The paper's score is the plain dot product d . z; scaled_dot_product_attention divides
    // by sqrt(e), which scaling the queries by sqrt(e) undoes.
    Value q =
        reshape(mul(d, scalar(std::sqrt((float)width()), l), l), {rows, 1, steps, width()}, l);
    auto att = b.create<mlir::attn::ScaledDotProductAttentionOp>(
        l, q, reshape(mem.keys, {rows, 1, srcLen, width()}, l),
        reshape(mem.values, {rows, 1, srcLen, width()}, l), srcMask, b.getBoolAttr(false));
    if (weights)
      *weights = att.getWeights();
    Value context = reshape(att.getOutput(), {rows, steps, width()}, l);
    a = mul(add(a, linear(p + ".out", context, channels(), l), l), scalar(kSqrtHalf, l), l);
    return mul(add(a, h, l), scalar(kSqrtHalf, l), l);
  }

  // logits [..., V] from the last block's output [..., C].
  Value readout(Value h, Location l) {
    Value out = drop("decoder.output", linear("decoder.output", h, width(), l), l);
    return linear("output", out, options.targetVocab, l);
  }

  // Logits [K, T, V] for target inputs tgt_in [K, T] (teacher forcing, every position at once).
  Value decodeAll(const Memory &mem, Value srcMask, Value tgtIn, Location l) {
    Value g = drop("decoder.embedding", embed(targetTable(l), decoderPositions(l), tgtIn, l), l);
    Value h = linear("decoder.input", g, channels(), l);
    for (int64_t layer = 0; layer < decoderLayers(); ++layer) {
      std::string p = "decoder.layer" + std::to_string(layer);
      Value a = gatedConv(p + ".conv", drop(p, h, l), taps() - 1, 0, l);
      h = attendAndAdd(layer, h, a, g, mem, srcMask, nullptr, l);
    }
    return readout(h, l);
  }

  //===- entries -----------------------------------------------------------------------===//

  //   @loss(src [B,S], src_mask [B,S], tgt_in [B,T], tgt_out [B,T], dropout...) -> loss
  void buildLoss(ModuleOp module) {
    int64_t batch = spec.train.batchSize, srcLen = options.sourceLength;
    int64_t tgtLen = options.targetLength;
    Location l = cloc();
    b.setInsertionPointToEnd(module.getBody());
    SmallVector<Type> types = {i32({batch, srcLen}), f32({batch, srcLen}), i32({batch, tgtLen}),
                               i32({batch, tgtLen})};
    SmallVector<std::string> names = {"src", "src_mask", "tgt_in", "tgt_out"};
    SmallVector<Site> all = sites(srcLen, tgtLen);
    for (const Site &s : all) {
      types.push_back(f32({batch, s.steps, s.width}));
      names.push_back(std::string(::attn::names::kDropoutPrefix) + "." + s.name);
    }
    SmallVector<StringRef> refs(names.begin(), names.end());
    auto loss = entry("loss", types, refs, {f32({})}, {"loss"}, l);
    for (auto [i, s] : llvm::enumerate(all))
      dropout[s.name] = loss.getArgument(4 + i);
    Memory mem = encode(loss.getArgument(0), loss.getArgument(1), l);
    Value logits = decodeAll(mem, loss.getArgument(1), loss.getArgument(2), l);
    dropout.clear();
    returnPaddedCrossEntropy(logits, loss.getArgument(3), l);
  }

  int64_t rows() const { return spec.decode.beam > 1 ? spec.decode.beam : spec.decode.batch; }

  //   @encode(src [K,S], src_mask [K,S]) -> (position [K,1], cache.layer<l> [K,taps-1,C]
  //       (zeros; none when taps = 1), memory.keys [K,S,e], memory.values [K,S,e])
  //   @decode_step(token [K], position, cache..., memory.keys, memory.values, src_mask)
  //       -> (log_probs [K,V], position + 1, cache'..., attention [K,S])
  void buildDecoding(ModuleOp module) {
    int64_t k = rows(), srcLen = options.sourceLength, vocab = options.targetVocab;
    Location l = cloc();
    SmallVector<Type> carried = {f32({k, 1})};
    SmallVector<std::string> names = {::attn::names::kPosition};
    if (taps() > 1)
      for (int64_t layer = 0; layer < decoderLayers(); ++layer) {
        carried.push_back(f32({k, taps() - 1, channels()}));
        names.push_back("cache.layer" + std::to_string(layer));
      }
    SmallVector<Type> encoded(carried);
    encoded.append({f32({k, srcLen, width()}), f32({k, srcLen, width()})});
    names.append({"memory.keys", "memory.values"});
    SmallVector<StringRef> encodedNames(names.begin(), names.end());

    b.setInsertionPointToEnd(module.getBody());
    auto srcType = i32({k, srcLen});
    auto maskType = f32({k, srcLen});
    auto enc = entry("encode", {srcType, maskType}, {"src", "src_mask"}, encoded, encodedNames, l);
    Memory mem = encode(enc.getArgument(0), enc.getArgument(1), l);
    SmallVector<Value> initial = zerosFor(carried, l);
    initial.append({mem.keys, mem.values});
    b.create<func::ReturnOp>(l, initial);

    b.setInsertionPointToEnd(module.getBody());
    SmallVector<Type> stepTypes = {i32({k})};
    stepTypes.append(encoded);
    stepTypes.push_back(maskType);
    SmallVector<StringRef> stepNames = {"token"};
    stepNames.append(encodedNames);
    stepNames.push_back("src_mask");
    SmallVector<Type> results = {f32({k, vocab})};
    results.append(carried);
    results.push_back(maskType);
    SmallVector<StringRef> resultNames = {::attn::names::kLogProbs};
    resultNames.append(encodedNames.begin(), encodedNames.begin() + carried.size());
    resultNames.push_back(::attn::names::kAttention);
    auto step = entry("decode_step", stepTypes, stepNames, results, resultNames, l);
    ValueRange args = step.getArguments();
    Value position = args[1];
    Memory stepMem = {args[carried.size() + 1], args[carried.size() + 2]};
    Value srcMask = args.back();

    // The position's row of the table: one-hot(position) [K, L] x [L, e].
    Value positions = decoderPositions(l);
    SmallVector<float> iota;
    for (int64_t j = 0; j < decodeLength(); ++j)
      iota.push_back((float)j);
    Value js = b.create<mlir::attn::ConstantOp>(
        l, DenseElementsAttr::get(f32({1, decodeLength()}), ArrayRef<float>(iota)));
    Value oneHot = b.create<mlir::attn::EqOp>(l, js, position);
    Value row = b.create<mlir::attn::MatmulOp>(l, oneHot, positions, b.getBoolAttr(false),
                                               b.getBoolAttr(false));
    Value token = b.create<mlir::attn::EmbeddingOp>(l, targetTable(l), args[0]);
    Value g = reshape(add(token, row, l), {k, 1, width()}, l);
    Value h = linear("decoder.input", g, channels(), l);
    SmallVector<Value> outs = {Value(), b.create<mlir::attn::AddOp>(l, position, scalar(1.0f, l))};
    SmallVector<Value> weights;
    for (int64_t layer = 0; layer < decoderLayers(); ++layer) {
      std::string p = "decoder.layer" + std::to_string(layer);
      // The block's last taps inputs [K, taps, C]: the cache, then this step's.
      Value window = h;
      if (taps() > 1) {
        window = b.create<mlir::attn::ConcatOp>(l, ValueRange{args[2 + layer], h},
                                                b.getI64IntegerAttr(1));
        outs.push_back(
            b.create<mlir::attn::SliceOp>(l, window, b.getDenseI64ArrayAttr({0, 1, 0}),
                                          b.getDenseI64ArrayAttr({k, taps() - 1, channels()})));
      }
      Value a = gatedConv(p + ".conv", window, 0, 0, l);
      weights.emplace_back();
      h = attendAndAdd(layer, h, a, g, stepMem, srcMask, &weights.back(), l);
    }
    outs[0] = logSoftmax(reshape(readout(h, l), {k, vocab}, l), l);
    int64_t shown =
        spec.decode.attentionLayer > 0 ? spec.decode.attentionLayer - 1 : decoderLayers() - 1;
    outs.push_back(reshape(weights[shown], {k, srcLen}, l));
    b.create<func::ReturnOp>(l, outs);
  }

  //   @decode_full(src, src_mask, tgt_in [K,L]) -> log_probs [K,L,V]: every position at
  //       once, for decoding without the cache (attnc translate --no-cache)
  void buildDecodeFull(ModuleOp module) {
    int64_t k = rows(), srcLen = options.sourceLength;
    Location l = cloc();
    b.setInsertionPointToEnd(module.getBody());
    auto full =
        entry("decode_full", {i32({k, srcLen}), f32({k, srcLen}), i32({k, decodeLength()})},
              {"src", "src_mask", "tgt_in"}, {f32({k, decodeLength(), options.targetVocab})},
              {::attn::names::kLogProbs}, l);
    Memory mem = encode(full.getArgument(0), full.getArgument(1), l);
    b.create<func::ReturnOp>(
        l, logSoftmax(decodeAll(mem, full.getArgument(1), full.getArgument(2), l), l));
  }
};

} // namespace

OwningOpRef<ModuleOp> importConv(const Spec &spec, MLIRContext &context,
                                 const ImportOptions &options) {
  return ConvImporter(spec, options, context).run();
}

} // namespace attn::yaml
