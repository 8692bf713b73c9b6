// attnc's gradients of models/rnn-sine.yaml and models/char-rnn.yaml against PyTorch.
// (gated-reference.safetensors, from make-gated-reference.py: rnn-sine.yaml with LSTM and GRU
// cells, including the peephole LSTM and the seed/minimal GRU forms as unrolled torch ops, and
// bidirectional 2-layer LSTM (also with projection, and with peepholes and projection) and GRU.)
//
// rnn-sine-reference.safetensors (written by make-rnn-sine-reference.py) and
// char-rnn-reference.safetensors (written by make-char-rnn-reference.py; see README.md here)
// hold, for each configuration CFG (its sizes in the metadata), the parameters, the inputs of
// @loss, and the loss and every gradient computed by the equivalent PyTorch model in float64
// (nn.RNN + nn.Linear + MSE; nn.Embedding + nn.RNN + nn.Linear + F.cross_entropy). This test
// builds each model the way attnc does (the YAML file through the real frontend with --set
// style overrides, attn-autodiff, the JIT), runs @loss_grad on the same parameters and inputs,
// and compares.
//
// Measure, per tensor (the loss and each grad:<param>), with a = attnc (float32) and
// b = PyTorch (float64, stored rounded to float32):
//
//     relative error = max_i |a_i - b_i| / max(max_i |b_i|, 1e-6)  <  1e-4
//
// attention-reference.safetensors (make-attention-reference.py) holds the same for the
// attention decoders of task: seq2seq (suite Attention), built from an inline spec,
// transformer-reference.safetensors (make-transformer-reference.py) for the Transformer
// encoder-decoder against torch.nn.Transformer (suite Transformer), and
// convs2s-reference.safetensors (make-convs2s-reference.py) for the convolutional
// encoder-decoder (suite Conv). A gradient that is zero in exact arithmetic
// (Reference::zeroGrads: the Transformer's attention key biases) is measured against the
// scale of another gradient instead of its own.
//
// Python is not needed here: only to regenerate the reference files.
#include "compiler/Pipelines/Pipelines.h"
#include "compiler/Driver/Session.h"
#include "compiler/Transforms/Passes.h"
#include "frontends/yaml/Importer.h"
#include "frontends/yaml/Spec.h"

#include "attn/Names.h"
#include "attn/Program.h"
#include "attn/Random.h"
#include "attn/Tensor.h"
#include "attn/checkpoint/Checkpoint.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Pass/PassManager.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace {

constexpr double kRelTol = 1e-4;

// One model checked against one reference file.
struct Reference {
  const char *file;   // in tests/reference/
  const char *model;  // in models/ (with specText: only a name for messages)
  const char *script; // in tests/reference/, writes `file`
  // metadata key (per configuration: "<cfg>.<key>") -> the spec path it overrides
  std::vector<std::pair<const char *, const char *>> overrides;
  std::vector<const char *> inputs; // @loss's inputs, as named in the manifest and the file
  const char *vocabKey;             // metadata key of ImportOptions::vocabSize, or null
  // When set, the spec's text (parsed instead of models/<model>, which then only names it in
  // messages).
  const char *specText = nullptr;
  // task: seq2seq: ImportOptions::sourceVocab, targetVocab, sourceLength and targetLength
  // from the metadata keys source_vocab, target_vocab, source_length and target_length.
  bool seq2seqSizes = false;
  // Gradients that are zero in exact arithmetic, so that the reference holds only float64
  // rounding (~1e-19) and the 1e-6 floor would measure attnc's float32 rounding: (suffix of
  // such a "grad:<param>", the suffix that replaces it to name the gradient whose largest
  // magnitude is the scale instead). The reference must be below 1e-10 of that scale.
  std::vector<std::pair<const char *, const char *>> zeroGrads = {};
  // Override keys a configuration may leave out, to check attnc's default for that key
  // (whose value depends on others: model.attention.gaussian).
  std::vector<std::string> optionalKeys = {};
  // A metadata key whose presence in a configuration makes those of zeroGrads whose name holds
  // the second string nonzero there (a softcap, the self-attention's): they are then measured
  // as every other gradient.
  std::pair<const char *, const char *> zeroGradsBrokenBy = {nullptr, nullptr};
};

