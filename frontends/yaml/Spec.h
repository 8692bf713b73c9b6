// The typed model spec: what a user's YAML file says, validated, with source locations.
// Parser.cpp builds it from YAML; the families (Family.h) import it into attn IR. Each key is
// declared once, in the schema table (Schema.cpp), bound there to its field here: the field's
// initialiser below is the key's default, and the parser, the printer and
// docs/yaml-reference.md all go through that binding.
#pragma once

#include "frontends/yaml/Schema.h"

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace attn::yaml {

struct Diagnostic {
  Loc loc;
  std::string message;
  std::string hint; // empty when there is nothing useful to add
  // "file:line:col: error: message" and, when present, "\n  hint: ..."
  std::string str() const;
};

// Enum-like keys are C++ enums; EnumNames<E>::names are their spellings in a spec file, in
// the order the reference lists them (the schema's allowed values come from here).
template <typename E> struct EnumNames;
enum class Task { Regress, Lm, Seq2seq, Tag, Classify };
template <> struct EnumNames<Task> {
  static constexpr std::array<const char *, 5> names = {"regress", "lm", "seq2seq", "tag",
                                                        "classify"};
};
enum class Tokens { Word, Char, Unigram, Bpe, Sentencepiece };
template <> struct EnumNames<Tokens> {
  static constexpr std::array<const char *, 5> names = {"word", "char", "unigram", "bpe",
                                                        "sentencepiece"};
};
enum class MlpActivation { Tanh, Relu, Sigmoid };
template <> struct EnumNames<MlpActivation> {
  static constexpr std::array<const char *, 3> names = {"tanh", "relu", "sigmoid"};
};
enum class Cell { Rnn, Gru, Lstm };
template <> struct EnumNames<Cell> {
  static constexpr std::array<const char *, 3> names = {"rnn", "gru", "lstm"};
};
enum class GruForm { Pytorch, Seed, Minimal };
template <> struct EnumNames<GruForm> {
  static constexpr std::array<const char *, 3> names = {"pytorch", "seed", "minimal"};
};
// `true` and `false`, the spellings from before there were two forms, still read.
enum class Peephole { None, Diagonal, Full };
template <> struct EnumNames<Peephole> {
  static constexpr std::array<const char *, 3> names = {"none", "diagonal", "full"};
  static constexpr std::array<std::pair<const char *, Peephole>, 2> aliases = {
      {{"false", Peephole::None}, {"true", Peephole::Diagonal}}};
};
enum class Feed { FirstStep, EveryStep };
template <> struct EnumNames<Feed> {
  static constexpr std::array<const char *, 2> names = {"first_step", "every_step"};
};
enum class Merge { Concat, Sum };
template <> struct EnumNames<Merge> {
  static constexpr std::array<const char *, 2> names = {"concat", "sum"};
};
enum class FfnActivation { Relu, Gelu };
template <> struct EnumNames<FfnActivation> {
  static constexpr std::array<const char *, 2> names = {"relu", "gelu"};
};
enum class Norm { Post, Pre };
template <> struct EnumNames<Norm> {
  static constexpr std::array<const char *, 2> names = {"post", "pre"};
};
enum class Positions { Sinusoidal, Learned };
template <> struct EnumNames<Positions> {
  static constexpr std::array<const char *, 2> names = {"sinusoidal", "learned"};
};
enum class ConvInit { Paper, Pytorch };
template <> struct EnumNames<ConvInit> {
  static constexpr std::array<const char *, 2> names = {"paper", "pytorch"};
};
enum class Context { Initial, EveryStep };
template <> struct EnumNames<Context> {
  static constexpr std::array<const char *, 2> names = {"initial", "every_step"};
};
enum class AttentionType { Bahdanau, Luong, Local, Hard };
template <> struct EnumNames<AttentionType> {
  static constexpr std::array<const char *, 4> names = {"bahdanau", "luong", "local", "hard"};
};
enum class HardBaseline { LeaveOneOut, None };
template <> struct EnumNames<HardBaseline> {
  static constexpr std::array<const char *, 2> names = {"leave_one_out", "none"};
};
enum class Score { Dot, General, Concat, Cosine };
template <> struct EnumNames<Score> {
  static constexpr std::array<const char *, 4> names = {"dot", "general", "concat", "cosine"};
};
enum class Align { Monotonic, Predictive };
template <> struct EnumNames<Align> {
  static constexpr std::array<const char *, 2> names = {"monotonic", "predictive"};
};
enum class Optimizer { Adam, Adamw, Sgd };
template <> struct EnumNames<Optimizer> {
  static constexpr std::array<const char *, 3> names = {"adam", "adamw", "sgd"};
};
enum class Schedule { Constant, LinearWarmup, InverseSqrt, Cosine, Step };
template <> struct EnumNames<Schedule> {
  static constexpr std::array<const char *, 5> names = {"constant", "linear_warmup", "inverse_sqrt",
                                                        "cosine", "step"};
};
enum class TeacherSchedule { Constant, Linear, Exponential, InverseSigmoid };
template <> struct EnumNames<TeacherSchedule> {
  static constexpr std::array<const char *, 4> names = {"constant", "linear", "exponential",
                                                        "inverse_sigmoid"};
};

// The number type a program's products compute in (attn-precision; docs/precision.md). int8
// is for inference programs only: decode.precision has it, train.precision has not.
enum class Precision { F32, Bf16 };
template <> struct EnumNames<Precision> {
  static constexpr std::array<const char *, 2> names = {"f32", "bf16"};
};
enum class DecodePrecision { F32, Bf16, Int8 };
template <> struct EnumNames<DecodePrecision> {
  static constexpr std::array<const char *, 3> names = {"f32", "bf16", "int8"};
};

// The spelling of `e` in a spec file ("lstm" for Cell::Lstm).
template <typename E> std::string nameOf(E e) {
  return EnumNames<E>::names[static_cast<size_t>(e)];
}
// Whether E has other accepted spellings (EnumNames<E>::aliases: {text, value} pairs).
template <typename E, typename = void> struct HasAliases : std::false_type {};
template <typename E>
struct HasAliases<E, std::void_t<decltype(EnumNames<E>::aliases)>> : std::true_type {};

// The value spelled `text` (a name or an alias); nullopt for anything else.
template <typename E> std::optional<E> enumOf(const std::string &text) {
  for (size_t i = 0; i < EnumNames<E>::names.size(); ++i)
    if (text == EnumNames<E>::names[i])
      return static_cast<E>(i);
  if constexpr (HasAliases<E>::value)
    for (const auto &[alias, value] : EnumNames<E>::aliases)
      if (text == alias)
        return value;
  return std::nullopt;
}

struct DataSpec {
  std::string builtin; // sine | sines | wave | text | copy | reverse | dates | pos | majority;
                       // empty when `path` is set
  std::string path;           // seq2seq: a TSV file of `source<TAB>target` lines
  std::string validPath;      // seq2seq: its validation file; empty: hold out the last `valid`
  int64_t window = 16;        // sine, sines: input length N
  int64_t horizon = 1;        // sine, sines: output length M (the values after the window)
  int64_t features = 0;       // regress, path: each line a vector of this width and its
                              // horizon-long target (one to many); 0: the file is a series
  int64_t minLen = 3;         // copy / reverse: source lengths, uniform in [min_len, max_len]
  int64_t maxLen = 10;        // seq2seq: the longest source and target (longer pairs are dropped)
  int64_t symbols = 10;       // copy / reverse: distinct symbols
  Tokens tokens = Tokens::Word; // seq2seq: word | char | unigram | bpe | sentencepiece
  int64_t vocabSize = 8000;   // unigram, bpe: pieces of the SentencePiece model trained
  bool sharedVocab = false;   // one vocabulary (and subword model) for source and target
  std::string spmModel;       // sentencepiece: the user's SentencePiece model file
  int64_t minCount = 1;       // seq2seq vocabularies: tokens seen fewer times are <unk>
  int64_t maxVocab = 0;       // seq2seq vocabularies: at most this many entries; 0 = no limit
  int64_t train = 2000;       // examples generated for training
  int64_t valid = 200;        // examples generated for validation
  uint64_t seed = 1;
  bool skipBadLines = false;  // path: lines that cannot be read are left out (counted)
  bool stream = false;        // data.path is indexed and read a block at a time, not held
  int64_t streamBuffer = 65536; // stream: pairs per block (shuffled as one)
  Loc loc;
};

struct MlpSpec {
  std::vector<int64_t> hidden;     // sizes of the hidden layers, e.g. [64, 64]
  MlpActivation activation = MlpActivation::Tanh;
  Loc loc;
};

struct RnnSpec {
  Cell cell = Cell::Rnn;
  int64_t hidden = 32;
  int64_t layers = 1;
  GruForm gruForm = GruForm::Pytorch; // gru
  Peephole peephole = Peephole::None; // lstm
  int64_t projection = 0;     // lstm: output width; 0 = none
  bool bidirectional = false;
  Merge merge = Merge::Concat; // bidirectional
  double dropout = 0.0;       // on the outputs of every layer but the last, while training
  Feed feed = Feed::FirstStep; // one-to-many (data.builtin: wave): where the vector enters
  Loc loc;
};

struct EmbeddingSpec {
  int64_t dim = 32;
  Loc loc;
};

struct OutputSpec {
  int64_t size = 1;           // width of the dense head
  Loc loc;
};

// How an encoder-decoder hands the source to its decoder (the seed's two frameworks).
struct Seq2SeqSpec {
  Context context = Context::Initial; // initial: the encoder's final states start the decoder
                                      // (Sutskever et al.); every_step: c = V h_T is fed to
                                      // every decoder step and the readout (Cho et al.)
  bool reverseSource = false;      // feed the source last token first (Sutskever et al.)
  int64_t decoderHidden = 0;       // the decoder's width (attention); 0 = model.rnn.hidden
  Loc loc;
};

// An attention decoder (task: seq2seq): at every step the decoder weighs all encoder states.
struct AttentionSpec {
  AttentionType type = AttentionType::Bahdanau;
  Score score = Score::General;  // luong, local
  int64_t dim = 0;               // additive scores (bahdanau, concat) and predictive
                                 // alignment: hidden width; 0 = the decoder's hidden width
  Align align = Align::Predictive; // local: monotonic (p_i = i) | predictive
  int64_t window = 5;            // local: D, the window [p_i - D, p_i + D]; sigma = D / 2
  std::optional<bool> gaussian;  // local: weight the window by a Gaussian; unset: see below
  bool inputFeeding = true;      // luong, local: feed h~_{i-1} into the decoder's input
  double temperature = 10.0;     // cosine: tau in tau cos(s, h)
  bool learnTemperature = false; // cosine: tau is a parameter (starting at `temperature`)
  // hard: the score-function estimator's baseline, entropy bonus, and the probability of a
  // step reading the soft expectation instead of a sampled position (Xu et al. 2015)
  HardBaseline baseline = HardBaseline::LeaveOneOut;
  double entropy = 0.0;
  double softProbability = 0.0;
  Loc loc;

  // Whether local attention weights its window by the Gaussian: as `gaussian` says, else as
  // Luong et al. have it (the Gaussian belongs to predictive alignment, their (10)).
  bool gaussianWeighting() const { return gaussian.value_or(align == Align::Predictive); }
};

// model.transformer.attention: a researcher's own score and mask for every self-attention
// layer (docs/transformer.md, "Your own attention"; the expressions: ScoreExpr.h).
struct AttentionModSpec {
  std::string scoreMod;                 // a number over score, i, j and the params; "" = the score
  double softcap = 0.0;                 // > 0: cap * tanh(s / cap) of score_mod's result
  std::string mask;                     // a condition over i, j and the params; "" = every key
  int64_t slidingWindow = 0;            // > 0: only keys with |i - j| < sliding_window
  YamlTree params{YamlTree::Kind::Map}; // name -> {init, learn}: scalars, one per layer
  Loc loc;

  bool custom() const {
    return !scoreMod.empty() || softcap > 0 || !mask.empty() || slidingWindow > 0;
  }
};

// A Transformer stack ("Attention Is All You Need"): the encoder-decoder for seq2seq, a
// decoder-only stack (causal self-attention) for lm, an encoder-only one for tag / classify.
struct TransformerSpec {
  int64_t layers = 2;          // encoder layers (seq2seq, tag, classify); decoder layers (lm)
  int64_t decoderLayers = 0;   // seq2seq: decoder layers; 0 = `layers`
  int64_t dModel = 64;         // the width of every position's vector
  int64_t heads = 4;           // attention heads (dividing dModel)
  int64_t ffn = 256;           // the feed-forward layer's hidden width
  FfnActivation activation = FfnActivation::Relu;
  Norm norm = Norm::Post; // post: x = LN(x + f(x)) (the paper); pre: x + f(LN(x))
  Positions positions = Positions::Sinusoidal;
  double dropout = 0.0;        // on embeddings and every sublayer's output, while training
  bool shareEmbeddings = false; // seq2seq: one table (and one vocabulary) for both sides
  bool tieOutput = false;       // the output layer's weight is the target embedding^T
  AttentionModSpec attention;   // the self-attention's score and mask
  Loc loc;
};

// A convolutional encoder-decoder (Gehring et al. 2017, seed 003): blocks of convolution ->
// GLU -> residual, a decoder of causal convolutions with attention in every layer.
struct ConvSpec {
  int64_t layers = 4;              // encoder blocks
  int64_t decoderLayers = 0;       // decoder blocks; 0 = `layers`
  int64_t kernel = 3;              // taps of every convolution
  int64_t channels = 256;          // width of the blocks' inputs and outputs
  int64_t embedding = 256;         // width of token and position embeddings (and attention)
  double dropout = 0.0;            // on embeddings, every block's input and the decoder's output
  bool weightNorm = false;         // w = g v / |v|, per output
  ConvInit init = ConvInit::Paper; // the paper's scaled normals, or PyTorch's defaults
  Loc loc;
};

// The graph form (docs/graph.md): attn ops wired by name, read by the graph family
// (Graph.cpp), which checks them and builds the task's entry points around them.
struct GraphSpec {
  YamlTree params{YamlTree::Kind::Map}; // name -> {shape, init, scale, trainable}
  YamlTree nodes;                       // [{name, op, inputs, attrs, shape}]
  std::string output;
  Loc loc;
};

struct ModelSpec {
  std::optional<MlpSpec> mlp; // exactly one of mlp / rnn / transformer / conv / graph / mlir
  std::optional<RnnSpec> rnn;
  std::optional<TransformerSpec> transformer;
  std::optional<ConvSpec> conv;
  std::optional<GraphSpec> graph;
  std::string mlir; // a module of attn IR (a file), the task's entry points written by hand
  EmbeddingSpec embedding;    // lm, seq2seq
  Seq2SeqSpec seq2seq;
  std::optional<AttentionSpec> attention; // seq2seq: an attention decoder
  OutputSpec output;
  Loc loc;
};

struct OptimizerSpec {
  Optimizer type = Optimizer::Adam;
  double lr = 1e-3;
  double momentum = 0.0;      // sgd
  double beta1 = 0.9, beta2 = 0.999, epsilon = 1e-8;
  double weightDecay = 0.0;
};

struct ScheduleSpec {
  Schedule type = Schedule::Constant;
  int64_t warmup = 0;
  int64_t stepSize = 1000;
  double gamma = 0.1;
  double minLr = 0.0;
};

// Scheduled sampling (Bengio et al. 2015): the probability p of feeding the decoder the true
// previous token rather than its own prediction, as a function of the training step i.
struct TeacherForcingSpec {
  TeacherSchedule schedule =
      TeacherSchedule::Constant; // constant: p = ratio; linear: max(min, 1 - slope i);
                                 // exponential: max(min, k^i);
                                 // inverse_sigmoid: max(min, k / (k + exp(i / k)))
  double ratio = 1.0;
  double slope = 1e-4;
  double k = 0.999;
  double min = 0.0;
  Loc loc;
};

struct TrainSpec {
  int64_t batchSize = 32;
  int64_t batchTokens = 0;    // pair tasks: batches by padded token count; 0: batchSize rows
  int64_t lengthBuckets = 4;  // batchTokens: the batch shapes the step is compiled for
  uint64_t seed = 1;          // parameter initialisation and shuffling seed
  int64_t steps = 1000;
  OptimizerSpec optimizer;
  ScheduleSpec schedule;
  double clipNorm = 0.0;      // 0: no clipping
  int64_t scanMemory = 1024;  // MiB forward scans store for their backward (0: recompute)
  int64_t evalEvery = 100;
  bool evalBleu = false; // seq2seq: decode the validation pairs at every validation pass
  int64_t logEvery = 50;
  int64_t checkpointEvery = 500;
  std::string checkpointDir;  // empty: runs/<name>
  int64_t patience = 0;       // 0: no early stopping
  double minDelta = 0.0;
  double labelSmoothing = 0.0; // lm, seq2seq
  TeacherForcingSpec teacherForcing; // seq2seq
  Precision precision = Precision::F32; // the training program's products
  Loc loc;
};

// seq2seq: how `attnc translate` and evaluation decode.
struct DecodeSpec {
  int64_t beam = 1;           // 1: greedy
  double lengthPenalty = 0.0; // GNMT's alpha: score = log p / ((5 + |y|) / 6)^alpha
  int64_t maxLength = 0;      // 0: the target length the model was compiled for
  int64_t nbest = 1;          // hypotheses printed per input (<= beam)
  int64_t batch = 16;         // rows decoded at once (greedy: sentences; beam: >= beam)
  std::vector<int64_t> buckets; // shorter source lengths compiled too (< data.max_len)
  std::vector<int64_t> batchBuckets; // fewer rows compiled too (< batch), for the last batch
  int64_t attentionLayer = 0; // transformer plots: the decoder layer (1-based; 0 = the last)
  int64_t attentionHead = 0;  // transformer plots: the head (1-based; 0 = their mean)
  bool sample = false;        // sample tokens instead of taking the likeliest (greedy rows)
  double temperature = 1.0;   // sampling: logits / temperature
  int64_t topK = 0;           // sampling: only from the k likeliest tokens; 0 = all
  uint64_t seed = 1;          // sampling
  DecodePrecision precision = DecodePrecision::F32; // the inference programs' products
  Loc loc;
};

struct SampleSpec {
  int64_t length = 200;
  double temperature = 0.8;
  int64_t topK = 0;           // only the k likeliest characters; 0 = all
  uint64_t seed = 1;
  std::string prime = "The ";
};

struct Spec {
  std::string name;
  Task task = Task::Regress;
  DataSpec data;
  ModelSpec model;
  TrainSpec train;
  SampleSpec sample;
  DecodeSpec decode;
  std::string file;             // the path it was read from
  // Where each key that was written is: in the file, or the `--set KEY` that set it (so an
  // error caused by a command-line flag points at the flag, not at a stored spec).
  std::map<std::string, Loc> keyLocs;
  // data.path, data.valid_path and model.mlir as written, where that was relative (the fields
  // above hold them absolute): an executable reads its data from its working directory.
  std::map<std::string, std::string> writtenPaths;
  Loc locOf(const std::string &key, const Loc &fallback) const {
    auto it = keyLocs.find(key);
    return it == keyLocs.end() ? fallback : it->second;
  }
};

// Parses and validates a spec file. On failure returns nullopt and appends one Diagnostic per
// problem found (unknown key, wrong type, missing required key, value out of range, ...).
std::optional<Spec> parseSpecFile(const std::string &path, std::vector<Diagnostic> &diags);
// Same, from text; `file` names it in diagnostics.
std::optional<Spec> parseSpecString(const std::string &text, const std::string &file,
                                    std::vector<Diagnostic> &diags);

// Applies a `--set key.path=value` override (YAML value syntax) before validation.
// Returned as a diagnostic-free helper to the parser: see Parser.cpp.
struct Override {
  std::string path;  // "train.batch_size"
  std::string value; // "64"
  // The command-line flag that asked for it ("--precision bf16"), where not a --set: errors
  // about the key name that flag, without a position.
  std::string flag = {};
};
std::optional<Spec> parseSpecFile(const std::string &path, const std::vector<Override> &overrides,
                                  std::vector<Diagnostic> &diags);
std::optional<Spec> parseSpecString(const std::string &text, const std::string &file,
                                    const std::vector<Override> &overrides,
                                    std::vector<Diagnostic> &diags);
// `attnc -c base.yaml -c more.yaml`: the first file is the spec, each later one a layer over
// it: its maps merge key by key, its other values (scalars, lists) replace; then the
// overrides. Every diagnostic points at the file (or flag) that wrote the key. Data paths
// are relative to the file that names them.
std::optional<Spec> parseSpecFiles(const std::vector<std::string> &files,
                                   const std::vector<Override> &overrides,
                                   std::vector<Diagnostic> &diags);

// Combinations of valid keys that do not make a model (an encoder-decoder reading sine
// samples, heads that do not divide d_model, a key that does not apply to the chosen cell,
// ...): false with a located Diagnostic for each one found: the checks every model shares,
// then those of its family (Family.h). The importer expects a spec that passed it.
bool checkConsistency(const Spec &spec, std::vector<Diagnostic> &diags);

// The spec as YAML with every default filled in, also those that depend on other keys
// (resolveDependentDefaults); parsing it gives a Spec that means the same.
std::string specToYaml(const Spec &spec);

// Sets the keys whose default depends on others to their value (model.attention.gaussian of
// local attention), so that a printed spec, and every checkpoint's, spells them out.
void resolveDependentDefaults(Spec &spec);

// A spec read back from a checkpoint, as the attnc that wrote it meant it: a key added later
// with a default that changed the model is set to what the older attnc computed. Today:
// local monotonic attention without model.attention.gaussian (stored before the key existed;
// every printed local spec has it since) was trained with the Gaussian. Returns whether it
// changed the spec.
bool upgradeStoredSpec(Spec &spec);

// One key whose value differs between two specs, as specToYaml writes the values ("" where
// a spec has no such key, e.g. model.attention without attention).
struct SpecDifference {
  std::string key; // "model.rnn.gru_form"
  std::string stored, given;
};
// The keys on which `stored` (a checkpoint's) and `given` differ, in schema order, keeping
// those for which `relevant(key)` holds.
std::vector<SpecDifference> specDifferences(const Spec &stored, const Spec &given,
                                            bool (*relevant)(const std::string &key));
// The programs decode.buckets and decode.batch_buckets add to a seq2seq model's: each a
// (source length, rows) pair, 0 for the model's own (data.max_len, decode.batch); every
// length with the full rows, then every fewer rows with every length.
inline std::vector<std::pair<int64_t, int64_t>> decodeBuckets(const Spec &s) {
  std::vector<std::pair<int64_t, int64_t>> out;
  for (int64_t length : s.decode.buckets)
    out.push_back({length, 0});
  for (int64_t rows : s.decode.batchBuckets) {
    for (int64_t length : s.decode.buckets)
      out.push_back({length, rows});
    out.push_back({0, rows});
  }
  return out;
}

// The model section a spec uses, as `attnc check` names it: mlp, rnn, transformer, conv,
// graph or mlir.
inline const char *architectureOf(const Spec &s) {
  const ModelSpec &m = s.model;
  return m.rnn             ? "rnn"
         : m.transformer   ? "transformer"
         : m.conv          ? "conv"
         : m.graph         ? "graph"
         : !m.mlir.empty() ? "mlir"
                           : "mlp";
}
// Whether the model decodes with --no-cache: its decoder also runs over a whole prefix at once
// (@decode_full, @step_full), as in training. The graph form's decoders have no other step.
inline bool parallelDecoder(const Spec &s) {
  return ((s.task == Task::Seq2seq || s.task == Task::Lm) &&
          (s.model.transformer || s.model.graph)) ||
         (s.task == Task::Seq2seq && s.model.conv);
}
// The shapes of task regress (docs/forecasting.md): one-to-many reads one vector per example
// (data.builtin: wave, or a data.path file of vectors with data.features); a forecaster is an rnn
// that predicts more than the next value of a window, as an encoder-decoder.
inline bool oneToMany(const Spec &s) {
  return s.task == Task::Regress &&
         (s.data.builtin == "wave" || (!s.data.path.empty() && s.data.features > 0));
}
inline bool forecaster(const Spec &s) {
  return s.task == Task::Regress && s.model.rnn && s.data.horizon > 1 && !oneToMany(s);
}

// Keys that change a model's equations or its parameters: `task`, `model.*`, `data.tokens`.
// A checkpoint trained under one value is refused under another.
bool changesEquations(const std::string &key);
// Every such key of `s` with its value, as specDifferences prints them, but model.mlir (a
// path): what a checkpoint records of its model (task::kEquationsKey), so that an executable,
// which reads no spec, can refuse a checkpoint of another model as attnc does.
std::map<std::string, std::string> equationValues(const Spec &s);
// Keys a resumed run may change: how long it trains and how often it validates, logs and
// saves (train.steps, eval_every, log_every, checkpoint.*, early_stopping.patience) and
// everything about decoding and sampling. Any other change makes the resumed run a different
// one.
bool resumable(const std::string &key);

// The schema rendered as Markdown (docs/yaml-reference.md is this text, checked by a test).
std::string schemaMarkdown();

} // namespace attn::yaml
