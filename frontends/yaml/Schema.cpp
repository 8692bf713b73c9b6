#include "frontends/yaml/Schema.h"
#include "frontends/yaml/Spec.h"

#include <iomanip>
#include <sstream>

namespace attn::yaml {

namespace {

// Builds one table row; the named setters keep the table readable without C++20 designated
// initialisers.
struct Key {
  KeySchema k;
  Key(std::string path, KeyType type, std::string doc) {
    k.path = std::move(path);
    k.type = type;
    k.doc = std::move(doc);
  }
  Key &required() { k.required = true; return *this; }
  Key &byDefault(std::string text) { k.defaultValue = std::move(text); return *this; }
  Key &oneOf(std::vector<std::string> values) { k.allowed = std::move(values); return *this; }
  Key &atLeast(int64_t min) { k.min = min; return *this; }
  Key &atMost(double max) { k.max = max; return *this; }
  Key &below(double max) { k.max = max; k.maxExclusive = true; return *this; }
  Key &minItems(int64_t n) { k.minItems = n; return *this; }
  Key &maxItems(int64_t n) { k.maxItems = n; return *this; }
  Key &fileName() { k.fileName = true; return *this; }
  Key &exclusive(std::string group) { k.oneOf = std::move(group); return *this; }
  operator KeySchema() const { return k; }
};

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
      Key("name", T::String,
          "Name of the model: letters, digits, `.`, `_` and `-`, starting with a letter or "
          "digit (it names the run directory `runs/<name>` and the compiled entry points).")
          .fileName().required(),
      Key("task", T::String,
          "The learning problem: `regress` predicts a real-valued target from a window "
          "(`data.builtin: sine`); `lm` predicts the next character at every position "
          "(`data.builtin: text`); `seq2seq` maps a source sequence to a target sequence "
          "with an encoder-decoder (`data.builtin: copy | reverse | dates`, or `data.path`); "
          "`tag` labels every token (`data.builtin: pos`, or `data.path`); `classify` labels "
          "a whole sequence (`data.builtin: majority`, or `data.path`).")
          .oneOf({"regress", "lm", "seq2seq", "tag", "classify"}).byDefault("regress"),

      Key("data", T::Map, "Where the examples come from.").required(),
      Key("data.builtin", T::String, "Built-in data generator (see Data sets).")
          .oneOf({"sine", "text", "copy", "reverse", "dates", "pos", "majority"})
          .exclusive("source"),
      Key("data.path", T::String,
          "`seq2seq`, `tag`, `classify`: a UTF-8 text file of `source<TAB>target` lines "
          "(blank lines skipped); the target is the output sequence, the tags (one per "
          "source token) or the label. A relative path is relative to the spec file's folder "
          "(to the current directory when given with `--set`); checkpoints keep it absolute.")
          .exclusive("source"),
      Key("data.valid_path", T::String,
          "With `path`: the validation pairs (relative paths as for `path`); empty holds out "
          "the last `valid` lines of `path`.").byDefault("\"\""),
      Key("data.window", T::Int, "Input length N: time steps (samples or characters) per example.")
          .atLeast(1).atMost(kMaxLength).byDefault("16"),
      Key("data.min_len", T::Int,
          "`copy` / `reverse` / `majority`: the shortest source, in symbols.")
          .atLeast(1).atMost(kMaxLength).byDefault("3"),
      Key("data.max_len", T::Int,
          "`seq2seq`, `tag`, `classify`: the longest source and target in tokens; the model "
          "is compiled for this length and longer pairs are dropped.")
          .atLeast(1).atMost(kMaxLength).byDefault("10"),
      Key("data.symbols", T::Int, "`copy` / `reverse` / `majority`: distinct symbols (2 to 62).")
          .atLeast(2).atMost(62).byDefault("10"),
      Key("data.tokens", T::String,
          "`seq2seq`, `tag`, `classify`: `word` splits lines at whitespace, `char` makes "
          "every character a token (use it for `dates`; tags and labels are always words).")
          .oneOf({"word", "char"}).byDefault("word"),
      Key("data.min_count", T::Int,
          "Vocabularies (`seq2seq`, `tag`, `classify`): tokens seen fewer times in training "
          "become `<unk>`.")
          .atLeast(1).atMost(1e9).byDefault("1"),
      Key("data.max_vocab", T::Int,
          "Vocabularies (`seq2seq`, `tag`, `classify`): keep the most frequent tokens up to "
          "this size (with the 4 specials); 0 keeps all.").atLeast(0).atMost(1e7).byDefault("0"),
      Key("data.train", T::Int, "Number of training examples generated.")
          .atLeast(1).atMost(kMaxExamples).byDefault("2000"),
      Key("data.valid", T::Int, "Number of validation examples generated.")
          .atLeast(0).atMost(kMaxExamples).byDefault("200"),
      Key("data.seed", T::Int, "Seed of the data generator.").atLeast(0).byDefault("1"),