const Reference kRnnSine = {
    "rnn-sine-reference.safetensors",
    "rnn-sine.yaml",
    "make-rnn-sine-reference.py",
    {{"batch", "train.batch_size"},
     {"window", "data.window"},
     {"hidden", "model.rnn.hidden"},
     {"layers", "model.rnn.layers"}},
    {"x", "target"},
    nullptr,
};

// The vocabulary size comes from the file, not the builtin text, so the reference does not
// depend on the corpus.
const Reference kCharRnn = {
    "char-rnn-reference.safetensors",
    "char-rnn.yaml",
    "make-char-rnn-reference.py",
    {{"batch", "train.batch_size"},
     {"window", "data.window"},
     {"embedding", "model.embedding.dim"},
     {"hidden", "model.rnn.hidden"},
     {"layers", "model.rnn.layers"}},
    {"tokens", "next"},
    "vocab",
};

// models/rnn-sine.yaml with gated cells (LSTM with/without peepholes and projection, GRU in
// its three forms, and 2-layer bidirectional LSTM/GRU with merge: concat): every
// configuration stores every key, so all of them are overridden.
const Reference kGated = {
    "gated-reference.safetensors",
    "rnn-sine.yaml",
    "make-gated-reference.py",
    {{"batch", "train.batch_size"},
     {"window", "data.window"},
     {"hidden", "model.rnn.hidden"},
     {"layers", "model.rnn.layers"},
     {"cell", "model.rnn.cell"},
     {"gru_form", "model.rnn.gru_form"},
     {"peephole", "model.rnn.peephole"},
     {"projection", "model.rnn.projection"},
     {"bidirectional", "model.rnn.bidirectional"},
     {"merge", "model.rnn.merge"}},
    {"x", "target"},
    nullptr,
};

// Attention decoders (task: seq2seq, teacher forcing) over a GRU/LSTM encoder, also
// bidirectional and with 2 layers: Bahdanau, Luong dot/general/concat with and without input
// feeding, local monotonic/predictive. No model file has them all, so the spec is this text
// with the configuration's overrides; the vocabularies and lengths come from the file.
const char *const kAttentionSpec = R"(name: attention-reference
task: seq2seq
data: {builtin: reverse}
model:
  embedding: {dim: 4}
  rnn: {cell: gru, hidden: 8}
  attention: {type: bahdanau}
train: {batch_size: 3}
)";

const Reference kAttention = {
    "attention-reference.safetensors",
    "attention-reference (inline spec)",
    "make-attention-reference.py",
    {{"batch", "train.batch_size"},
     {"embedding", "model.embedding.dim"},
     {"hidden", "model.rnn.hidden"},
     {"layers", "model.rnn.layers"},
     {"cell", "model.rnn.cell"},
     {"bidirectional", "model.rnn.bidirectional"},
     {"type", "model.attention.type"},
     {"score", "model.attention.score"},
     {"dim", "model.attention.dim"},
     {"align", "model.attention.align"},
     {"window", "model.attention.window"},
     {"gaussian", "model.attention.gaussian"},
     {"input_feeding", "model.attention.input_feeding"}},
    {"src", "src_mask", "tgt_in", "tgt_out"},
    nullptr,
    kAttentionSpec,
    true,
    {},
    {"gaussian"},
};

// The Transformer encoder-decoder (task: seq2seq, model.transformer, teacher forcing) against
// torch.nn.Transformer: post- and pre-norm, relu and gelu, 2 encoder and 2 decoder layers,
// sinusoidal positions. The spec is this text with the configuration's overrides; the
// vocabularies and lengths come from the file.
const char *const kTransformerSpec = R"(name: transformer-reference
task: seq2seq
data: {builtin: reverse}
model:
  transformer: {layers: 2, d_model: 64, heads: 4, ffn: 32}
train: {batch_size: 3}
)";

