#include "frontends/yaml/Schema.h"
#include "frontends/yaml/Spec.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <charconv>
#include <iomanip>
#include <sstream>

namespace attn::yaml {

std::string valueText(const KeySchema &key, const KeyValue &value) {
  switch (value.index()) {
  case 0:
    return std::to_string(std::get<int64_t>(value));
  case 1: {
    char buf[64];
    auto [end, ec] = std::to_chars(buf, buf + sizeof buf, std::get<double>(value));
    std::string text(buf, ec == std::errc() ? end : buf);
    // "3" would read back as an integer where the schema wants a float: keep it a float.
    if (text.find_first_of(".eEn") == std::string::npos)
      text += ".0";
    return text;
  }
  case 2:
    return std::get<bool>(value) ? "true" : "false";
  case 3: {
    const std::string &text = std::get<std::string>(value);
    if (key.plain)
      return text;
    YAML::Emitter out;
    out << YAML::DoubleQuoted << text;
    return out.c_str();
  }
  case 4: {
    std::string text;
    for (int64_t v : std::get<std::vector<int64_t>>(value))
      text += (text.empty() ? "" : ", ") + std::to_string(v);
    return "[" + text + "]";
  }
  default: {
    YAML::Emitter out;
    out << YAML::Flow;
    emitTree(out, std::get<YamlTree>(value));
    return out.c_str();
  }
  }
}

namespace {
// Whether `tree` reads well on one line: a list of scalars, or a map of scalars and such
// lists (a shape, a node, a parameter).
bool flat(const YamlTree &tree, int depth = 0) {
  using K = YamlTree::Kind;
  if (tree.kind == K::Scalar || tree.kind == K::Null)
    return true;
  if (depth == 2)
    return false;
  if (tree.kind == K::Sequence)
    return std::all_of(tree.items.begin(), tree.items.end(),
                       [&](const YamlTree &t) { return flat(t, 2); });
  return std::all_of(tree.entries.begin(), tree.entries.end(),
                     [&](const auto &e) { return flat(e.second, depth + 1); });
}
} // namespace

void emitTree(YAML::Emitter &out, const YamlTree &tree) {
  if (tree.kind != YamlTree::Kind::Scalar && flat(tree))
    out << YAML::Flow;
  switch (tree.kind) {
  case YamlTree::Kind::Null:
    out << YAML::Null;
    return;
  case YamlTree::Kind::Scalar:
    if (tree.quoted)
      out << YAML::DoubleQuoted;
    out << tree.scalar;
    return;
  case YamlTree::Kind::Sequence:
    out << YAML::BeginSeq;
    for (const YamlTree &item : tree.items)
      emitTree(out, item);
    out << YAML::EndSeq;
    return;
  case YamlTree::Kind::Map:
    out << YAML::BeginMap;
    for (const auto &[key, value] : tree.entries) {
      out << YAML::Key;
      emitTree(out, key);
      out << YAML::Value;
      emitTree(out, value);
    }
    out << YAML::EndMap;
    return;
  }
}

namespace {

// The sections of a Spec by their struct type: the one place that knows where each lives
// (null: an optional section the spec does not have).
template <typename S> struct Tag {};
Spec *sectionOf(Spec &s, Tag<Spec>) { return &s; }
DataSpec *sectionOf(Spec &s, Tag<DataSpec>) { return &s.data; }
ModelSpec *sectionOf(Spec &s, Tag<ModelSpec>) { return &s.model; }
MlpSpec *sectionOf(Spec &s, Tag<MlpSpec>) { return s.model.mlp ? &*s.model.mlp : nullptr; }
RnnSpec *sectionOf(Spec &s, Tag<RnnSpec>) { return s.model.rnn ? &*s.model.rnn : nullptr; }
TransformerSpec *sectionOf(Spec &s, Tag<TransformerSpec>) {
  return s.model.transformer ? &*s.model.transformer : nullptr;
}
AttentionModSpec *sectionOf(Spec &s, Tag<AttentionModSpec>) {
  return s.model.transformer ? &s.model.transformer->attention : nullptr;
}
ConvSpec *sectionOf(Spec &s, Tag<ConvSpec>) { return s.model.conv ? &*s.model.conv : nullptr; }
GraphSpec *sectionOf(Spec &s, Tag<GraphSpec>) { return s.model.graph ? &*s.model.graph : nullptr; }
EmbeddingSpec *sectionOf(Spec &s, Tag<EmbeddingSpec>) { return &s.model.embedding; }
Seq2SeqSpec *sectionOf(Spec &s, Tag<Seq2SeqSpec>) { return &s.model.seq2seq; }
AttentionSpec *sectionOf(Spec &s, Tag<AttentionSpec>) {
  return s.model.attention ? &*s.model.attention : nullptr;
}
OutputSpec *sectionOf(Spec &s, Tag<OutputSpec>) { return &s.model.output; }
SampleSpec *sectionOf(Spec &s, Tag<SampleSpec>) { return &s.sample; }
TrainSpec *sectionOf(Spec &s, Tag<TrainSpec>) { return &s.train; }
OptimizerSpec *sectionOf(Spec &s, Tag<OptimizerSpec>) { return &s.train.optimizer; }
ScheduleSpec *sectionOf(Spec &s, Tag<ScheduleSpec>) { return &s.train.schedule; }
TeacherForcingSpec *sectionOf(Spec &s, Tag<TeacherForcingSpec>) {
  return &s.train.teacherForcing;
}
DecodeSpec *sectionOf(Spec &s, Tag<DecodeSpec>) { return &s.decode; }

template <typename S> S *section(Spec &s) { return sectionOf(s, Tag<S>{}); }
template <typename S> const S *section(const Spec &s) {
  return sectionOf(const_cast<Spec &>(s), Tag<S>{});
}

// A field's KeyType and its value as a KeyValue, and back.
template <typename T, typename = void> struct FieldType;
// Enums are strings in a spec file, spelled as EnumNames says (Spec.h).
template <typename E> struct FieldType<E, std::enable_if_t<std::is_enum_v<E>>> {
  static constexpr KeyType type = KeyType::String;
  static KeyValue wrap(E v) { return std::string(nameOf(v)); }
  static E unwrap(const KeyValue &v) { return *enumOf<E>(std::get<std::string>(v)); }
};
template <> struct FieldType<int64_t> {
  static constexpr KeyType type = KeyType::Int;
  static KeyValue wrap(int64_t v) { return v; }
  static int64_t unwrap(const KeyValue &v) { return std::get<int64_t>(v); }
};
template <> struct FieldType<uint64_t> { // seeds: non-negative, written as integers
  static constexpr KeyType type = KeyType::Int;
  static KeyValue wrap(uint64_t v) { return (int64_t)v; }
  static uint64_t unwrap(const KeyValue &v) { return (uint64_t)std::get<int64_t>(v); }
};
template <> struct FieldType<double> {
  static constexpr KeyType type = KeyType::Float;
  static KeyValue wrap(double v) { return v; }
  static double unwrap(const KeyValue &v) { return std::get<double>(v); }
};
template <> struct FieldType<bool> {
  static constexpr KeyType type = KeyType::Bool;
  static KeyValue wrap(bool v) { return v; }
  static bool unwrap(const KeyValue &v) { return std::get<bool>(v); }
};
template <> struct FieldType<std::string> {
  static constexpr KeyType type = KeyType::String;
  static KeyValue wrap(const std::string &v) { return v; }
  static std::string unwrap(const KeyValue &v) { return std::get<std::string>(v); }
};
// A key whose default depends on other keys: absent from a spec (and from its printed form)
// unless written, and the reader of the field decides (AttentionSpec::gaussianWeighting).
template <typename T> struct FieldType<std::optional<T>> {
  static constexpr KeyType type = FieldType<T>::type;
  static std::optional<KeyValue> wrap(const std::optional<T> &v) {
    return v ? std::optional<KeyValue>(FieldType<T>::wrap(*v)) : std::nullopt;
  }
  static std::optional<T> unwrap(const KeyValue &v) { return FieldType<T>::unwrap(v); }
};
template <> struct FieldType<std::vector<int64_t>> {
  static constexpr KeyType type = KeyType::IntList;
  static KeyValue wrap(const std::vector<int64_t> &v) { return v; }
  static std::vector<int64_t> unwrap(const KeyValue &v) {
    return std::get<std::vector<int64_t>>(v);
  }
};

template <> struct FieldType<YamlTree> {
  static constexpr KeyType type = KeyType::Yaml;
  static KeyValue wrap(const YamlTree &v) { return v; }
  static YamlTree unwrap(const KeyValue &v) { return std::get<YamlTree>(v); }
};

// Builds one table row; the named setters keep the table readable without C++20 designated
// initialisers. A leaf row names its field (`&RnnSpec::hidden`): its type, its default (the
// field's initialiser in Spec.h) and its place come from there.
struct Key {
  KeySchema k;
  std::optional<KeyValue> initial; // the field's initialiser: the default unless dropped