      Key("model", T::Map,
          "The network: exactly one of `mlp` / `rnn` / `transformer`, then the `output` head.")
          .required(),
      Key("model.mlp", T::Map, "Multi-layer perceptron; reads the window as [batch, window].")
          .exclusive("architecture"),
      Key("model.mlp.hidden", T::IntList, "Widths of the hidden layers, first to last.")
          .atLeast(1).minItems(1).atMost(kMaxWidth).maxItems(kMaxLayers).required(),
      Key("model.mlp.activation", T::String, "Activation after each hidden layer.")
          .oneOf({"tanh", "relu", "sigmoid"}).byDefault("tanh"),
      Key("model.rnn", T::Map, "Recurrent network; reads the window as [batch, window, 1].")
          .exclusive("architecture"),
      Key("model.rnn.cell", T::String,
          "Recurrent cell: `rnn` (the seed's tanh cell), `gru` or `lstm`.")
          .oneOf({"rnn", "gru", "lstm"}).byDefault("rnn"),
      Key("model.rnn.gru_form", T::String,
          "`gru` equations: `pytorch` (reset gate applied after the recurrent product), "
          "`seed` (the seed's full GRU: reset gate before it, update gate keeps the candidate) "
          "or `minimal` (the seed's cell with the update gate only).")
          .oneOf({"pytorch", "seed", "minimal"}).byDefault("pytorch"),
      Key("model.rnn.bidirectional", T::Bool,
          "Also run each layer from the last step to the first and merge both directions "
          "(not for `task: lm`, which must not see the future).").byDefault("false"),
      Key("model.rnn.merge", T::String,
          "How a bidirectional layer merges its directions: `concat` (features side by "
          "side, twice as wide) or `sum`.").oneOf({"concat", "sum"}).byDefault("concat"),
      Key("model.rnn.peephole", T::Bool, "`lstm`: peephole connections from the cell state "
          "to the input, forget and output gates.").byDefault("false"),
      Key("model.rnn.projection", T::Int, "`lstm`: project the output to this width "
          "(a<t> = W_proj a0<t> + b_proj); 0 means no projection.").atLeast(0).atMost(kMaxWidth).byDefault("0"),
      Key("model.rnn.hidden", T::Int, "Width of the hidden state.").atLeast(1).atMost(kMaxWidth).byDefault("32"),
      Key("model.rnn.layers", T::Int, "Number of stacked recurrent layers.")
          .atLeast(1).atMost(kMaxLayers).byDefault("1"),
      Key("model.rnn.dropout", T::Float,
          "Dropout probability on the outputs of every layer but the last (as PyTorch's "
          "`dropout`), while training only; each element is zeroed with this probability and "
          "the others scaled by 1 / (1 - p). Needs `layers` >= 2 to do anything.")
          .atLeast(0).below(1).byDefault("0.0"),
      Key("model.transformer", T::Map,
          "A Transformer stack (Vaswani et al.): `seq2seq` builds the encoder-decoder, `lm` a "
          "decoder-only stack (causal self-attention), `tag` / `classify` an encoder-only one "
          "(`classify` averages the real tokens' outputs). Embeddings are scaled by "
          "sqrt(d_model) and added to the positions; encoder and decoder end with a layer norm "
          "(as torch.nn.Transformer). See docs/transformer.md.")
          .exclusive("architecture"),
      Key("model.transformer.layers", T::Int,
          "Layers of the encoder (`seq2seq`, `tag`, `classify`) or of the decoder (`lm`).")
          .atLeast(1).atMost(kMaxLayers).byDefault("2"),
      Key("model.transformer.decoder_layers", T::Int,
          "`seq2seq`: layers of the decoder; 0: as many as `layers`.").atLeast(0).atMost(kMaxLayers).byDefault("0"),
      Key("model.transformer.d_model", T::Int, "Width of every position's vector.")
          .atLeast(1).atMost(kMaxWidth).byDefault("64"),
      Key("model.transformer.heads", T::Int, "Attention heads; must divide `d_model`.")
          .atLeast(1).atMost(1024).byDefault("4"),
      Key("model.transformer.ffn", T::Int,
          "Hidden width of the position-wise feed-forward layer W_2 act(W_1 x + b_1) + b_2.")
          .atLeast(1).atMost(4 * kMaxWidth).byDefault("256"),
      Key("model.transformer.activation", T::String, "The feed-forward layer's activation.")
          .oneOf({"relu", "gelu"}).byDefault("relu"),
      Key("model.transformer.norm", T::String,
          "`post`: x = LayerNorm(x + sublayer(x)) (the paper); `pre`: x = x + "
          "sublayer(LayerNorm(x)).").oneOf({"post", "pre"}).byDefault("post"),
      Key("model.transformer.positions", T::String,
          "`sinusoidal`: PE(p, 2i) = sin(p / 10000^(2i/d)), PE(p, 2i+1) = cos(...); `learned`: "
          "a trained table of one vector per position.")
          .oneOf({"sinusoidal", "learned"}).byDefault("sinusoidal"),
      Key("model.transformer.dropout", T::Float,
          "Dropout probability on the embeddings and on every sublayer's output before its "
          "residual sum, while training only.").atLeast(0).below(1).byDefault("0.0"),
      Key("model.transformer.share_embeddings", T::Bool,
          "`seq2seq`: one vocabulary and one embedding table for source and target.")
          .byDefault("false"),
      Key("model.transformer.tie_output", T::Bool,
          "The output layer's weight is the (target) embedding table, transposed (Press & "
          "Wolf); it keeps its own bias.").byDefault("false"),
      Key("model.embedding", T::Map,
          "`lm`, `seq2seq`, `tag`, `classify`: learned token embeddings feeding the rnn (a "
          "`seq2seq` model has one table for the source and one for the target)."),
      Key("model.embedding.dim", T::Int, "Width of each token's embedding.")
          .atLeast(1).atMost(kMaxWidth).byDefault("32"),
      Key("model.seq2seq", T::Map,
          "`seq2seq`: how the encoder (`model.rnn`) hands the source to the decoder (the "
          "same cell, width and depth)."),
      Key("model.seq2seq.context", T::String,
          "`initial`: the encoder's final states start the decoder (Sutskever et al.); "
          "`every_step`: c = V h_T joins the decoder's input at every step and its readout, "
          "softmax(W h_t + U c + b) (Cho et al.).")
          .oneOf({"initial", "every_step"}).byDefault("initial"),
      Key("model.seq2seq.reverse_source", T::Bool,
          "Read the source last token first, so that its start is near the decoder's "
          "(Sutskever et al.).").byDefault("false"),
      Key("model.seq2seq.decoder_hidden", T::Int,
          "With `model.attention`: the decoder's hidden width, if it differs from the "
          "encoder's `model.rnn.hidden` (a learned bridge maps the encoder's final states); "
          "0: the same.").atLeast(0).atMost(kMaxWidth).byDefault("0"),
      Key("model.attention", T::Map,
          "`seq2seq`: an attention decoder. At every step it scores all encoder states "
          "against its state, takes their softmax over the real (unpadded) source tokens as "
          "weights and reads their weighted sum, the context. The encoder may then be "
          "`bidirectional`. See docs/attention.md for the formulas."),
      Key("model.attention.type", T::String,
          "`bahdanau`: additive scores e_ij = v^T tanh(W s_{i-1} + U h_j) from the previous "
          "decoder state; the context joins the decoder's input and its readout "
          "softmax(V [s_i; c_i] + b). `luong`: global attention from the new state s_i with "
          "`score`; h~_i = tanh(W_c [c_i; s_i]) gives softmax(V h~_i + b). `local`: Luong's "
          "local attention, `luong` restricted to the window [p_i - D, p_i + D] and weighted "
          "by exp(-(j - p_i)^2 / (2 sigma^2)), sigma = D / 2.")
          .oneOf({"bahdanau", "luong", "local"}).byDefault("bahdanau"),
      Key("model.attention.score", T::String,
          "`luong`, `local`: `dot` s^T h (the encoder's output must be as wide as the "
          "decoder's), `general` s^T W h, `concat` v^T tanh(W [s; h]), or `cosine` "
          "tau s^T h / (|s| |h|) (as wide as `dot`; seed 001's cosine similarity, scaled by "
          "`temperature`).")
          .oneOf({"dot", "general", "concat", "cosine"}).byDefault("general"),
      Key("model.attention.dim", T::Int,
          "Width of the additive scores' hidden layer (`bahdanau`, `concat`) and of the "
          "predictive alignment's W_p; 0: the decoder's hidden width.").atLeast(0).atMost(kMaxWidth).byDefault("0"),
      Key("model.attention.align", T::String,
          "`local`: `monotonic` p_i = i, or `predictive` "
          "p_i = S sigmoid(v_p^T tanh(W_p s_i)) with S the source's length.")
          .oneOf({"monotonic", "predictive"}).byDefault("predictive"),
      Key("model.attention.window", T::Int, "`local`: D, the half-width of the window.")
          .atLeast(1).atMost(kMaxLength).byDefault("5"),
      Key("model.attention.input_feeding", T::Bool,
          "`luong`, `local`: feed the previous attentional state h~_{i-1} into the decoder's "
          "input next to the previous token's embedding (Luong et al.'s input feeding).")
          .byDefault("true"),
      Key("model.attention.temperature", T::Float,
          "`score: cosine`: tau, the scale of the cosine. A cosine lies in [-1, 1], so its "
          "softmax is nearly flat unless tau sharpens it (> 0).")
          .atLeast(0).atMost(1e4).byDefault("10.0"),
      Key("model.attention.learn_temperature", T::Bool,
          "`score: cosine`: learn tau (a parameter starting at `temperature`) instead of "
          "keeping it fixed.")
          .byDefault("false"),
      Key("model.output", T::Map, "Dense head that maps the network's features to predictions."),
      Key("model.output.size", T::Int,
          "Width of the output layer (`regress`; an `lm` predicts one logit per character).")
          .atLeast(1).atMost(1e6).byDefault("1"),