const Reference kTransformer = {
    "transformer-reference.safetensors",
    "transformer-reference (inline spec)",
    "make-transformer-reference.py",
    {{"batch", "train.batch_size"},
     {"layers", "model.transformer.layers"},
     {"d_model", "model.transformer.d_model"},
     {"heads", "model.transformer.heads"},
     {"ffn", "model.transformer.ffn"},
     {"norm", "model.transformer.norm"},
     {"activation", "model.transformer.activation"},
     {"score_mod", "model.transformer.attention.score_mod"},
     {"softcap", "model.transformer.attention.softcap"},
     {"mask", "model.transformer.attention.mask"},
     {"sliding_window", "model.transformer.attention.sliding_window"},
     {"params", "model.transformer.attention.params"}},
    {"src", "src_mask", "tgt_in", "tgt_out"},
    nullptr,
    kTransformerSpec,
    true,
    // Attention's key bias: every score of a query gets the same q . b_k, which the softmax
    // cancels, so d loss / d b_k = 0 for every input (measured against the key weight's;
    // not with a softcap, which is not shift-invariant).
    {{".k.bias", ".k.weight"}},
    // model.transformer.attention: the configuration with a score_mod, a softcap, a mask and
    // a sliding window (ALiBi's slope a learned scalar per layer) has them, the others not.
    {"score_mod", "softcap", "mask", "sliding_window", "params"},
    {"softcap", ".self_attn."},
};

// Hard attention (type: hard, Bahdanau's decoder with the concat or dot score): the file holds
// the exact expected loss and its gradient, by enumerating every sequence of attended
// positions (make-hard-attention-reference.py); the test averages attnc's stochastic estimate
// over many Gumbel draws (checkEstimator). Baseline none or leave_one_out per the test.
const Reference kHardAttention = {
    "hard-attention-reference.safetensors",
    "hard-attention-reference (inline spec)",
    "make-hard-attention-reference.py",
    {{"batch", "train.batch_size"},
     {"embedding", "model.embedding.dim"},
     {"hidden", "model.rnn.hidden"},
     {"layers", "model.rnn.layers"},
     {"cell", "model.rnn.cell"},
     {"bidirectional", "model.rnn.bidirectional"},
     {"type", "model.attention.type"},
     {"score", "model.attention.score"},
     {"dim", "model.attention.dim"},
     {"entropy", "model.attention.entropy"}},
    {"src", "src_mask", "tgt_in", "tgt_out"},
    nullptr,
    kAttentionSpec,
    true,
    {},
    {"entropy"},
};

// The convolutional encoder-decoder (task: seq2seq, model.conv, teacher forcing) against
// F.conv1d / F.glu and the multi-step attention as torch ops: kernels 1, 2 (uneven encoder
// padding), 3 and 5, a deeper decoder than encoder, and weight normalisation. The spec is
// this text with the configuration's overrides; the vocabularies and lengths come from the
// file (data.max_len is the source length: the encoder's position table has its rows).
const char *const kConvSpec = R"(name: convs2s-reference
task: seq2seq
data: {builtin: reverse, max_len: 7}
model:
  conv: {layers: 2, kernel: 3, channels: 16, embedding: 12}
train: {batch_size: 3}
)";

const Reference kConv = {
    "convs2s-reference.safetensors",
    "convs2s-reference (inline spec)",
    "make-convs2s-reference.py",
    {{"batch", "train.batch_size"},
     {"layers", "model.conv.layers"},
     {"decoder_layers", "model.conv.decoder_layers"},
     {"kernel", "model.conv.kernel"},
     {"channels", "model.conv.channels"},
     {"embedding", "model.conv.embedding"},
     {"weight_norm", "model.conv.weight_norm"}},
    {"src", "src_mask", "tgt_in", "tgt_out"},
    nullptr,
    kConvSpec,
    true,
};

// A forecaster (task: regress, model.rnn, data.horizon M > 1: an encoder-decoder fed the true
// or its own previous value by the forecast_teacher coins) against torch.nn.LSTM/GRU and
// LSTMCell/GRUCell. The spec is this text with the configuration's overrides.
const char *const kForecastSpec = R"(name: forecast-reference
task: regress
data: {builtin: sines, window: 6, horizon: 4}
model:
  rnn: {cell: lstm, hidden: 5}
train: {batch_size: 3}
)";