  template <typename S, typename T> Key(std::string path, T S::*field, std::string doc) {
    k.path = std::move(path);
    k.type = FieldType<T>::type;
    k.doc = std::move(doc);
    if (std::is_same_v<T, uint64_t>)
      k.min = 0;
    if constexpr (std::is_enum_v<T>) { // its values are the enum's, written plain
      k.allowed.assign(EnumNames<T>::names.begin(), EnumNames<T>::names.end());
      if constexpr (HasAliases<T>::value)
        for (const auto &alias : EnumNames<T>::aliases)
          k.allowed.push_back(alias.first);
      k.plain = true;
    }
    initial = FieldType<T>::wrap(S{}.*field);
    k.bind.get = [field](const Spec &s) -> std::optional<KeyValue> {
      const S *sec = section<S>(s);
      if (!sec)
        return std::nullopt;
      return FieldType<T>::wrap(sec->*field);
    };
    k.bind.set = [field](Spec &s, const KeyValue &v) {
      if (S *sec = section<S>(s))
        sec->*field = FieldType<T>::unwrap(v);
    };
  }
  // A map that is always there; `loc` (if any) records where it was written.
  Key(std::string path, std::string doc) {
    k.path = std::move(path);
    k.type = KeyType::Map;
    k.doc = std::move(doc);
  }
  template <typename S> Key(std::string path, Loc S::*loc, std::string doc)
      : Key(std::move(path), std::move(doc)) {
    k.bind.open = [loc](Spec &s, const Loc &where) {
      if (S *sec = section<S>(s)) // a map inside an optional section the spec does not have
        sec->*loc = where;
    };
  }
  Key &required() { k.required = true; initial.reset(); return *this; }
  Key &oneOf(std::vector<std::string> values) {
    k.allowed = std::move(values);
    k.plain = true;
    return *this;
  }
  Key &atLeast(int64_t min) { k.min = min; return *this; }
  Key &atMost(double max) { k.max = max; return *this; }
  Key &below(double max) { k.max = max; k.maxExclusive = true; return *this; }
  Key &minItems(int64_t n) { k.minItems = n; return *this; }
  Key &maxItems(int64_t n) { k.maxItems = n; return *this; }
  Key &fileName() { k.fileName = true; return *this; }
  // One of a group of siblings (exactly one present): no default.
  Key &exclusive(std::string group) { k.oneOf = std::move(group); initial.reset(); return *this; }
  operator KeySchema() const {
    KeySchema out = k;
    if (initial)
      out.defaultValue = valueText(out, *initial);
    return out;
  }
};

// An optional section (`model.rnn`): present when the spec writes it.
template <typename S>
Key Optional(std::string path, std::optional<S> ModelSpec::*member, std::string doc) {
  Key key(std::move(path), std::move(doc));
  key.k.bind.present = [member](const Spec &s) { return (s.model.*member).has_value(); };
  key.k.bind.open = [member](Spec &s, const Loc &where) {
    S section;
    section.loc = where;
    s.model.*member = section;
  };
  return key;
}

template <typename S> Key Map(std::string path, Loc S::*loc, std::string doc) {
  return Key(std::move(path), loc, std::move(doc));
}
Key Map(std::string path, std::string doc) { return Key(std::move(path), std::move(doc)); }

// Bounds on sizes, checked before anything is built: a width or length of 10^9 passed the old
// `>= 1` checks and then exhausted memory in the importer or in LLVM. They sit well above what
// a model trained on a CPU uses; the importer also bounds every tensor and the parameters
// (Importer.cpp).
constexpr double kMaxWidth = 16384;    // hidden sizes, d_model, ffn, embedding and attention dims
constexpr double kMaxLength = 4096;    // sequence lengths (window, max_len, decoding lengths)
constexpr double kMaxLayers = 32;      // stacked layers (compile time grows with them)
constexpr double kMaxExamples = 1e7;   // generated examples
constexpr double kMaxBatch = 65536;    // examples per step or decoding batch

std::vector<KeySchema> buildTable() {
  using T = KeyType;
  return {
      Key("name", &Spec::name,
          "Name of the model: letters, digits, `.`, `_` and `-`, starting with a letter or "
          "digit (it names the run directory `runs/<name>` and the compiled entry points).")
          .fileName()
          .required(),
      Key("task", &Spec::task,
          "The learning problem: `regress` predicts the next real value, or the next "
          "`data.horizon` values, from a window (`data.builtin: sine | sines`); `lm` predicts the "
          "next character (`data.builtin: text`) or token (`data.path`, a text of your own) at "
          "every position; `seq2seq` maps a source sequence to a target sequence "
          "with an encoder-decoder (`data.builtin: copy | reverse | dates`, or `data.path`); "
          "`tag` labels every token (`data.builtin: pos`, or `data.path`); `classify` labels "
          "a whole sequence (`data.builtin: majority`, or `data.path`)."),

      Map("data", &DataSpec::loc, "Where the examples come from.").required(),
      Key("data.builtin", &DataSpec::builtin, "Built-in data generator (see Data sets).")
          .oneOf({"sine", "sines", "wave", "text", "copy", "reverse", "dates", "pos", "majority"})
          .exclusive("source"),
      Key("data.path", &DataSpec::path,
          "`seq2seq`, `tag`, `classify`: a UTF-8 text file of `source<TAB>target` lines "
          "(blank lines skipped); the target is the output sequence, the tags (one per "
          "source token) or the label. `regress`: one time series, a value per line (or the "
          "first field of a CSV line; a header line is skipped), cut into every window of "
          "`window` + `horizon` values. `lm`: a UTF-8 text of your own, read as `tokens` "
          "(docs/data.md, \"A language model of your own text\"). A relative path is relative to the spec file's folder "
          "(to the current directory when given with `--set`); checkpoints keep it absolute.")
          .exclusive("source"),
      Key("data.valid_path", &DataSpec::validPath,
          "With `path`: the validation pairs, series or text (relative paths as for `path`); "
          "empty holds out the last `valid` lines (`regress`: windows; `lm`: the last tenth "
          "of the text's tokens) of `path`."),
      Key("data.window", &DataSpec::window,
          "Input length N: time steps (samples, characters or tokens) per example.")
          .atLeast(1)
          .atMost(kMaxLength),
      Key("data.horizon", &DataSpec::horizon,
          "`regress`: output length M. `sine`, `sines`: the values after the window to "
          "predict; with `model.rnn` and M > 1 the model is an encoder-decoder forecaster "
          "that feeds back its own predictions. `wave`: the length of the generated "
          "sequence (docs/forecasting.md).")
          .atLeast(1)
          .atMost(kMaxLength),
      Key("data.features", &DataSpec::features,
          "`regress` with `data.path`: one to many from a file. Each line is one example: "
          "`features` numbers, the input vector, then `data.horizon` numbers, the sequence to "
          "generate, separated by spaces, tabs or commas ('#' starts a comment; no header). "
          "0: the file is one series cut into windows.")
          .atLeast(0)
          .atMost(kMaxWidth),
      Key("data.min_len", &DataSpec::minLen,
          "`copy` / `reverse` / `majority`: the shortest source, in symbols.")
          .atLeast(1)
          .atMost(kMaxLength),
      Key("data.max_len", &DataSpec::maxLen,
          "`seq2seq`, `tag`, `classify`: the longest source and target in tokens; the model "
          "is compiled for this length and longer pairs are dropped.")
          .atLeast(1)
          .atMost(kMaxLength),
      Key("data.symbols", &DataSpec::symbols,
          "`copy` / `reverse` / `majority`: distinct symbols (2 to 62).")
          .atLeast(2)
          .atMost(62),
      Key("data.tokens", &DataSpec::tokens,
          "`seq2seq`, `tag`, `classify`, `lm` with `path`: `word` splits lines at whitespace, "
          "`char` makes every character a token (use it for `dates`; tags and labels are always "
          "words; the builtin text is always characters). `seq2seq`, `classify`, `lm`: "
          "`unigram` and `bpe` split into subwords by a SentencePiece "
          "model of `data.vocab_size` pieces trained on the training side (one per side, or "
          "one for both with `data.shared_vocab`); `sentencepiece` by the model in "
          "`data.spm_model`. Checkpoints carry the models, so `translate`, executables and "
          "libraries split and join text as training did."),
      Key("data.vocab_size", &DataSpec::vocabSize,
          "`tokens: unigram | bpe`: the pieces of each SentencePiece model (fewer when the "
          "training text has fewer).")
          .atLeast(8)
          .atMost(1e6),
      Key("data.shared_vocab", &DataSpec::sharedVocab,
          "`seq2seq`: one vocabulary for source and target (and one subword model, with "
          "`tokens: unigram | bpe`); `model.transformer.share_embeddings` implies it."),
      Key("data.spm_model", &DataSpec::spmModel,
          "`tokens: sentencepiece`: a SentencePiece model file (`.model`, as "
          "`spm_train` writes it) that splits both sides. A relative path is relative to the "
          "spec file's folder."),
      Key("data.skip_bad_lines", &DataSpec::skipBadLines,
          "With `data.path` (and `data.valid_path`): leave out the lines that cannot be read "
          "(no tab or several, not UTF-8 text, a tagger's tag count that is not its word "
          "count) and say how many, with the first 20. Without it every such line is reported "
          "(the first 20 and the count) and training does not start."),
      Key("data.stream", &DataSpec::stream,
          "`lm` with `data.path`: lifts the 1 GiB limit (a language model reads its text in "
          "passes and holds only its windows). `seq2seq`, `tag`, `classify` with `data.path`: "
          "train on the file without reading it into memory (any size; without it a file over 1 GiB is refused). One pass "
          "indexes it (kept in the run directory's `data/` and reused while the file and the "
          "tokenizers are the same); training then reads blocks of `data.stream_buffer` "
          "consecutive pairs, visiting the blocks, and the pairs of each block, in an order "
          "drawn per epoch from `train.seed`. Resuming is exact; under `mpirun` each rank "
          "reads only its rows of each batch. The batches differ from an in-memory run's."),
      Key("data.stream_buffer", &DataSpec::streamBuffer,
          "`data.stream`: the pairs of one block, the unit that is shuffled as one and held "
          "in memory (two blocks at most). Larger blocks shuffle better; the file is read a "
          "block at a time.")
          .atLeast(1)
          .atMost(1e8),
      Key("data.min_count", &DataSpec::minCount,
          "Vocabularies (`seq2seq`, `tag`, `classify`): tokens seen fewer times in training "
          "become `<unk>`.")
          .atLeast(1)
          .atMost(1e9),
      Key("data.max_vocab", &DataSpec::maxVocab,
          "Vocabularies (`seq2seq`, `tag`, `classify`): keep the most frequent tokens up to "
          "this size (with the 4 specials); 0 keeps all.")
          .atLeast(0)
          .atMost(1e7),
      Key("data.train", &DataSpec::train,
          "Number of training examples generated (`lm`: windows drawn from the text).")
          .atLeast(1)
          .atMost(kMaxExamples),
      Key("data.valid", &DataSpec::valid,
          "Number of validation examples generated (`lm`: windows drawn from the validation "
          "text).")
          .atLeast(0)
          .atMost(kMaxExamples),
      Key("data.seed", &DataSpec::seed, "Seed of the data generator.").atLeast(0),

      Map("model", &ModelSpec::loc,
          "The network: exactly one of `mlp` / `rnn` / `transformer` / `conv` / `graph` / "
          "`mlir`, then the `output` head.")
          .required(),
      Optional("model.mlp", &ModelSpec::mlp,
               "Multi-layer perceptron; reads the window as [batch, window].")
          .exclusive("architecture"),
      Key("model.mlp.hidden", &MlpSpec::hidden, "Widths of the hidden layers, first to last.")
          .atLeast(1)
          .minItems(1)
          .atMost(kMaxWidth)
          .maxItems(kMaxLayers)
          .required(),
      Key("model.mlp.activation", &MlpSpec::activation, "Activation after each hidden layer."),
      Optional("model.rnn", &ModelSpec::rnn,
               "Recurrent network; reads the window as [batch, window, 1].")
          .exclusive("architecture"),
      Key("model.rnn.cell", &RnnSpec::cell,
          "Recurrent cell: `rnn` (the seed's tanh cell), `gru` or `lstm`."),
      Key("model.rnn.gru_form", &RnnSpec::gruForm,
          "`gru` equations: `pytorch` (reset gate applied after the recurrent product), "
          "`seed` (the seed's full GRU: reset gate before it, update gate keeps the candidate) "
          "or `minimal` (the seed's cell with the update gate only)."),
      Key("model.rnn.bidirectional", &RnnSpec::bidirectional,
          "Also run each layer from the last step to the first and merge both directions "
          "(not for `task: lm`, which must not see the future)."),
      Key("model.rnn.merge", &RnnSpec::merge,
          "How a bidirectional layer merges its directions: `concat` (features side by "
          "side, twice as wide) or `sum`."),
      Key("model.rnn.peephole", &RnnSpec::peephole,
          "`lstm`: peephole connections from the cell state: `diagonal` (per-unit weights "
          "into the input, forget and output gates; `true` means this) or `full` (the seed's "
          "(3-3): full matrices, the old cell state into the input, forget and candidate "
          "gates, the new one into the output gate); `none` (or `false`) for none."),
      Key("model.rnn.feed", &RnnSpec::feed,
          "One-to-many (`data.builtin: wave`): the input vector enters the stack at the "
          "first step only, zeros after it (`first_step`, the seed's figure 2.5), or at every "
          "step (`every_step`, figure 2.6)."),
      Key("model.rnn.projection", &RnnSpec::projection,
          "`lstm`: project the output to this width "
          "(a<t> = W_proj a0<t> + b_proj); 0 means no projection.")
          .atLeast(0)
          .atMost(kMaxWidth),
      Key("model.rnn.hidden", &RnnSpec::hidden, "Width of the hidden state.")
          .atLeast(1)
          .atMost(kMaxWidth),
      Key("model.rnn.layers", &RnnSpec::layers, "Number of stacked recurrent layers.")
          .atLeast(1)
          .atMost(kMaxLayers),
      Key("model.rnn.dropout", &RnnSpec::dropout,
          "Dropout probability on the outputs of every layer but the last (as PyTorch's "
          "`dropout`), while training only; each element is zeroed with this probability and "
          "the others scaled by 1 / (1 - p). Needs `layers` >= 2 to do anything.")
          .atLeast(0)
          .below(1),
      Optional(
          "model.transformer", &ModelSpec::transformer,
          "A Transformer stack (Vaswani et al.): `seq2seq` builds the encoder-decoder, `lm` a "
          "decoder-only stack (causal self-attention), `tag` / `classify` an encoder-only one "
          "(`classify` averages the real tokens' outputs). Embeddings are scaled by "
          "sqrt(d_model) and added to the positions; encoder and decoder end with a layer norm "
          "(as torch.nn.Transformer). See docs/transformer.md.")
          .exclusive("architecture"),
      Key("model.transformer.layers", &TransformerSpec::layers,
          "Layers of the encoder (`seq2seq`, `tag`, `classify`) or of the decoder (`lm`).")
          .atLeast(1)
          .atMost(kMaxLayers),
      Key("model.transformer.decoder_layers", &TransformerSpec::decoderLayers,
          "`seq2seq`: layers of the decoder; 0: as many as `layers`.")
          .atLeast(0)
          .atMost(kMaxLayers),
      Key("model.transformer.d_model", &TransformerSpec::dModel,
          "Width of every position's vector.")
          .atLeast(1)
          .atMost(kMaxWidth),
      Key("model.transformer.heads", &TransformerSpec::heads,
          "Attention heads; must divide `d_model`.")
          .atLeast(1)
          .atMost(1024),
      Key("model.transformer.ffn", &TransformerSpec::ffn,
          "Hidden width of the position-wise feed-forward layer W_2 act(W_1 x + b_1) + b_2.")
          .atLeast(1)
          .atMost(4 * kMaxWidth),
      Key("model.transformer.activation", &TransformerSpec::activation,
          "The feed-forward layer's activation."),
      Key("model.transformer.norm", &TransformerSpec::norm,
          "`post`: x = LayerNorm(x + sublayer(x)) (the paper); `pre`: x = x + "
          "sublayer(LayerNorm(x))."),
      Key("model.transformer.positions", &TransformerSpec::positions,
          "`sinusoidal`: PE(p, 2i) = sin(p / 10000^(2i/d)), PE(p, 2i+1) = cos(...); `learned`: "
          "a trained table of one vector per position."),
      Key("model.transformer.dropout", &TransformerSpec::dropout,
          "Dropout probability on the embeddings and on every sublayer's output before its "
          "residual sum, while training only.")
          .atLeast(0)
          .below(1),
      Key("model.transformer.share_embeddings", &TransformerSpec::shareEmbeddings,
          "`seq2seq`: one vocabulary and one embedding table for source and target."),
      Key("model.transformer.tie_output", &TransformerSpec::tieOutput,
          "The output layer's weight is the (target) embedding table, transposed (Press & "
          "Wolf); it keeps its own bias."),
      Map("model.transformer.attention", &AttentionModSpec::loc,
          "Your own attention, in every self-attention layer (cross attention keeps the "
          "scaled dot product): a score modification and a mask written as expressions, run "
          "forward and backward on the flash kernels' GEMM tiles and in cached decoding. See "
          "docs/transformer.md, \"Your own attention\"."),
      Key("model.transformer.attention.score_mod", &AttentionModSpec::scoreMod,
          "A number over `score` (q . k / sqrt(d_model / heads)), the query and key positions "
          "`i`, `j` (from 0) and the `params` (a per-head one as `name[h]`, a table as "
          "`name[h, index]`), e.g. `score - slope[h] * abs(i - j)` (ALiBi); "
          "operators + - * / < <= > >= == != and or not, functions abs exp log sqrt tanh "
          "sigmoid min max where(c, a, b). Empty: the score."),
      Key("model.transformer.attention.softcap", &AttentionModSpec::softcap,
          "Caps the scores: s becomes softcap * tanh(s / softcap), after `score_mod`; 0: no "
          "cap.")
          .atLeast(0),
      Key("model.transformer.attention.mask", &AttentionModSpec::mask,
          "A condition over `i`, `j` and the `params`: the keys a query may see, e.g. `abs(i - "
          "j) <= 128 or j < 4`; with padding and (in a decoder) causality. Empty: every key."),
      Key("model.transformer.attention.sliding_window", &AttentionModSpec::slidingWindow,
          "Only keys with abs(i - j) < sliding_window (in a decoder: the query and the "
          "sliding_window - 1 before it); whole tiles outside it are skipped. 0: no window.")
          .atLeast(0)
          .atMost(kMaxLength),
      Key("model.transformer.attention.params", &AttentionModSpec::params,
          "Learned scalars the expressions read, in every attention layer (`<layer>.self_attn."
          "<name>` in checkpoints): a map from each name to `{init, shape, learn}`; `init` a "
          "number or `alibi` (2^(-8 (h + 1) / heads) for head h); `shape: [heads]` one value "
          "per head (read as `name[h]`), `[heads, N]` a table of N per head (read as `name[h, "
          "index]` at the nearest column, clamped: T5's relative bias), `[]` (the default) "
          "one; `learn: false` keeps it at `init`."),
      Optional("model.conv", &ModelSpec::conv,
               "`seq2seq`: a convolutional encoder-decoder (Gehring et al. 2017): token + "
               "learned position embeddings, blocks of convolution -> GLU -> residual scaled "
               "by sqrt(0.5), causal convolutions in the decoder with attention over the "
               "encoder in every block. See docs/convs2s.md.")
          .exclusive("architecture"),
      Key("model.conv.layers", &ConvSpec::layers, "Blocks of the encoder.")
          .atLeast(1)
          .atMost(kMaxLayers),
      Key("model.conv.decoder_layers", &ConvSpec::decoderLayers,
          "Blocks of the decoder; 0: as many as `layers`.")
          .atLeast(0)
          .atMost(kMaxLayers),
      Key("model.conv.kernel", &ConvSpec::kernel,
          "Taps of every convolution. The encoder's pad (kernel - 1) / 2 zeros (rounded down) "
          "before the first step and the rest of kernel - 1 after the last, so odd kernels are "
          "centred; the decoder's pad kernel - 1 zeros before the first step (causal).")
          .atLeast(1)
          .atMost(64),
      Key("model.conv.channels", &ConvSpec::channels,
          "Width of every block's input and output (each convolution has 2 x channels "
          "outputs, which the GLU halves).")
          .atLeast(1)
          .atMost(kMaxWidth),
      Key("model.conv.embedding", &ConvSpec::embedding,
          "Width of the token and position embeddings, and of the attention's queries, keys "
          "and values.")
          .atLeast(1)
          .atMost(kMaxWidth),
      Key("model.conv.dropout", &ConvSpec::dropout,
          "Dropout probability on the embeddings, on every block's input and on the "
          "decoder's output before the output layer, while training only.")
          .atLeast(0)
          .below(1),
      Key("model.conv.weight_norm", &ConvSpec::weightNorm,
          "Weight normalisation (Salimans & Kingma) of every convolution and linear layer: "
          "w = g v / |v| per output, `<layer>.weight_v` and `<layer>.weight_g` (g starts at "
          "1) in place of `<layer>.weight`."),
      Key("model.conv.init", &ConvSpec::init,
          "`paper`: the paper's scaled normals (embeddings N(0, 0.1); a layer feeding a GLU "
          "N(0, sqrt(4 p / n)), other layers N(0, sqrt(p / n)), n its inputs, p = 1 - "
          "dropout; zero biases); `pytorch`: nn.Linear / nn.Conv1d / nn.Embedding defaults."),
      Optional("model.graph", &ModelSpec::graph,
               "`regress`, `classify`, `tag`, `lm`, `seq2seq`: the network as attn ops wired by "
               "name, between the task's inputs and its output (the loss is the task's; an "
               "`lm` graph and a `seq2seq` graph's decoder must be causal; an `lm` samples "
               "and a `seq2seq` decodes through cached `@step` / `@encode` + `@decode_step` "
               "where the network allows it, else `@step_full` / `@decode_full`). See "
               "docs/graph.md.")
          .exclusive("architecture"),
      Key("model.graph.params", &GraphSpec::params,
          "The parameters: a map from each name to `{shape, init, scale, trainable}`; "
          "`shape` lists sizes or the task's names for them (`window`, `features`, `outputs` "
          "for `regress`; `length`, `vocab`, `labels` for `classify` and `tag`; `length` "
          "(`data.window`), `vocab` for `lm`; `source`, `target`, `source_vocab`, "
          "`target_vocab` for `seq2seq`; not `batch`, which only nodes' shapes use); "
          "`init` is `zeros`, `ones`, `uniform` (in [-scale, scale]), `normal` (deviation "
          "`scale`), `constant` (every element `scale`) or `alibi` (ALiBi's slopes)."),
      Key("model.graph.nodes", &GraphSpec::nodes,
          "The ops, in order: a list of `{name, op, inputs, attrs, shape}`; `op` is an attn op "
          "(`dense`, `tanh`, `scaled_dot_product_attention`, ...), `inputs` names the task's "
          "inputs (`x`; `src`, `src_mask`; `tokens`, `mask` for `lm`; `src`, `src_mask`, "
          "`tgt_in`, `tgt_mask` for `seq2seq`), parameters and earlier nodes (`node.1` is a "
          "node's second result).")
          .required(),
      Key("model.graph.output", &GraphSpec::output,
          "The node (or input) that is the task's output: the prediction (`regress`) or the "
          "scores (`classify`, `tag`) or the next-token logits (`[batch, length, vocab]` for "
          "`lm`, `[batch, target, target_vocab]` for `seq2seq`).")
          .required(),
      Key("model.mlir", &ModelSpec::mlir,
          "`regress`, `classify`, `tag`: a file of attn IR (relative to the spec) that "
          "defines the task's `@loss` and `@forward`, written by hand. See docs/graph.md.")
          .exclusive("architecture"),
      Map("model.embedding", &EmbeddingSpec::loc,
          "`lm`, `seq2seq`, `tag`, `classify`: learned token embeddings feeding the rnn (a "
          "`seq2seq` model has one table for the source and one for the target)."),
      Key("model.embedding.dim", &EmbeddingSpec::dim, "Width of each token's embedding.")
          .atLeast(1)
          .atMost(kMaxWidth),
      Map("model.seq2seq", &Seq2SeqSpec::loc,
          "`seq2seq`: how the encoder (`model.rnn`) hands the source to the decoder (the "
          "same cell, width and depth)."),
      Key("model.seq2seq.context", &Seq2SeqSpec::context,
          "`initial`: the encoder's final states start the decoder (Sutskever et al.); "
          "`every_step`: c = V h_T joins the decoder's input at every step and its readout, "
          "softmax(W h_t + U c + b) (Cho et al.)."),
      Key("model.seq2seq.reverse_source", &Seq2SeqSpec::reverseSource,
          "Read the source last token first, so that its start is near the decoder's "
          "(Sutskever et al.)."),
      Key("model.seq2seq.decoder_hidden", &Seq2SeqSpec::decoderHidden,
          "With `model.attention`: the decoder's hidden width, if it differs from the "
          "encoder's `model.rnn.hidden` (a learned bridge maps the encoder's final states); "
          "0: the same.")
          .atLeast(0)
          .atMost(kMaxWidth),
      Optional("model.attention", &ModelSpec::attention,
               "`seq2seq`: an attention decoder. At every step it scores all encoder states "
               "against its state, takes their softmax over the real (unpadded) source tokens as "
               "weights and reads their weighted sum, the context. The encoder may then be "
               "`bidirectional`. See docs/attention.md for the formulas."),
      Key("model.attention.type", &AttentionSpec::type,
          "`bahdanau`: additive scores e_ij = v^T tanh(W s_{i-1} + U h_j) from the previous "
          "decoder state; the context joins the decoder's input and its readout "
          "softmax(V [s_i; c_i] + b). `luong`: global attention from the new state s_i with "
          "`score`; h~_i = tanh(W_c [c_i; s_i]) gives softmax(V h~_i + b). `local`: Luong's "
          "local attention, `luong` restricted to the window [p_i - D, p_i + D] (see `align`, "
          "`window`, `gaussian`). `hard`: Xu et al.'s stochastic hard attention with "
          "`bahdanau`'s decoder and `score`: the decoder reads the one encoder state at a "
          "position drawn from the weights (the most likely one when decoding), trained with "
          "the score-function estimator (see `baseline`, `entropy`, `soft_probability`)."),
      Key("model.attention.score", &AttentionSpec::score,
          "`luong`, `local`, `hard`: `dot` s^T h (the encoder's output must be as wide as the "
          "decoder's), `general` s^T W h, `concat` v^T tanh(W [s; h]), or `cosine` "
          "tau s^T h / (|s| |h|) (as wide as `dot`; seed 001's cosine similarity, scaled by "
          "`temperature`)."),
      Key("model.attention.dim", &AttentionSpec::dim,
          "Width of the additive scores' hidden layer (`bahdanau`, `concat`) and of the "
          "predictive alignment's W_p; 0: the decoder's hidden width.")
          .atLeast(0)
          .atMost(kMaxWidth),
      Key("model.attention.align", &AttentionSpec::align,
          "`local`: `monotonic` p_i = i, or `predictive` "
          "p_i = S sigmoid(v_p^T tanh(W_p s_i)) with S the source's length."),
      Key("model.attention.window", &AttentionSpec::window,
          "`local`: D, the half-width of the window [p_i - D, p_i + D]: 2D + 1 source "
          "positions around an integer p_i (`monotonic`), 2D around a real one "
          "(`predictive`).")
          .atLeast(1)
          .atMost(kMaxLength),
      Key("model.attention.gaussian", &AttentionSpec::gaussian,
          "`local`: multiply the window's weights by exp(-(j - p_i)^2 / (2 sigma^2)), "
          "sigma = D / 2. Default: true for `align: predictive`, false for `monotonic` (as "
          "Luong et al. have it)."),
      Key("model.attention.input_feeding", &AttentionSpec::inputFeeding,
          "`luong`, `local`: feed the previous attentional state h~_{i-1} into the decoder's "
          "input next to the previous token's embedding (Luong et al.'s input feeding)."),
      Key("model.attention.temperature", &AttentionSpec::temperature,
          "`score: cosine`: tau, the scale of the cosine. A cosine lies in [-1, 1], so its "
          "softmax is nearly flat unless tau sharpens it (> 0).")
          .atLeast(0)
          .atMost(1e4),
      Key("model.attention.learn_temperature", &AttentionSpec::learnTemperature,
          "`score: cosine`: learn tau (a parameter starting at `temperature`) instead of "
          "keeping it fixed."),
      Key("model.attention.baseline", &AttentionSpec::baseline,
          "`hard`: what the score-function estimator subtracts from a sentence's "
          "log-likelihood before weighting the gradient of its positions' log-probability: "
          "`leave_one_out`, the mean of the other sentences' in the batch (unbiased, as the "
          "samples are independent; with `train.batch_size: 1` there are none, and it is 0), "
          "or `none`."),
      Key("model.attention.entropy", &AttentionSpec::entropy,
          "`hard`: lambda, the weight of the attention's entropy bonus: the gradient of "
          "-lambda sum_i H(alpha_i) per target token joins the loss's (its value does not), "
          "which keeps the weights from collapsing early.")
          .atLeast(0)
          .atMost(100),
      Key("model.attention.soft_probability", &AttentionSpec::softProbability,
          "`hard`: the probability that a training step of the decoder reads the soft "
          "expectation sum_j alpha_ij h_j instead of a sampled position (Xu et al. use 0.5); "
          "0: always sampled.")
          .atLeast(0)
          .atMost(1),
      Map("model.output", &OutputSpec::loc,
          "Dense head that maps the network's features to predictions."),
      Key("model.output.size", &OutputSpec::size,
          "Width of the output layer (`regress`; an `lm` predicts one logit per character).")
          .atLeast(1)
          .atMost(1e6),

      Map("sample", "`lm`: how `attnc run` generates text."),
      Key("sample.length", &SampleSpec::length, "Characters to generate.").atLeast(1).atMost(1e6),
      Key("sample.temperature", &SampleSpec::temperature,
          "Softmax temperature: lower is more conservative; 0 always takes the likeliest.")
          .atLeast(0),
      Key("sample.top_k", &SampleSpec::topK,
          "Sample only among the k likeliest characters; 0: among all.")
          .atLeast(0)
          .atMost(1e7),
      Key("sample.seed", &SampleSpec::seed, "Seed of the sampling.").atLeast(0),
      Key("sample.prime", &SampleSpec::prime, "Text fed to the model before it starts generating."),

      Map("train", &TrainSpec::loc, "Training settings; every key has a default."),
      Key("train.batch_size", &TrainSpec::batchSize, "Examples per training step.")
          .atLeast(1)
          .atMost(kMaxBatch),
      Key("train.batch_tokens", &TrainSpec::batchTokens,
          "`seq2seq`, `tag`, `classify`: batches by token count, as fairseq's `--max-tokens` "
          "makes them: the pairs are grouped by length into `train.length_buckets` shapes, "
          "and a batch of pairs at most L tokens long (the longer of source and target, eos "
          "included) holds batch_tokens / L of them, so short pairs are not padded to "
          "`data.max_len`. The training step is compiled once per shape, sharing the "
          "parameters; `train.batch_size` then sizes only the validation batches. Works "
          "with `data.stream` too (docs/data.md). 0: every batch is `train.batch_size` pairs "
          "at the full length.")
          .atLeast(0)
          .atMost(1e9),
      Key("train.length_buckets", &TrainSpec::lengthBuckets,
          "`train.batch_tokens`: how many batch shapes (rows, source length, target length) "
          "the training step is compiled for, chosen from the training pairs' lengths to "
          "waste the fewest padded positions. More shapes: less padding, one more compile "
          "each.")
          .atLeast(1)
          .atMost(64),
      Key("train.seed", &TrainSpec::seed,
          "Seed of the parameter initialisation and of the shuffling.")
          .atLeast(0),
      Key("train.steps", &TrainSpec::steps, "Training steps (one batch each).")
          .atLeast(1)
          .atMost(1e12),
      Map("train.optimizer", "The update rule; every key has a default."),
      Key("train.optimizer.type", &OptimizerSpec::type,
          "`adam`, `adamw` (decoupled weight decay) or `sgd` (with optional momentum)."),
      Key("train.optimizer.lr", &OptimizerSpec::lr, "Peak learning rate (the schedule scales it).")
          .atLeast(0),
      Key("train.optimizer.momentum", &OptimizerSpec::momentum, "SGD momentum; 0 is plain SGD.")
          .atLeast(0),
      Key("train.optimizer.beta1", &OptimizerSpec::beta1, "Adam's first-moment decay.")
          .atLeast(0)
          .below(1),
      Key("train.optimizer.beta2", &OptimizerSpec::beta2, "Adam's second-moment decay.")
          .atLeast(0)
          .below(1),
      Key("train.optimizer.epsilon", &OptimizerSpec::epsilon, "Adam's denominator guard.")
          .atLeast(0),
      Key("train.optimizer.weight_decay", &OptimizerSpec::weightDecay,
          "L2 penalty (`sgd`, `adam`) or decoupled decay (`adamw`).")
          .atLeast(0),
      Map("train.schedule", "Learning-rate schedule over the steps."),
      Key("train.schedule.type", &ScheduleSpec::type,
          "`constant`; `linear_warmup` (warm-up, then constant); `inverse_sqrt` (warm-up, then "
          "lr * sqrt(warmup / step)); `cosine` (warm-up, then cosine decay to `min_lr` at the "
          "last step); `step` (lr * gamma^floor(step / step_size))."),
      Key("train.schedule.warmup", &ScheduleSpec::warmup, "Steps of linear warm-up from 0 to `lr`.")
          .atLeast(0),
      Key("train.schedule.step_size", &ScheduleSpec::stepSize,
          "`step` schedule: steps between decays.")
          .atLeast(1),
      Key("train.schedule.gamma", &ScheduleSpec::gamma, "`step` schedule: factor per decay.")
          .atLeast(0),
      Key("train.schedule.min_lr", &ScheduleSpec::minLr,
          "`cosine` schedule: the final learning rate.")
          .atLeast(0),
      Key("train.clip_norm", &TrainSpec::clipNorm,
          "Scale gradients down to this global L2 norm when above it; 0 disables clipping.")
          .atLeast(0),
      Key("train.scan_memory", &TrainSpec::scanMemory,
          "MiB a training step may use to store, per step of each generic recurrent loop, what "
          "its backward would otherwise recompute (attn-store-scan-residuals); what does not "
          "fit is recomputed. 0 recomputes everything.")
          .atLeast(0),
      Key("train.eval_every", &TrainSpec::evalEvery,
          "Steps between validation passes (and best-model saves); 0 turns validation off "
          "(no `valid_loss`, no `best.safetensors`: the verbs then read `last.safetensors`).")
          .atLeast(0),
      Key("train.eval_bleu", &TrainSpec::evalBleu,
          "`seq2seq`: at every validation pass also decode the validation pairs (as "
          "`decode:` says) and write their BLEU and chrF2 to `metrics.jsonl` (`valid_bleu`, "
          "`valid_chrf`). Costs one decoding of the validation split per pass; early "
          "stopping still watches the validation loss."),
      Key("train.log_every", &TrainSpec::logEvery,
          "Steps between progress lines when not on a terminal.")
          .atLeast(1),
      Map("train.checkpoint", "Where and how often checkpoints are written."),
      Key("train.checkpoint.every", &TrainSpec::checkpointEvery,
          "Steps between checkpoints (and one at the end).")
          .atLeast(1),
      Key("train.checkpoint.dir", &TrainSpec::checkpointDir,
          "Run directory: checkpoints, metrics.jsonl, loss.png; empty means `runs/<name>`."),
      Map("train.early_stopping", "Stop when validation stops improving."),
      Key("train.early_stopping.patience", &TrainSpec::patience,
          "Validation passes without improvement before stopping; 0 never stops early.")
          .atLeast(0),
      Key("train.early_stopping.min_delta", &TrainSpec::minDelta,
          "How much the validation loss must drop to count as an improvement.")
          .atLeast(0),
      Key("train.label_smoothing", &TrainSpec::labelSmoothing,
          "`lm`, `seq2seq`, `tag`, `classify`: spread this much of each target's probability "
          "evenly over the "
          "vocabulary.")
          .atLeast(0)
          .below(1),
      Key("train.precision", &TrainSpec::precision,
          "The number type of the training step's products (docs/precision.md): `f32`, or "
          "`bf16` (matrix products and dense layers, forward and backward, multiply "
          "bfloat16-rounded factors with f32 sums; master weights, optimizer state, softmax, "
          "norms and losses stay f32). `bf16` needs a CPU with AVX512_BF16. Checkpoints keep "
          "f32 weights either way."),
      Map("train.teacher_forcing", &TeacherForcingSpec::loc,
          "`seq2seq` and forecasters: scheduled sampling. At step i the decoder reads the "
          "true previous token (or value) with probability p(i), else its own most likely "
          "prediction (a forecaster's own predicted value); p = 1 is plain teacher forcing."),
      Key("train.teacher_forcing.schedule", &TeacherForcingSpec::schedule,
          "`constant`: p = ratio; `linear`: max(min, 1 - slope * i); `exponential`: "
          "max(min, k^i); `inverse_sigmoid`: max(min, k / (k + exp(i / k)))."),
      Key("train.teacher_forcing.ratio", &TeacherForcingSpec::ratio, "`constant`: p.")
          .atLeast(0)
          .atMost(1),
      Key("train.teacher_forcing.slope", &TeacherForcingSpec::slope,
          "`linear`: decrease of p per step.")
          .atLeast(0),
      Key("train.teacher_forcing.k", &TeacherForcingSpec::k,
          "`exponential`: the decay per step (< 1); `inverse_sigmoid`: the steps scale (>= 1).")
          .atLeast(0),
      Key("train.teacher_forcing.min", &TeacherForcingSpec::min, "The floor of p.")
          .atLeast(0)
          .atMost(1),

      Map("decode", &DecodeSpec::loc,
          "`seq2seq`: how `attnc translate` and evaluation decode (`decode.precision`: "
          "every task's inference programs)."),
      Key("decode.beam", &DecodeSpec::beam, "Beam size; 1 decodes greedily.")
          .atLeast(1)
          .atMost(1024),
      Key("decode.length_penalty", &DecodeSpec::lengthPenalty,
          "GNMT's alpha: hypotheses are ranked by log p / ((5 + length) / 6)^alpha; 0 ranks "
          "by log p.")
          .atLeast(0),
      Key("decode.max_length", &DecodeSpec::maxLength,
          "Longest output in tokens; 0 means the target length the model was compiled for "
          "(`data.max_len` + 1).")
          .atLeast(0)
          .atMost(kMaxLength),
      Key("decode.nbest", &DecodeSpec::nbest, "Hypotheses printed per input (at most `beam`).")
          .atLeast(1)
          .atMost(1024),
      Key("decode.batch", &DecodeSpec::batch,
          "Greedy decoding: sentences decoded at once (the compiled decoder's rows).")
          .atLeast(1)
          .atMost(kMaxBatch),
      Key("decode.buckets", &DecodeSpec::buckets,
          "Source lengths, shorter than `data.max_len`, for which `attnc translate` compiles "
          "the decoder too: each input line is decoded by the shortest that holds it, so "
          "short sentences do not pay for the longest; the outputs are the same.")
          .atLeast(1)
          .atMost(kMaxLength)
          .maxItems(8),
      Key("decode.batch_buckets", &DecodeSpec::batchBuckets,
          "Greedy decoding: row counts, fewer than `decode.batch`, for which the decoder is "
          "compiled too (with every length of `decode.buckets`): a batch of fewer sentences "
          "(one line translated, the last of a file) runs in the smallest that holds it; the "
          "outputs are the same.")
          .atLeast(1)
          .atMost(kMaxBatch)
          .maxItems(8),
      Key("decode.attention_layer", &DecodeSpec::attentionLayer,
          "`model.transformer`, `model.conv`: the decoder layer whose (cross-)attention weights "
          "plots show "
          "(1 is the first); 0: the last.")
          .atLeast(0),
      Key("decode.attention_head", &DecodeSpec::attentionHead,
          "`model.transformer`: the head plots show (1 is the first); 0: the mean over "
          "heads.")
          .atLeast(0),
      Key("decode.sample", &DecodeSpec::sample,
          "Draw each token from the model's distribution (with `temperature` and `top_k`) "
          "instead of taking the likeliest; needs `beam: 1`."),
      Key("decode.temperature", &DecodeSpec::temperature,
          "Sampling: the log-probabilities are divided by it.")
          .atLeast(0),
      Key("decode.top_k", &DecodeSpec::topK,
          "Sampling: only among the k likeliest tokens; 0: among all.")
          .atLeast(0)
          .atMost(1e7),
      Key("decode.seed", &DecodeSpec::seed, "Sampling: the seed.").atLeast(0),
      Key("decode.precision", &DecodeSpec::precision,
          "The number type of the inference programs' products (`attnc run`, `eval`, "
          "`translate`, `compile`; any task): `f32` or `bf16`, as `train.precision` says, or "
          "`int8`: the dense layers whose weight is a parameter (projections, feed-forward, "
          "cells, the output layer) multiply int8 weights, quantised once per output channel, "
          "by int8 rows quantised at each call, with int32 sums; attention, softmax and norms "
          "stay f32. `int8` needs a CPU with AVX512_VNNI."),
  };
}

std::string code(const std::string &text) { return "`" + text + "`"; }

std::string joinCode(const std::vector<std::string> &items) {
  std::string out;
  for (const std::string &item : items)
    out += (out.empty() ? "" : ", ") + code(item);
  return out;
}

std::string requiredCell(const KeySchema &key) {
  if (key.oneOf.empty())
    return key.required ? "yes" : "no";
  std::vector<std::string> group;
  for (const KeySchema *sibling : childrenOf(key.parent()))
    if (sibling->oneOf == key.oneOf)
      group.push_back(sibling->name());
  return "exactly one of " + joinCode(group);
}

} // namespace

std::string boundText(const KeySchema &key) {
  auto num = [](double v) {
    std::ostringstream os;
    os << std::setprecision(12) << v;
    return os.str();
  };
  if (key.min && key.max && !key.maxExclusive)
    return std::to_string(*key.min) + " to " + num(*key.max);
  std::string bound = key.min ? ">= " + std::to_string(*key.min) : "";
  if (key.max)
    bound += (bound.empty() ? "" : ", ") + std::string(key.maxExclusive ? "< " : "<= ") +
             num(*key.max);
  return bound;
}

namespace {

std::string allowedCell(const KeySchema &key) {
  if (key.type == KeyType::Map)
    return "-";
  if (!key.allowed.empty())
    return joinCode(key.allowed);
  std::string bound = boundText(key);
  if (key.type == KeyType::IntList) {
    std::string items = bound.empty() ? "" : "items " + bound;
    if (key.minItems > 0)
      items += (items.empty() ? "" : ", ") + std::string("at least ") +
               std::to_string(key.minItems) + (key.minItems == 1 ? " item" : " items");
    if (key.maxItems > 0)
      items += (items.empty() ? "" : ", ") + std::string("at most ") +
               std::to_string(key.maxItems) + " items";
    return items.empty() ? "any" : items;
  }
  if (key.fileName)
    return "a file name";
  return bound.empty() ? "any" : bound;
}

void renderTable(std::ostringstream &md, const std::string &parentPath) {
  md << "| Key | Type | Default | Required | Allowed values | Description |\n";
  md << "|-----|------|---------|----------|----------------|-------------|\n";
  for (const KeySchema *key : childrenOf(parentPath)) {
    md << "| " << code(key->path) << " | " << typeName(key->type) << " | "
       << (key->defaultValue.empty() ? "-" : code(key->defaultValue)) << " | "
       << requiredCell(*key) << " | " << allowedCell(*key) << " | " << key->doc << " |\n";
  }
}

const char *kIntro = R"(# attnc YAML spec reference

<!-- Generated by schemaMarkdown() from frontends/yaml/Schema.cpp; do not edit by hand.
     Regenerate: ATTN_REGENERATE_DOCS=1 ./bin/attn-frontend-yaml-tests -->

A spec file describes one model: the data it learns from, the network, and how it is trained.
This page lists every key `attnc` accepts; it is generated from the same table the parser
validates against, so it is always complete.

- Keys are case-sensitive. An unknown key is an error (with a "did you mean" hint), so a typo
  never silently falls back to a default.
- A key marked *required* must be present whenever its section is; every other key has the
  default shown. A section marked "no" may be left out entirely.
- Integers are plain numbers (`16`, not `"16"` or `16.0`).
- Any key can be overridden from the command line with `--set <key>=<value>`, where the value
  is YAML, e.g. `--set train.batch_size=64` or `--set model.mlp.hidden=[128,128]`. Overrides
  are applied before validation and checked like the file; their errors point at
  `--set <key>:1:1`.

Problems are reported all at once, one per line, as `file:line:col: error: message`,
followed by a hint where one helps:

```
rnn-sine.yaml:5:20: error: unknown key 'hiden' in 'model.rnn'
  hint: did you mean 'hidden'?
rnn-sine.yaml:7:21: error: 'train.batch_size' must be >= 1, got 0
```

## Examples

)";

const char *kDataSets = R"(## Data sets

### `sine`

`data.builtin: sine` generates windows of a sine wave and asks for the next value. Example `i`
has a phase `phi_i` drawn uniformly from `[0, 2pi)` by a generator seeded with `data.seed`:

- input: `x[i, t] = sin(phi_i + 0.1 t)` for `t = 0 .. window-1`
- target: `y[i, k] = sin(phi_i + 0.1 (window + k))` for `k = 0 .. horizon-1`
  (`data.horizon`, default 1: the next value)

`data.train` and `data.valid` examples are generated (the validation split with
`data.seed + 1`). An `rnn` reads the inputs as a tensor of shape `[batch, window, 1]` (one
feature per time step); an `mlp` reads them as `[batch, window]`. With `horizon: 1` both
predict `[batch, output.size]` with `output.size: 1`; with a longer horizon an `mlp` predicts
all `M` values at once (`output.size: M`) and an `rnn` becomes an encoder-decoder forecaster
(docs/forecasting.md).

### `wave`

`data.builtin: wave` is a one-to-many task (input length 1, output length N): each example is
one vector `x = (a, w, cos phi, sin phi)` with `a ~ U(0.5, 1)`, `w ~ U(0.1, 0.5)` and
`phi ~ U(0, 2pi)` (from `data.seed`; validation `data.seed + 1`), and its target is the wave
`y[t] = a sin(w t + phi)` for `t = 0 .. horizon-1`. An `rnn` reads the vector at the first step
or at every step (`model.rnn.feed`) and predicts `y[t]` from its state at step `t`; an `mlp`
maps the vector to all `horizon` values (`model.output.size: horizon`). `data.window` does not
apply.

### `sines`

`data.builtin: sines` is a forecasting task: each example is one series of `window + horizon`
samples of a noisy mixture of three sines,
`s(t) = sum_c a_c sin(w_c t + phi_c) + 0.05 n_t` with `a_c ~ U(0.2, 0.6)`,
`w_c ~ U(0.05, 0.35)` (radians per sample), `phi_c ~ U(0, 2pi)` and `n_t ~ N(0, 1)`, drawn per
example from `data.seed` (validation: `data.seed + 1`). The input is the first `window`
samples, the target the next `horizon`. The targets are noisy too, so even a perfect
forecaster's mean squared error is `0.05^2 = 0.0025`.

### `text`

`data.builtin: text` is an embedded English corpus of a few KB (plain ASCII). Its characters,
sorted, are the vocabulary (about 40 of them); the first 90% of the text is the training part,
the rest the validation part. Each example is a window of `data.window` consecutive
characters starting at a random position (`data.train` / `data.valid` of them, seeded with
`data.seed` and `data.seed + 1`): the input is the window and the target is the window shifted
by one character, so a `task: lm` model learns to predict the next character at every position
(teacher forcing). It reads the characters through `model.embedding` into `model.rnn`; a dense
head gives one logit per character of the vocabulary, and the loss is the cross-entropy.

`task: lm` with `data.path` learns from a text of your own instead, in characters, words or
subwords (`data.tokens`), with windows of `data.window` tokens drawn from it (`data.train`,
`data.valid`; the validation text is `data.valid_path`, else the text's last tenth):
docs/data.md, "A language model of your own text".

### Sequence pairs (`task: seq2seq`)

An encoder-decoder learns from (source, target) pairs of token sequences:

- `data.builtin: copy` / `reverse`: sources of `data.min_len` to `data.max_len` symbols
  (uniform), drawn from `data.symbols` distinct symbols written `0`-`9`, then `a`-`z`, then
  `A`-`Z`, separated by spaces (`3 0 9 7`); the target is the source (`copy`) or the source
  backwards (`reverse`: `7 9 0 3`). Use `data.tokens: word`.
- `data.builtin: dates`: a date between 1950 and 2049 written in one of eleven human formats
  (`5 March 2019`, `March 5, 2019`, `05/03/2019` (day first), `03/05/19` (month first),
  `Tue 5 Mar 2019`, `2019 Mar 5`, `5.3.19`, `Tuesday, March 5th 2019`, ...), translated to ISO
  `2019-03-05`. Use `data.tokens: char` and `data.max_len: 32` (the longest,
  `Wednesday, September 29th 2049`, has 30 characters).
- `data.path: FILE.tsv`: one pair per line, `source<TAB>target` (blank lines are skipped, CRLF
  is accepted; a line without exactly one tab is an error naming `FILE:LINE`). Validation pairs
  come from `data.valid_path`, or are the last `data.valid` lines of the file.

Generated data draws `data.train` training pairs with `data.seed` and `data.valid` validation
pairs with `data.seed + 1`. Lines are split into tokens by `data.tokens` (`word`: at
whitespace; `char`: every character, spaces included). The source and the target each get a
vocabulary built from the training pairs: `<pad>` = 0, `<bos>` = 1, `<eos>` = 2, `<unk>` = 3,
then the tokens seen at least `data.min_count` times, most frequent first (ties in byte order),
at most `data.max_vocab` entries in all (0: no limit); other tokens read as `<unk>`. Checkpoints
store both vocabularies, so `attnc translate` needs only the checkpoint.

The model is compiled for sources of `data.max_len` tokens and targets of `data.max_len + 1`
(room for `<eos>`); longer pairs are dropped from training and evaluation. Sources are
right-padded with `<pad>` and a mask keeps the encoder's state unchanged past a source's last
token; the decoder reads `<bos> y1 .. yn` and is trained to write `y1 .. yn <eos>` (padding
positions are ignored by the loss).

### Tags and labels (`task: tag`, `task: classify`)

- `data.builtin: pos` (`task: tag`): part-of-speech tagging of a tiny generated English,
  sentences `DET [ADJ] NOUN VERB DET [ADJ] NOUN [ADV]` such as `the old dog sees a fly` with
  the tags `DET ADJ NOUN VERB DET NOUN`. The words `fly`, `watch` and `run` are nouns after a
  determiner or an adjective and verbs after a noun, so the tagger must read the context.
  Sentences have up to 8 words (`data.max_len: 8` or more).
- `data.builtin: majority` (`task: classify`): `data.min_len` to `data.max_len` symbols (as
  for `copy`) with exactly one most frequent symbol; the label is that symbol.
- `data.path: FILE.tsv`: `tokens<TAB>tags` lines (as many whitespace-separated tags as source
  tokens; otherwise an error names the pair) for `tag`, `text<TAB>label` for `classify`.

The source vocabulary is built as for seq2seq, and the tags or labels get a vocabulary of
their own (with the same 4 specials, never predicted). The model reads the tokens through
`model.embedding` and `model.rnn` (which may be `bidirectional`; a mask keeps each direction's
state unchanged over padding), then a dense head gives, for `tag`, one score per tag at every
position and, for `classify`, one per label from the final states. `attnc train` and
`attnc eval` report the accuracy on the validation split (of the tokens for `tag`).

## Keys

)";

} // namespace