      Key("sample", T::Map, "`lm`: how `attnc run` generates text."),
      Key("sample.length", T::Int, "Characters to generate.").atLeast(1).atMost(1e6).byDefault("200"),
      Key("sample.temperature", T::Float,
          "Softmax temperature: lower is more conservative; 0 always takes the likeliest.")
          .atLeast(0).byDefault("0.8"),
      Key("sample.top_k", T::Int,
          "Sample only among the k likeliest characters; 0: among all.").atLeast(0)
          .atMost(1e7).byDefault("0"),
      Key("sample.seed", T::Int, "Seed of the sampling.").atLeast(0).byDefault("1"),
      Key("sample.prime", T::String, "Text fed to the model before it starts generating.")
          .byDefault("\"The \""),

      Key("train", T::Map, "Training settings; every key has a default."),
      Key("train.batch_size", T::Int, "Examples per training step.").atLeast(1).atMost(kMaxBatch).byDefault("32"),
      Key("train.seed", T::Int, "Seed of the parameter initialisation and of the shuffling.")
          .atLeast(0).byDefault("1"),
      Key("train.steps", T::Int, "Training steps (one batch each).").atLeast(1).atMost(1e12).byDefault("1000"),
      Key("train.optimizer", T::Map, "The update rule; every key has a default."),
      Key("train.optimizer.type", T::String,
          "`adam`, `adamw` (decoupled weight decay) or `sgd` (with optional momentum).")
          .oneOf({"adam", "adamw", "sgd"}).byDefault("adam"),
      Key("train.optimizer.lr", T::Float, "Peak learning rate (the schedule scales it).")
          .atLeast(0).byDefault("0.001"),
      Key("train.optimizer.momentum", T::Float, "SGD momentum; 0 is plain SGD.")
          .atLeast(0).byDefault("0.0"),
      Key("train.optimizer.beta1", T::Float, "Adam's first-moment decay.").atLeast(0)
          .below(1).byDefault("0.9"),
      Key("train.optimizer.beta2", T::Float, "Adam's second-moment decay.").atLeast(0)
          .below(1).byDefault("0.999"),
      Key("train.optimizer.epsilon", T::Float, "Adam's denominator guard.").atLeast(0)
          .byDefault("1.0e-8"),
      Key("train.optimizer.weight_decay", T::Float,
          "L2 penalty (`sgd`, `adam`) or decoupled decay (`adamw`).")
          .atLeast(0).byDefault("0.0"),
      Key("train.schedule", T::Map, "Learning-rate schedule over the steps."),
      Key("train.schedule.type", T::String,
          "`constant`; `linear_warmup` (warm-up, then constant); `inverse_sqrt` (warm-up, then "
          "lr * sqrt(warmup / step)); `cosine` (warm-up, then cosine decay to `min_lr` at the "
          "last step); `step` (lr * gamma^floor(step / step_size)).")
          .oneOf({"constant", "linear_warmup", "inverse_sqrt", "cosine", "step"})
          .byDefault("constant"),
      Key("train.schedule.warmup", T::Int, "Steps of linear warm-up from 0 to `lr`.")
          .atLeast(0).byDefault("0"),
      Key("train.schedule.step_size", T::Int, "`step` schedule: steps between decays.")
          .atLeast(1).byDefault("1000"),
      Key("train.schedule.gamma", T::Float, "`step` schedule: factor per decay.")
          .atLeast(0).byDefault("0.1"),
      Key("train.schedule.min_lr", T::Float, "`cosine` schedule: the final learning rate.")
          .atLeast(0).byDefault("0.0"),
      Key("train.clip_norm", T::Float,
          "Scale gradients down to this global L2 norm when above it; 0 disables clipping.")
          .atLeast(0).byDefault("0.0"),
      Key("train.eval_every", T::Int, "Steps between validation passes (and best-model saves).")
          .atLeast(1).byDefault("100"),
      Key("train.log_every", T::Int, "Steps between progress lines when not on a terminal.")
          .atLeast(1).byDefault("50"),
      Key("train.checkpoint", T::Map, "Where and how often checkpoints are written."),
      Key("train.checkpoint.every", T::Int, "Steps between checkpoints (and one at the end).")
          .atLeast(1).byDefault("500"),
      Key("train.checkpoint.dir", T::String,
          "Run directory: checkpoints, metrics.jsonl, loss.png; empty means `runs/<name>`.")
          .byDefault("\"\""),
      Key("train.early_stopping", T::Map, "Stop when validation stops improving."),
      Key("train.early_stopping.patience", T::Int,
          "Validation passes without improvement before stopping; 0 never stops early.")
          .atLeast(0).byDefault("0"),
      Key("train.early_stopping.min_delta", T::Float,
          "How much the validation loss must drop to count as an improvement.")
          .atLeast(0).byDefault("0.0"),
      Key("train.label_smoothing", T::Float,
          "`lm`, `seq2seq`, `tag`, `classify`: spread this much of each target's probability evenly over the "
          "vocabulary.").atLeast(0).below(1).byDefault("0.0"),
      Key("train.teacher_forcing", T::Map,
          "`seq2seq`: scheduled sampling. At step i the decoder reads the true previous "
          "token with probability p(i), else its own most likely prediction (p = 1 is plain "
          "teacher forcing)."),
      Key("train.teacher_forcing.schedule", T::String,
          "`constant`: p = ratio; `linear`: max(min, 1 - slope * i); `exponential`: "
          "max(min, k^i); `inverse_sigmoid`: max(min, k / (k + exp(i / k))).")
          .oneOf({"constant", "linear", "exponential", "inverse_sigmoid"})
          .byDefault("constant"),
      Key("train.teacher_forcing.ratio", T::Float, "`constant`: p.").atLeast(0)
          .atMost(1).byDefault("1.0"),
      Key("train.teacher_forcing.slope", T::Float, "`linear`: decrease of p per step.")
          .atLeast(0).byDefault("0.0001"),
      Key("train.teacher_forcing.k", T::Float,
          "`exponential`: the decay per step (< 1); `inverse_sigmoid`: the steps scale (>= 1).")
          .atLeast(0).byDefault("0.999"),
      Key("train.teacher_forcing.min", T::Float, "The floor of p.").atLeast(0)
          .atMost(1).byDefault("0.0"),