const Reference kForecast = {
    "forecast-reference.safetensors",
    "forecast-reference (inline spec)",
    "make-forecast-reference.py",
    {{"batch", "train.batch_size"},
     {"window", "data.window"},
     {"horizon", "data.horizon"},
     {"hidden", "model.rnn.hidden"},
     {"layers", "model.rnn.layers"},
     {"cell", "model.rnn.cell"}},
    {"x", "target", "forecast_teacher"},
    nullptr,
    kForecastSpec,
};

std::string referencePath(const Reference &r) {
  return std::string(ATTN_SOURCE_DIR) + "/tests/reference/" + r.file;
}
std::string modelPath(const Reference &r) {
  return std::string(ATTN_SOURCE_DIR) + "/models/" + r.model;
}

// Loaded once per file; throws std::runtime_error if unreadable.
const ::attn::checkpoint::Checkpoint &load(const Reference &r) {
  static std::map<std::string, ::attn::checkpoint::Checkpoint> cache;
  auto it = cache.find(r.file);
  if (it == cache.end())
    it = cache.emplace(r.file, ::attn::checkpoint::load(referencePath(r))).first;
  return it->second;
}

// The configurations named in a file's metadata ("configs": "layers1,layers2"), read at
// registration time. An unreadable file yields one case that reports why.
std::vector<std::string> configNames(const Reference &r) {
  std::vector<std::string> names;
  try {
    std::stringstream list(load(r).metadata.at("configs"));
    for (std::string name; std::getline(list, name, ',');)
      names.push_back(name);
  } catch (const std::exception &) {
    names.push_back("unreadable");
  }
  return names;
}

double maxAbs(const float *b, int64_t n) {
  double scale = 0;
  for (int64_t i = 0; i < n; ++i)
    scale = std::max(scale, std::fabs((double)b[i]));
  return scale;
}

// max|a - b| / max(scale, 1e-6) over all elements; scale = max|b| unless given.
double relativeError(const float *a, const float *b, int64_t n, double scale = -1) {
  double diff = 0;
  for (int64_t i = 0; i < n; ++i)
    diff = std::max(diff, std::fabs((double)a[i] - (double)b[i]));
  return diff / std::max(scale < 0 ? maxAbs(b, n) : scale, 1e-6);
}

// For a gradient in r.zeroGrads, the name of the gradient that gives its scale; else "".
std::string zeroGradScale(const Reference &r, const std::string &name) {
  for (const auto &[suffix, replacement] : r.zeroGrads) {
    size_t n = std::strlen(suffix);
    if (name.rfind("grad:", 0) == 0 && name.size() > n &&
        name.compare(name.size() - n, n, suffix) == 0)
      return name.substr(0, name.size() - n) + replacement;
  }
  return "";
}

mlir::DialectRegistry registry() {
  mlir::DialectRegistry r;
  ::attn::pipelines::registerDialects(r);
  return r;
}

// Configuration `cfg` of `r`: the file's tensors and metadata, and the model built with its
// sizes through the real frontend and attn-autodiff (@loss_grad).
struct Built {
  const ::attn::checkpoint::Checkpoint *ref = nullptr;
  std::string cfg, sizes; // sizes: the overrides, for messages
  std::unique_ptr<::attn::driver::Session> session;
  std::unique_ptr<::attn::driver::Model> model;

  std::string meta(const std::string &key) const {
    auto it = ref->metadata.find(cfg + "." + key);
    return it == ref->metadata.end() ? std::string() : it->second;
  }
  const ::attn::Tensor &tensor(const std::string &name) const {
    const ::attn::Tensor *t = ref->find(cfg + "/" + name);
    if (!t)
      throw std::runtime_error("no tensor '" + cfg + "/" + name + "' in the reference");
    return *t;
  }
};