std::string KeySchema::name() const {
  size_t dot = path.rfind('.');
  return dot == std::string::npos ? path : path.substr(dot + 1);
}

std::string KeySchema::parent() const {
  size_t dot = path.rfind('.');
  return dot == std::string::npos ? "" : path.substr(0, dot);
}

const std::vector<KeySchema> &schema() {
  static const std::vector<KeySchema> table = buildTable();
  return table;
}

const KeySchema *findKey(const std::string &path) {
  for (const KeySchema &key : schema())
    if (key.path == path)
      return &key;
  return nullptr;
}

std::vector<const KeySchema *> childrenOf(const std::string &parentPath) {
  std::vector<const KeySchema *> children;
  for (const KeySchema &key : schema())
    if (key.parent() == parentPath)
      children.push_back(&key);
  return children;
}

std::string describeType(KeyType type) {
  switch (type) {
  case KeyType::String: return "a string";
  case KeyType::Int: return "an integer";
  case KeyType::Float: return "a number";
  case KeyType::Bool: return "true or false";
  case KeyType::IntList: return "a list of integers";
  case KeyType::Map: return "a map";
  case KeyType::Yaml:
    return "a YAML list or map";
  }
  return "a value";
}

std::string typeName(KeyType type) {
  switch (type) {
  case KeyType::String: return "string";
  case KeyType::Int: return "int";
  case KeyType::Float: return "float";
  case KeyType::Bool: return "bool";
  case KeyType::IntList: return "list of int";
  case KeyType::Map: return "map";
  case KeyType::Yaml:
    return "yaml";
  }
  return "value";
}