      Key("decode", T::Map, "`seq2seq`: how `attnc translate` and evaluation decode."),
      Key("decode.beam", T::Int, "Beam size; 1 decodes greedily.").atLeast(1).atMost(1024).byDefault("1"),
      Key("decode.length_penalty", T::Float,
          "GNMT's alpha: hypotheses are ranked by log p / ((5 + length) / 6)^alpha; 0 ranks "
          "by log p.").atLeast(0).byDefault("0.0"),
      Key("decode.max_length", T::Int,
          "Longest output in tokens; 0 means the target length the model was compiled for "
          "(`data.max_len` + 1).").atLeast(0).atMost(kMaxLength).byDefault("0"),
      Key("decode.nbest", T::Int, "Hypotheses printed per input (at most `beam`).")
          .atLeast(1).atMost(1024).byDefault("1"),
      Key("decode.batch", T::Int,
          "Greedy decoding: sentences decoded at once (the compiled decoder's rows).")
          .atLeast(1).atMost(kMaxBatch).byDefault("16"),
      Key("decode.attention_layer", T::Int,
          "`model.transformer`: the decoder layer whose cross-attention weights plots show "
          "(1 is the first); 0: the last.").atLeast(0).byDefault("0"),
      Key("decode.attention_head", T::Int,
          "`model.transformer`: the head plots show (1 is the first); 0: the mean over "
          "heads.").atLeast(0).byDefault("0"),
      Key("decode.sample", T::Bool,
          "Draw each token from the model's distribution (with `temperature` and `top_k`) "
          "instead of taking the likeliest; needs `beam: 1`.").byDefault("false"),
      Key("decode.temperature", T::Float, "Sampling: the log-probabilities are divided by it.")
          .atLeast(0).byDefault("1.0"),
      Key("decode.top_k", T::Int, "Sampling: only among the k likeliest tokens; 0: among all.")
          .atLeast(0).atMost(1e7).byDefault("0"),
      Key("decode.seed", T::Int, "Sampling: the seed.").atLeast(0).byDefault("1"),
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
- target: `y[i] = sin(phi_i + 0.1 window)`

`data.train` and `data.valid` examples are generated. An `rnn` reads the inputs as a tensor of
shape `[batch, window, 1]` (one feature per time step); an `mlp` reads them as
`[batch, window]`. Both predict `[batch, output.size]`; the target has one value, so use
`output.size: 1`.

### `text`

`data.builtin: text` is an embedded English corpus of a few KB (plain ASCII). Its characters,
sorted, are the vocabulary (about 40 of them); the first 90% of the text is the training part,
the rest the validation part. Each example is a window of `data.window` consecutive
characters starting at a random position (`data.train` / `data.valid` of them, seeded with
`data.seed` and `data.seed + 1`): the input is the window and the target is the window shifted
by one character, so a `task: lm` model learns to predict the next character at every position
(teacher forcing). It reads the characters through `model.embedding` into `model.rnn`; a dense
head gives one logit per character of the vocabulary, and the loss is the cross-entropy.

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