// `extra`: overrides beyond the configuration's.
void build(const Reference &r, const std::string &cfg, Built &out,
           const std::vector<::attn::yaml::Override> &extra = {}) {
  out.cfg = cfg;
  try {
    out.ref = &load(r);
  } catch (const std::exception &e) {
    FAIL() << e.what() << "\n  hint: regenerate it with /usr/bin/python3 tests/reference/"
           << r.script;
  }
  auto meta = [&](const std::string &key) { return out.meta(key); };
  std::string &sizes = out.sizes;
  // The model through the real frontend, with the configuration as overrides.
  std::vector<::attn::yaml::Override> overrides = extra;
  for (const auto &[key, path] : r.overrides) {
    bool optional =
        std::find(r.optionalKeys.begin(), r.optionalKeys.end(), key) != r.optionalKeys.end();
    if (optional && meta(key).empty())
      continue;
    ASSERT_FALSE(meta(key).empty()) << "no metadata '" << key << "' for configuration " << cfg;
    overrides.push_back({path, meta(key)});
    sizes += (sizes.empty() ? "" : ", ") + std::string(key) + " " + meta(key);
  }
  ::attn::yaml::ImportOptions options;
  if (r.vocabKey) {
    ASSERT_FALSE(meta(r.vocabKey).empty()) << "no metadata '" << r.vocabKey << "' for " << cfg;
    options.vocabSize = std::stoll(meta(r.vocabKey));
    sizes += ", " + std::string(r.vocabKey) + " " + meta(r.vocabKey);
  }
  if (r.seq2seqSizes) {
    for (const char *key : {"source_vocab", "target_vocab", "source_length", "target_length"})
      ASSERT_FALSE(meta(key).empty()) << "no metadata '" << key << "' for " << cfg;
    options.sourceVocab = std::stoll(meta("source_vocab"));
    options.targetVocab = std::stoll(meta("target_vocab"));
    options.sourceLength = std::stoll(meta("source_length"));
    options.targetLength = std::stoll(meta("target_length"));
    sizes += ", vocab " + meta("source_vocab") + "/" + meta("target_vocab") + ", lengths " +
             meta("source_length") + "/" + meta("target_length");
  }
  out.session = std::make_unique<::attn::driver::Session>();
  ::attn::driver::Session &session = *out.session;
  ASSERT_TRUE(r.specText ? session.loadSpecText(r.specText, r.model, overrides)
                         : session.loadSpec(modelPath(r), overrides));
  session.setImportOptions(options);
  ASSERT_TRUE(session.runTo(::attn::driver::Stage::Attn));
  mlir::ModuleOp module = session.module();
  mlir::PassManager pm(&session.context());
  // As attnc does: fusion first (scans over cells oneDNN has become sequence ops whose
  // gradient is oneDNN's backward), then autodiff.
  ::attn::pipelines::buildFusion(pm);
  pm.addPass(mlir::attn::createAttnAutodiff());
  ASSERT_TRUE(mlir::succeeded(pm.run(module))) << "attn-autodiff failed";
  out.model = session.loadModel();
  ASSERT_TRUE(out.model);
}

// Builds r.model with configuration cfg's sizes, runs @loss_grad on the file's parameters and
// inputs, and compares the loss and every gradient with the file's.
void checkLossGrad(const Reference &r, const std::string &cfg) {
  Built built;
  build(r, cfg, built);
  if (::testing::Test::HasFatalFailure())
    return;
  const ::attn::checkpoint::Checkpoint *ref = built.ref;
  auto tensor = [&](const std::string &name) -> const ::attn::Tensor & {
    return built.tensor(name);
  };
  const std::string &sizes = built.sizes;
  const ::attn::Program &program = *built.model->program;
  const attn_program_info &info = program.info();

  // Parameters in manifest order, matched by name; inputs by name.
  std::vector<::attn::Tensor> params, inputs;
  for (int i = 0; i < info.num_params; ++i)
    params.push_back(tensor(info.params[i].name));
  for (const char *name : r.inputs)
    inputs.push_back(tensor(name));
  std::vector<::attn::Tensor> outputs = program.call("loss_grad", params, inputs);
  const attn_entry_info &entry = program.entry("loss_grad");
  ASSERT_EQ(entry.num_outputs, 1 + info.num_params);

  int checked = 0;
  double worst = 0;
  std::string worstName;
  for (int o = 0; o < entry.num_outputs; ++o) {
    std::string name = entry.outputs[o].name; // "loss", then "grad:<param>"
    const ::attn::Tensor &expected = tensor(name);
    ASSERT_EQ(outputs[o].shape(), expected.shape()) << name;
    double scale = -1;
    auto [brokenBy, brokenPart] = r.zeroGradsBrokenBy;
    bool zerosHold =
        !brokenBy || built.meta(brokenBy).empty() || name.find(brokenPart) == std::string::npos;
    std::string scaleName = zerosHold ? zeroGradScale(r, name) : "";
    if (!scaleName.empty()) {
      const ::attn::Tensor &of = tensor(scaleName);
      scale = maxAbs(of.data<float>(), of.numel());
      EXPECT_LE(maxAbs(expected.data<float>(), expected.numel()), 1e-10 * scale)
          << cfg << ": " << name << " should be zero, but the reference has "
          << expected.str(16);
    }
    double err =
        relativeError(outputs[o].data<float>(), expected.data<float>(), expected.numel(), scale);
    EXPECT_LT(err, kRelTol) << cfg << ": " << name << ": attnc " << outputs[o].str(16)
                            << "\n  PyTorch float64 " << expected.str(16)
                            << (scaleName.empty() ? "" : "\n  (scale: max|" + scaleName + "|)");
    if (err >= worst)
      worst = err, worstName = name;
    ++checked;
  }
  std::printf("%s %s (%s): largest relative error %.3g (%s), tolerance %.0e\n", r.model,
              cfg.c_str(), sizes.c_str(), worst, worstName.c_str(), kRelTol);
  // Every parameter has its gradient checked, and the file holds nothing the model lacks.
  EXPECT_EQ(checked, 1 + info.num_params);
  int inFile = 0;
  for (const auto &[name, t] : ref->tensors)
    inFile += name.rfind(cfg + "/grad:", 0) == 0;
  EXPECT_EQ(inFile, info.num_params) << "the reference has gradients for other parameters";
}