const std::vector<ExampleSpec> &exampleSpecs() {
  static const std::vector<ExampleSpec> examples = {
      {"A recurrent network",
       "name: rnn-sine\n"
       "task: regress\n"
       "data: {builtin: sine, window: 16, train: 2000, valid: 200, seed: 7}\n"
       "model:\n"
       "  rnn: {cell: rnn, hidden: 32}\n"
       "  output: {size: 1}\n"
       "train: {batch_size: 32, seed: 1}\n"},
      {"A multi-layer perceptron",
       "name: mlp-sine\n"
       "task: regress\n"
       "data: {builtin: sine, window: 16, train: 2000, valid: 200, seed: 7}\n"
       "model:\n"
       "  mlp: {hidden: [64, 64], activation: tanh}\n"
       "  output: {size: 1}\n"
       "train: {batch_size: 32, seed: 1}\n"},
      {"A character-level language model, trained with Adam and sampled by `attnc run`",
       "name: char-rnn\n"
       "task: lm\n"
       "data: {builtin: text, window: 48, train: 4000, valid: 200, seed: 3}\n"
       "model:\n"
       "  embedding: {dim: 32}\n"
       "  rnn: {cell: rnn, hidden: 64}\n"
       "train:\n"
       "  batch_size: 32\n"
       "  steps: 800\n"
       "  optimizer: {type: adam, lr: 0.003}\n"
       "  schedule: {type: cosine, warmup: 50, min_lr: 0.0003}\n"
       "  clip_norm: 1.0\n"
       "sample: {length: 240, temperature: 0.7, prime: \"The \"}\n"},
      {"An encoder-decoder that learns to reverse sequences, decoded by `attnc translate`",
       "name: reverse-seq2seq\n"
       "task: seq2seq\n"
       "data: {builtin: reverse, min_len: 3, max_len: 10, symbols: 10, train: 20000, valid: 500}\n"
       "model:\n"
       "  embedding: {dim: 32}\n"
       "  rnn: {cell: gru, hidden: 128}\n"
       "  seq2seq: {context: initial}\n"
       "train:\n"
       "  batch_size: 64\n"
       "  steps: 3000\n"
       "  optimizer: {type: adam, lr: 0.003}\n"
       "  clip_norm: 1.0\n"
       "decode: {beam: 1}\n"},
      {"A bidirectional GRU part-of-speech tagger",
       "name: pos-tagger\n"
       "task: tag\n"
       "data: {builtin: pos, max_len: 8, train: 4000, valid: 400}\n"
       "model:\n"
       "  embedding: {dim: 16}\n"
       "  rnn: {cell: gru, hidden: 32, bidirectional: true}\n"
       "train: {steps: 600, optimizer: {lr: 0.01}}\n"},
      {"Translation pairs from a TSV file: the context at every decoder step, scheduled "
       "sampling, beam search",
       "name: words\n"
       "task: seq2seq\n"
       "data: {path: pairs.tsv, valid: 200, max_len: 12, tokens: word, min_count: 2}\n"
       "model:\n"
       "  embedding: {dim: 64}\n"
       "  rnn: {cell: lstm, hidden: 256, layers: 2}\n"
       "  seq2seq: {context: every_step, reverse_source: true}\n"
       "train:\n"
       "  steps: 5000\n"
       "  label_smoothing: 0.1\n"
       "  teacher_forcing: {schedule: inverse_sigmoid, k: 500, min: 0.75}\n"
       "decode: {beam: 5, length_penalty: 0.6, nbest: 1}\n"},
      {"A tagger written as attn ops (the graph form, docs/graph.md): embeddings, a "
       "feed-forward layer, scores per token",
       "name: graph-tagger\n"
       "task: tag\n"
       "data: {builtin: pos, max_len: 8, train: 4000, valid: 400}\n"
       "model:\n"
       "  graph:\n"
       "    params:\n"
       "      table: {shape: [vocab, 16], init: normal, scale: 1.0}\n"
       "      hidden: {shape: [16, 32], scale: 0.25}\n"
       "      out: {shape: [32, labels], scale: 0.18}\n"
       "    nodes:\n"
       "      - {name: e, op: embedding, inputs: [table, src]}\n"
       "      - {name: h, op: dense, inputs: [e, hidden]}\n"
       "      - {name: a, op: relu, inputs: [h]}\n"
       "      - {name: scores, op: dense, inputs: [a, out]}\n"
       "    output: scores\n"
       "train: {steps: 600, optimizer: {lr: 0.01}}\n"},
  };
  return examples;
}

std::string schemaMarkdown() {
  std::ostringstream md;
  md << kIntro;
  for (const ExampleSpec &example : exampleSpecs())
    md << example.title << ":\n\n```yaml\n" << example.yaml << "```\n\n";
  md << kDataSets;

  md << "### Top level\n\n";
  renderTable(md, "");
  for (const KeySchema &section : schema()) {
    if (section.type != KeyType::Map)
      continue;
    md << "\n### " << code(section.path) << "\n\n" << section.doc << "\n\n";
    renderTable(md, section.path);
  }
  return md.str();
}

} // namespace attn::yaml