// Hard attention's score-function estimator is unbiased: over kDraws draws of the Gumbel
// noise (every step drawn but the configuration's soft steps), the mean of attnc's loss and of
// every gradient
// @loss_grad returns must be the enumerated expectation's within 5 standard errors of the
// mean (estimated from the draws), plus 1e-4 of the tensor's scale for float rounding. The
// tolerance is only worth something if it is narrow: the attention weights' gradients come
// from the estimator term alone (a drawn context does not depend on them), and their 5
// standard errors must stay below 3/4 of their size, so a missing or mis-signed term fails.
// Every step reading the expectation instead gives the soft model's loss exactly. With an
// entropy bonus the file's gradient is the bonus's mean gradient at the drawn positions
// (what the estimator adds), beside the exact gradient of the expected loss.
void checkEstimator(const Reference &r, const std::string &cfg, const std::string &baseline) {
  Built built;
  build(r, cfg, built, {{"model.attention.baseline", baseline}});
  if (::testing::Test::HasFatalFailure())
    return;
  const ::attn::Program &program = *built.model->program;
  const attn_entry_info &entry = program.entry("loss_grad");
  std::vector<::attn::Tensor> params;
  for (int i = 0; i < program.info().num_params; ++i)
    params.push_back(built.tensor(program.info().params[i].name));
  std::vector<::attn::Tensor> inputs;
  int noise = -1, soft = -1;
  for (int i = 0; i < entry.num_inputs; ++i) {
    std::string name = entry.inputs[i].name;
    if (name == ::attn::names::kHardNoise || name == ::attn::names::kHardSoft) {
      (name == ::attn::names::kHardNoise ? noise : soft) = i;
      inputs.push_back(::attn::makeTensor(entry.inputs[i]));
    } else {
      inputs.push_back(built.tensor(name));
    }
  }
  ASSERT_GE(noise, 0);
  ASSERT_GE(soft, 0);

  // The soft expectation at every step: the soft Bahdanau model's loss.
  std::fill_n(inputs[soft].data<float>(), inputs[soft].numel(), 1.0f);
  double softLoss = program.call("loss_grad", params, inputs)[0].data<float>()[0];
  EXPECT_NEAR(softLoss, built.tensor("soft_loss").data<float>()[0], 1e-5) << cfg;
  // The configuration's soft steps (meta "soft_steps": step indices, the same in every row)
  // read the expectation; the others draw.
  std::fill_n(inputs[soft].data<float>(), inputs[soft].numel(), 0.0f);
  std::stringstream softSteps(built.meta("soft_steps"));
  int64_t steps = inputs[soft].shape()[1];
  for (std::string step; std::getline(softSteps, step, ',');)
    for (int64_t row = 0; row < inputs[soft].shape()[0]; ++row)
      inputs[soft].data<float>()[row * steps + std::stoll(step)] = 1.0f;

  constexpr int kDraws = 50000;
  ::attn::Rng rng(20261202);
  std::vector<std::vector<double>> sum(entry.num_outputs), squares(entry.num_outputs);
  for (int d = 0; d < kDraws; ++d) {
    float *g = inputs[noise].data<float>();
    for (int64_t k = 0; k < inputs[noise].numel(); ++k) {
      double u = std::clamp(rng.nextDouble(), 1e-12, 1.0 - 1e-12);
      g[k] = (float)-std::log(-std::log(u));
    }
    std::vector<::attn::Tensor> out = program.call("loss_grad", params, inputs);
    for (int o = 0; o < entry.num_outputs; ++o) {
      const float *v = out[o].data<float>();
      sum[o].resize(out[o].numel());
      squares[o].resize(out[o].numel());
      for (int64_t i = 0; i < out[o].numel(); ++i) {
        sum[o][i] += v[i];
        squares[o][i] += (double)v[i] * v[i];
      }
    }
  }
  double worstZ = 0, loosest = 0;
  std::string worstName;
  for (int o = 0; o < entry.num_outputs; ++o) {
    std::string name = entry.outputs[o].name;
    const ::attn::Tensor &exact = built.tensor(name);
    ASSERT_EQ((size_t)exact.numel(), sum[o].size()) << name;
    double scale = maxAbs(exact.data<float>(), exact.numel()), widest = 0;
    for (int64_t i = 0; i < exact.numel(); ++i) {
      double mean = sum[o][i] / kDraws;
      double var = std::max(0.0, squares[o][i] / kDraws - mean * mean);
      double se = std::sqrt(var / kDraws);
      double diff = std::fabs(mean - exact.data<float>()[i]);
      EXPECT_LE(diff, 5 * se + 1e-4 * scale)
          << cfg << " (baseline " << baseline << "): " << name << "[" << i << "]: mean of "
          << kDraws << " draws " << mean << " +- " << se << ", exact " << exact.data<float>()[i];
      widest = std::max(widest, 5 * se);
      if (se > 0 && diff / se > worstZ)
        worstZ = diff / se, worstName = name;
    }
    if (name.find("attention.") != std::string::npos) {
      EXPECT_LT(widest, 0.75 * scale) << cfg << ": " << name << " is measured too loosely";
      loosest = std::max(loosest, widest / scale);
    }
  }
  std::printf("%s %s (baseline %s, %d draws): largest deviation %.2f standard errors (%s); "
              "5 standard errors at most %.2f of an attention gradient's size; soft loss %.6f\n",
              r.model, cfg.c_str(), baseline.c_str(), kDraws, worstZ, worstName.c_str(), loosest,
              softLoss);
}

// models/rnn-sine.yaml: regression, MSE of the last state's prediction.
class PyTorchReference : public ::testing::TestWithParam<std::string> {};

TEST_P(PyTorchReference, LossGradMatchesFloat64) { checkLossGrad(kRnnSine, GetParam()); }

INSTANTIATE_TEST_SUITE_P(RnnSine, PyTorchReference, ::testing::ValuesIn(configNames(kRnnSine)),
                         [](const auto &info) { return info.param; });

// models/char-rnn.yaml: embedding, rnn over every position, cross-entropy of every position.
class CharRnnPyTorchReference : public ::testing::TestWithParam<std::string> {};

TEST_P(CharRnnPyTorchReference, LossGradMatchesFloat64) { checkLossGrad(kCharRnn, GetParam()); }

INSTANTIATE_TEST_SUITE_P(CharRnn, CharRnnPyTorchReference,
                         ::testing::ValuesIn(configNames(kCharRnn)),
                         [](const auto &info) { return info.param; });

// models/rnn-sine.yaml with model.rnn.cell=lstm|gru: nn.LSTM (also with proj_size) and nn.GRU,
// and unrolled float64 torch ops for the peephole LSTM and the seed/minimal GRU forms; the
// bi* configurations with model.rnn.bidirectional=true (nn.LSTM/nn.GRU(bidirectional=True),
// unrolled ops for the peephole one).
class GatedPyTorchReference : public ::testing::TestWithParam<std::string> {};

TEST_P(GatedPyTorchReference, LossGradMatchesFloat64) { checkLossGrad(kGated, GetParam()); }

INSTANTIATE_TEST_SUITE_P(GatedCells, GatedPyTorchReference,
                         ::testing::ValuesIn(configNames(kGated)),
                         [](const auto &info) { return info.param; });

// Forecasters: encoder-decoder regression over a horizon, teacher-forced, free-running and
// mixed by the coins.
class ForecastPyTorchReference : public ::testing::TestWithParam<std::string> {};

TEST_P(ForecastPyTorchReference, LossGradMatchesFloat64) { checkLossGrad(kForecast, GetParam()); }

INSTANTIATE_TEST_SUITE_P(Forecast, ForecastPyTorchReference,
                         ::testing::ValuesIn(configNames(kForecast)),
                         [](const auto &info) { return info.param; });

// task: seq2seq with model.attention (teacher forcing): a masked (bidirectional) GRU/LSTM
// encoder, Bahdanau / Luong (dot, general, concat; input feeding) / local (monotonic,
// predictive) attention decoders, cross-entropy over the non-padding targets. PyTorch:
// nn.GRU/nn.LSTM on packed sources, nn.GRUCell/LSTMCell and the attention as torch ops.
class AttentionPyTorchReference : public ::testing::TestWithParam<std::string> {};

TEST_P(AttentionPyTorchReference, LossGradMatchesFloat64) {
  checkLossGrad(kAttention, GetParam());
}

INSTANTIATE_TEST_SUITE_P(Attention, AttentionPyTorchReference,
                         ::testing::ValuesIn(configNames(kAttention)),
                         [](const auto &info) { return info.param; });

// task: seq2seq with model.transformer (teacher forcing): torch.nn.Transformer (batch_first,
// dropout 0, source padding masked in the encoder and the cross attention, causal decoder)
// on attnc's transposed weights, sinusoidal positions, cross-entropy over the non-padding
// targets; alibi_softcap_window: its self-attention replaced by the spec's own score and
// mask written out in torch (make-transformer-reference.py's ModAttention), which attnc runs
// on the flash kernels' region tiles, the slopes' gradients included.
class TransformerPyTorchReference : public ::testing::TestWithParam<std::string> {};

TEST_P(TransformerPyTorchReference, LossGradMatchesFloat64) {
  checkLossGrad(kTransformer, GetParam());
}

INSTANTIATE_TEST_SUITE_P(Transformer, TransformerPyTorchReference,
                         ::testing::ValuesIn(configNames(kTransformer)),
                         [](const auto &info) { return info.param; });

// task: seq2seq with model.conv (teacher forcing): F.conv1d on the permuted weights, F.glu,
// the attention d . z over the unmasked source positions, cross-entropy over the non-padding
// targets.
class ConvPyTorchReference : public ::testing::TestWithParam<std::string> {};

TEST_P(ConvPyTorchReference, LossGradMatchesFloat64) { checkLossGrad(kConv, GetParam()); }

INSTANTIATE_TEST_SUITE_P(Conv, ConvPyTorchReference, ::testing::ValuesIn(configNames(kConv)),
                         [](const auto &info) { return info.param; });

// task: seq2seq with model.attention.type hard: the score-function estimator's mean over many
// Gumbel draws against the exact expectation, without a baseline and with the leave-one-out
// one (unbiased both).
class HardAttentionEstimator
    : public ::testing::TestWithParam<std::tuple<std::string, std::string>> {};

TEST_P(HardAttentionEstimator, MeanEqualsTheEnumeratedExpectation) {
  checkEstimator(kHardAttention, std::get<0>(GetParam()), std::get<1>(GetParam()));
}

INSTANTIATE_TEST_SUITE_P(
    HardAttention, HardAttentionEstimator,
    ::testing::Combine(::testing::ValuesIn(configNames(kHardAttention)),
                       ::testing::Values(std::string("none"), std::string("leave_one_out"))),
    [](const auto &info) { return std::get<0>(info.param) + "_" + std::get<1>(info.param); });

} // namespace
