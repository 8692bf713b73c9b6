// The graph family's forms: model.graph read and checked (readGraph), its ops built by name
// through MLIR's registered-op interfaces (so every attn op, today's and tomorrow's, is a node
// with no code here), and model.mlir's module checked against the same contract.
#include "frontends/yaml/Graph.h"
#include "frontends/yaml/GraphStep.h"
#include "frontends/yaml/ImportBuilder.h"
#include "frontends/yaml/ScoreExpr.h"

#include "attn/File.h"
#include "attn/Names.h"
#include "attn/data/Sine.h"

#include "dialect/AttnDialect.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Parser/Parser.h"

#include "llvm/ADT/ScopeExit.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <set>

using namespace mlir;

namespace attn::yaml::graph {
namespace {

using Kind = YamlTree::Kind;

// `node.K`: node's result K (K in 0..99, no leading zeros); nullopt for any other name.
std::optional<std::pair<std::string, size_t>> resultRef(const std::string &name) {
  size_t dot = name.rfind('.');
  if (dot == std::string::npos || dot == 0 || dot + 1 >= name.size() || name.size() - dot > 3)
    return std::nullopt;
  std::string digits = name.substr(dot + 1);
  if (digits.find_first_not_of("0123456789") != std::string::npos ||
      (digits.size() > 1 && digits[0] == '0'))
    return std::nullopt;
  return std::pair{name.substr(0, dot), (size_t)std::stoul(digits)};
}

// A name a graph may define: letters, digits, '_', '-' and '.', not ending in a result
// reference (`h.1` reads node h's second result), so that every name means one thing; and
// no '/' or ':', which the names attnc derives from parameters use (`w/adam_m`).
bool validName(const std::string &name) {
  return !name.empty() && name.size() <= 128 &&
         std::all_of(
             name.begin(), name.end(),
             [](unsigned char c) { return std::isalnum(c) || c == '_' || c == '-' || c == '.'; }) &&
         !resultRef(name);
}

// A plain scalar of the tree as the spec's keys read it (Schema.h); nullopt otherwise.
bool plain(const YamlTree &t) { return t.kind == Kind::Scalar && !t.quoted; }
std::optional<int64_t> asInt(const YamlTree &t) {
  return plain(t) ? parseInt(t.scalar) : std::nullopt;
}
std::optional<double> asFloat(const YamlTree &t) {
  std::optional<double> v = plain(t) ? parseFloat(t.scalar) : std::nullopt;
  return v && std::isfinite(*v) ? v : std::nullopt;
}
std::optional<bool> asBool(const YamlTree &t) {
  return plain(t) ? parseBool(t.scalar) : std::nullopt;
}

const char *kindName(const YamlTree &t) {
  switch (t.kind) {
  case Kind::Null:
    return "nothing";
  case Kind::Scalar:
    return "a scalar";
  case Kind::Sequence:
    return "a list";
  case Kind::Map:
    return "a map";
  }
  return "a value";
}

// Reads the YAML of model.graph, reporting at each part.
class Reader {
public:
  Reader(const Spec &spec, Problems &p) : spec(spec), p(p) {
    for (const auto &[name, doc] : dimSymbols(spec))
      symbols.insert(name);
  }

  Graph read() {
    const GraphSpec &g = *spec.model.graph;
    Graph out;
    out.output = g.output;
    out.outputLoc = spec.locOf("model.graph.output", g.loc);
    readParams(g.params, out);
    YamlTree nodes = g.nodes;
    if (nodes.loc.line == 0) // left empty: at its key
      nodes.loc = spec.locOf("model.graph.nodes", g.loc);
    readNodes(nodes, out);
    checkNames(out);
    return out;
  }

private:
  std::vector<Dim> readShape(const YamlTree &t, const std::string &what) {
    std::vector<Dim> dims;
    if (t.kind != Kind::Sequence) {
      p.error(t.loc, what + " must be a list of sizes, got " + kindName(t),
              "e.g. [batch, 64]: numbers or " + symbolList());
      return dims;
    }
    for (const YamlTree &item : t.items) {
      Dim d;
      d.loc = item.loc;
      if (std::optional<int64_t> v = asInt(item)) {
        if (*v < 1 || *v > (int64_t(1) << 28))
          p.error(item.loc, what + " holds " + item.scalar + ", but a size is 1 to 2^28");
        d.value = *v;
      } else if (item.kind == Kind::Scalar && symbols.count(item.scalar)) {
        d.symbol = item.scalar;
      } else {
        p.error(item.loc,
                what + " holds '" + (item.kind == Kind::Scalar ? item.scalar : kindName(item)) +
                    "', which is not a size task '" + nameOf(spec.task) + "' gives",
                "sizes are numbers or " + symbolList());
      }
      dims.push_back(d);
    }
    return dims;
  }

  void readParams(const YamlTree &t, Graph &out) {
    if (t.kind == Kind::Null)
      return;
    if (t.kind != Kind::Map) {
      p.error(t.loc, "model.graph.params must be a map from names to {shape, init, scale}, got " +
                         std::string(kindName(t)));
      return;
    }
    for (const auto &[key, value] : t.entries) {
      Param param;
      param.name = key.scalar;
      param.loc = key.loc;
      std::string what = "parameter '" + param.name + "'";
      if (!validName(param.name))
        p.error(key.loc, what + " is not a name a graph may use", kNameRule);
      if (value.kind != Kind::Map) {
        p.error(value.loc,
                what + " must be a map {shape, init, scale, trainable}, got " + kindName(value));
        continue;
      }
      bool shaped = false;
      for (const auto &[k, v] : value.entries) {
        if (k.scalar == "shape") {
          param.shape = readShape(v, "the shape of " + what);
          shaped = true;
        } else if (k.scalar == "init") {
          static const std::set<std::string> inits = {"zeros",  "ones",     "uniform",
                                                      "normal", "constant", "alibi"};
          if (v.kind != Kind::Scalar || !inits.count(v.scalar))
            p.error(v.loc, "the init of " + what +
                               " must be zeros, ones, uniform, normal, constant or alibi");
          else
            param.init = v.scalar;
        } else if (k.scalar == "scale") {
          std::optional<double> s = asFloat(v);
          if (!s || *s < 0 || *s > 1e30)
            p.error(v.loc, "the scale of " + what + " must be a number from 0 to 1e30",
                    "uniform draws from [-scale, scale], normal has deviation scale");
          else
            param.scale = *s;
        } else if (k.scalar == "trainable") {
          std::optional<bool> b = asBool(v);
          if (!b)
            p.error(v.loc, "trainable of " + what + " must be true or false");
          else
            param.trainable = *b;
        } else {
          p.error(k.loc, "unknown key '" + k.scalar + "' in " + what,
                  "a parameter has shape, init, scale and trainable");
        }
      }
      if (!shaped)
        p.error(param.loc, what + " has no shape", "add shape: [sizes...]");
      out.params.push_back(std::move(param));
    }
  }

  void readNodes(const YamlTree &t, Graph &out) {
    if (t.kind != Kind::Sequence) {
      p.error(t.loc, "model.graph.nodes must be a list of {name, op, inputs}, got " +
                         std::string(kindName(t)));
      return;
    }
    for (const YamlTree &item : t.items) {
      if (item.kind != Kind::Map) {
        p.error(item.loc, "a node of model.graph.nodes must be a map {name, op, inputs}, got " +
                              std::string(kindName(item)));
        continue;
      }
      Node node;
      node.loc = item.loc;
      for (const auto &[k, v] : item.entries) {
        if (k.scalar == "name" || k.scalar == "op") {
          if (v.kind != Kind::Scalar || v.scalar.empty()) {
            p.error(v.loc, "a node's " + k.scalar + " must be a name");
            continue;
          }
          (k.scalar == "name" ? node.name : node.op) = v.scalar;
          if (k.scalar == "op")
            node.opLoc = v.loc;
        } else if (k.scalar == "inputs") {
          if (v.kind != Kind::Sequence) {
            p.error(v.loc,
                    "a node's inputs must be a list of names, got " + std::string(kindName(v)));
            continue;
          }
          for (const YamlTree &in : v.items) {
            if (in.kind != Kind::Scalar)
              p.error(in.loc, "a node's inputs are names, got " + std::string(kindName(in)));
            else
              node.inputs.push_back({in.scalar, in.loc});
          }
        } else if (k.scalar == "attrs") {
          if (v.kind != Kind::Map) {
            p.error(v.loc, "a node's attrs must be a map, got " + std::string(kindName(v)));
            continue;
          }
          for (const auto &[an, av] : v.entries)
            node.attrs.push_back({an.scalar, av});
        } else if (k.scalar == "shape") {
          node.shape = readShape(v, "the shape of node '" + node.name + "'");
        } else {
          p.error(k.loc, "unknown key '" + k.scalar + "' in a node",
                  "a node has name, op, inputs, attrs and shape");
        }
      }
      if (node.name.empty())
        p.error(node.loc, "a node of model.graph.nodes has no name", "add name: ...");
      else if (!validName(node.name))
        p.error(node.loc, "node '" + node.name + "' is not a name a graph may use", kNameRule);
      if (node.op.empty()) {
        p.error(node.loc, "node '" + node.name + "' has no op",
                "add op: an attn op, e.g. dense or tanh");
        node.opLoc = node.loc;
      }
      out.nodes.push_back(std::move(node));
    }
  }

  // Every name once; inputs defined before they are used; every parameter used.
  void checkNames(const Graph &g) {
    std::map<std::string, Loc> defined;
    auto define = [&](const std::string &name, const Loc &loc, const char *what) {
      if (name.empty())
        return;
      auto [it, fresh] = defined.emplace(name, loc);
      if (!fresh)
        p.error(loc, std::string(what) + " '" + name + "' is already defined",
                "first at line " + std::to_string(it->second.line) + ", column " +
                    std::to_string(it->second.col) + "; every name is used once");
    };
    for (const auto &[name, doc] : inputsOf(spec))
      defined.emplace(name, spec.model.graph->loc);
    for (const Param &param : g.params)
      define(param.name, param.loc, "parameter");
    std::set<std::string> used;
    auto resolve = [&](const std::string &name) {
      if (defined.count(name))
        return name;
      if (auto ref = resultRef(name); ref && defined.count(ref->first))
        return ref->first;
      return std::string();
    };
    for (const Node &node : g.nodes) {
      for (const auto &[in, loc] : node.inputs) {
        std::string target = resolve(in);
        if (target.empty())
          p.error(
              loc, "node '" + node.name + "' reads '" + in + "', which is not defined before it",
              "inputs name the task's inputs (" + inputList() + "), parameters and earlier nodes");
        else
          used.insert(target);
      }
      define(node.name, node.loc, "node");
    }
    if (resolve(g.output).empty())
      p.error(spec.locOf("model.graph.output", spec.model.graph->loc),
              "model.graph.output names '" + g.output + "', which no node defines");
    used.insert(resolve(g.output));
    for (const Param &param : g.params)
      if (!used.count(param.name))
        p.error(param.loc, "parameter '" + param.name + "' is not read by any node",
                "remove it, or read it: an unread parameter would never train");
  }

  static constexpr const char *kNameRule =
      "names are letters, digits, '_', '-' and '.' (at most 128), and do not end in '.' and a "
      "number, which reads a node's result";
  static std::vector<std::pair<std::string, std::string>> inputsOf(const Spec &s);
  std::string symbolList() const {
    std::string out;
    for (const std::string &s : symbols)
      out += (out.empty() ? "" : ", ") + s;
    return out;
  }
  std::string inputList() const {
    std::string out;
    for (const auto &[name, doc] : inputsOf(spec))
      out += (out.empty() ? "" : ", ") + name;
    return out;
  }

  const Spec &spec;
  Problems &p;
  std::set<std::string> symbols;
};

// The inputs a task's graph reads (its @forward's arguments), with what they hold.
std::vector<std::pair<std::string, std::string>> Reader::inputsOf(const Spec &s) {
  if (s.task == Task::Regress)
    return {{"x", "[batch, window] (or [batch, features]) f32"}};
  if (s.task == Task::Lm)
    return {{"tokens", "[batch, length] character ids"}, {"mask", "[batch, length] all 1"}};
  if (s.task == Task::Seq2seq)
    return {{"src", "[batch, source] token ids"},
            {"src_mask", "[batch, source] 1 at tokens"},
            {"tgt_in", "[batch, target] bos, then the target's tokens"},
            {"tgt_mask", "[batch, target] all 1"}};
  return {{"src", "[batch, length] token ids"}, {"src_mask", "[batch, length] 1 at tokens"}};
}

} // namespace

std::vector<std::pair<std::string, std::string>> dimSymbols(const Spec &s) {
  std::vector<std::pair<std::string, std::string>> out = {{"batch", "train.batch_size"}};
  if (s.task == Task::Regress) {
    if (oneToMany(s))
      out.push_back({"features", "the width of an input vector"});
    else
      out.push_back({"window", "data.window"});
    out.push_back({"outputs", "model.output.size"});
  } else if (s.task == Task::Lm) {
    out.push_back({"length", "data.window"});
    out.push_back({"vocab", "the characters' vocabulary"});
  } else if (s.task == Task::Seq2seq) {
    out.push_back({"source", "the compiled source length"});
    out.push_back({"target", "the compiled target length (decoding: the longest output)"});
    out.push_back({"source_vocab", "the sources' vocabulary"});
    out.push_back({"target_vocab", "the targets' vocabulary"});
  } else {
    out.push_back({"length", "the compiled sequence length"});
    out.push_back({"vocab", "the tokens' vocabulary"});
    out.push_back(
        {"labels", s.task == Task::Tag ? "the tags' vocabulary" : "the labels' vocabulary"});
  }
  return out;
}

Graph readGraph(const Spec &spec, Problems &problems) { return Reader(spec, problems).read(); }

namespace {

// The contract of a task's entry points: @forward(inputs) -> output, @loss(inputs, label);
// for lm, @loss(tokens, next) and @step_full(tokens) -> logits at batch 1; for seq2seq,
// @loss(src, src_mask, tgt_in, tgt_out) and @decode_full(src, src_mask, tgt_in) -> log_probs
// at the decoder's rows and longest output.
struct Io {
  std::string name;
  RankedTensorType type;
};
struct TaskIo {
  SmallVector<Io> inputs;
  Io label, output;
  // Values the graph reads beside its inputs, all ones, for fused_attention's key mask: lm's
  // `mask` (its windows of text have no padding) and seq2seq's `tgt_mask`.
  SmallVector<Io> ones;
  std::map<std::string, int64_t> dims; // the shape names' values
};

// Why a parameter's shape may not use the shape name `dim` (nullopt: it may): a parameter is
// one tensor for every entry point and every program, but these sizes differ between them.
std::optional<std::string> varies(const Spec &s, const ImportOptions &o, const std::string &dim) {
  if (dim == "batch")
    return std::string("sampling and decoding run other batch sizes, and mpirun a shard");
  if (s.task != Task::Seq2seq || (dim != "source" && dim != "target"))
    return std::nullopt;
  if (s.train.batchTokens > 0)
    return std::string("train.batch_tokens compiles the step for several lengths");
  if (dim == "source" && !s.decode.buckets.empty())
    return std::string("decode.buckets compiles shorter sources");
  if (dim == "target" && s.decode.maxLength > o.targetLength)
    return "decoding runs decode.max_length (" + std::to_string(s.decode.maxLength) +
           ") positions, training " + std::to_string(o.targetLength);
  return std::nullopt;
}

TaskIo taskIo(const Spec &s, const ImportOptions &o, MLIRContext &ctx,
              std::optional<int64_t> batchSize = std::nullopt,
              std::optional<int64_t> targetLength = std::nullopt) {
  Type f32 = Float32Type::get(&ctx), i32 = IntegerType::get(&ctx, 32);
  int64_t batch = batchSize.value_or(s.train.batchSize);
  TaskIo io;
  io.dims["batch"] = batch;
  if (s.task == Task::Regress) {
    int64_t width = !oneToMany(s)         ? s.data.window
                    : s.data.path.empty() ? data::kWaveFeatures
                                          : s.data.features;
    int64_t outputs = s.model.output.size;
    io.dims[oneToMany(s) ? "features" : "window"] = width;
    io.dims["outputs"] = outputs;
    io.inputs = {{"x", RankedTensorType::get({batch, width}, f32)}};
    io.label = {"target", RankedTensorType::get({batch, outputs}, f32)};
    io.output = {"y", RankedTensorType::get({batch, outputs}, f32)};
    return io;
  }
  if (s.task == Task::Lm) {
    int64_t length = s.data.window, vocab = o.vocabSize;
    io.dims["length"] = length;
    io.dims["vocab"] = vocab;
    io.inputs = {{"tokens", RankedTensorType::get({batch, length}, i32)}};
    io.ones = {{"mask", RankedTensorType::get({batch, length}, f32)}};
    io.label = {"next", RankedTensorType::get({batch, length}, i32)};
    io.output = {"logits", RankedTensorType::get({batch, length, vocab}, f32)};
    return io;
  }
  if (s.task == Task::Seq2seq) {
    int64_t source = o.sourceLength, target = targetLength.value_or(o.targetLength);
    io.dims["source"] = source;
    io.dims["target"] = target;
    io.dims["source_vocab"] = o.sourceVocab;
    io.dims["target_vocab"] = o.targetVocab;
    io.inputs = {{"src", RankedTensorType::get({batch, source}, i32)},
                 {"src_mask", RankedTensorType::get({batch, source}, f32)},
                 {"tgt_in", RankedTensorType::get({batch, target}, i32)}};
    // A causal decoder reads no padding (it follows eos) from a position the loss counts.
    io.ones = {{"tgt_mask", RankedTensorType::get({batch, target}, f32)}};
    io.label = {"tgt_out", RankedTensorType::get({batch, target}, i32)};
    io.output = {"logits", RankedTensorType::get({batch, target, o.targetVocab}, f32)};
    return io;
  }
  int64_t length = o.sourceLength, labels = o.targetVocab;
  io.dims["length"] = length;
  io.dims["vocab"] = o.sourceVocab;
  io.dims["labels"] = labels;
  io.inputs = {{"src", RankedTensorType::get({batch, length}, i32)},
               {"src_mask", RankedTensorType::get({batch, length}, f32)}};
  if (s.task == Task::Tag) {
    io.label = {"tags", RankedTensorType::get({batch, length}, i32)};
    io.output = {"scores", RankedTensorType::get({batch, length, labels}, f32)};
  } else {
    io.label = {"label", RankedTensorType::get({batch}, i32)};
    io.output = {"scores", RankedTensorType::get({batch, labels}, f32)};
  }
  return io;
}

// Whether a tensor of `sizes` has at most 2^28 elements (counted without overflowing), the
// importer's bound on a tensor.
bool fits(ArrayRef<int64_t> sizes) {
  int64_t n = 1;
  for (int64_t s : sizes)
    if (s < 0 || __builtin_mul_overflow(n, s, &n) || n > (int64_t(1) << 28))
      return false;
  return true;
}

// A module of attn IR is read whole: 16 MiB is far beyond a hand-written one.
constexpr uint64_t kMaxModuleBytes = 16ull << 20;

std::string shapeText(Type type) {
  std::string out;
  llvm::raw_string_ostream os(out);
  os << type;
  return out;
}

// Builds the entry points from the nodes: each op created by its registered name, its result
// types inferred by its InferTypeOpInterface (or the node's shape), and verified at once, so
// a wrong input is reported at the node that has it.
class GraphImporter : public ImportBuilder {
public:
  GraphImporter(const Spec &spec, const ImportOptions &options, MLIRContext &ctx, Graph graph)
      : ImportBuilder(spec, options, ctx), graph(std::move(graph)), io(taskIo(spec, options, ctx)) {
  }

  // regress, classify, tag: @forward then @loss. lm: @loss, then @step_full(tokens [1, L]) ->
  // logits [1, L, V], the network at batch 1, which the sampler runs on the tokens so far and
  // reads at the last (attn/decode/Sample.h); where the network runs one position at a time
  // (GraphStep.h) and not --no-cache, @step in its place, the cached step. seq2seq: @loss, then
  // @decode_full(src [K, S], src_mask, tgt_in [K, L]) -> log_probs [K, L, V] at the decoder's K
  // rows (decode.beam, else decode.batch) and L positions (the longest output), which greedy, beam
  // and sampled decoding run on the prefix so far (attn/decode/Seq2Seq.h, ProgramPrefixModel);
  // where the decoder runs one position at a time and not --no-cache, @encode and @decode_step
  // in its place (ProgramStepModel). Either decoder must be causal (position t reads tokens <= t):
  // training would otherwise learn to read the next token, which decoding does not have.
  OwningOpRef<ModuleOp> build() {
    OwningOpRef<ModuleOp> module = newModule();
    Location l = loc(spec.model.graph->loc);
    if (spec.task == Task::Lm || spec.task == Task::Seq2seq) {
      if (failed(lossEntry(*module, l)))
        return nullptr;
      bool lm = spec.task == Task::Lm;
      io = lm ? taskIo(spec, options, *b.getContext(), /*batchSize=*/1)
              : taskIo(spec, options, *b.getContext(),
                       spec.decode.beam > 1 ? spec.decode.beam : spec.decode.batch,
                       std::max(options.targetLength, spec.decode.maxLength));
      if (failed(outputEntry(*module, lm ? ::attn::names::kStepFull : "decode_full",
                             lm ? io.output.name : ::attn::names::kLogProbs,
                             /*logProbs=*/!lm, l)))
        return nullptr;
      if (!options.decodeFull)
        cached(*module, l);
      return module;
    }
    if (failed(outputEntry(*module, "forward", io.output.name, /*logProbs=*/false, l)) ||
        failed(lossEntry(*module, l)))
      return nullptr;
    return module;
  }

private:
  // What the network's build does differently at one position (stepEntry, decoderEntries):
  // the position's one-hot [K, L] and slot [K, 1, L, 1], the positions seen so far [K, L] (a
  // cached attention's key mask), i's offset in the attentions' expressions; the caches of
  // the cached attentions in, in node order, and out; the window's sizes (the parameters'
  // shapes), the parameters read as tables of positions (their row at the position), the
  // nodes not built (the encoder's, whose values `given` holds), and the attention nodes
  // whose keys and values the step caches.
  struct Step {
    Value oneHot, slot, seen, iOffset;
    SmallVector<Value> cachesIn, cachesOut;
    std::map<std::string, int64_t> fullDims;
    std::set<std::string> tables, skip, cached;
    std::map<std::string, Value> given;
  };

  // Why the decoding network just built (`full`, from `tokens` to `output`) cannot run one
  // position at a time; else the plan (GraphStep.h) in `plan` and "".
  std::string stepPlan(func::FuncOp full, Value tokens, Value mask, StepPlan &plan) {
    auto why = whyNotPositionWise(full, tokens, mask, lastOutput, plan);
    if (!why)
      return "";
    std::string where;
    if (auto at = dyn_cast<FileLineColLoc>(why->first))
      where = at.getFilename().str() + ":" + std::to_string(at.getLine()) + ":" +
              std::to_string(at.getColumn()) + ": ";
    return where + why->second;
  }

  // The step's position inputs made into `at`'s one-hot, slot, seen mask and i offset, for
  // `position` f32 [K, 1] over a window of `window` positions.
  void positionOf(Step &at, Value position, int64_t window, Location l) {
    int64_t rows = cast<RankedTensorType>(position.getType()).getShape()[0];
    SmallVector<float> iota;
    for (int64_t j = 0; j < window; ++j)
      iota.push_back((float)j);
    Value js = b.create<mlir::attn::ConstantOp>(
        l, DenseElementsAttr::get(f32({1, window}), ArrayRef<float>(iota)));
    at.oneHot = b.create<mlir::attn::EqOp>(l, js, position); // [K, L]
    at.slot = b.create<mlir::attn::ReshapeOp>(l, f32({rows, 1, window, 1}), at.oneHot);
    // p - j + 0.5 > 0  <=>  j <= p
    at.seen = b.create<mlir::attn::StepOp>(
        l, b.create<mlir::attn::AddOp>(l, b.create<mlir::attn::SubOp>(l, position, js),
                                       constant(0.5f, l)));
    // The same position in every row: the first row's.
    at.iOffset = b.create<mlir::attn::ReshapeOp>(
        l, f32({}),
        b.create<mlir::attn::SliceOp>(l, position, b.getDenseI64ArrayAttr({0, 0}),
                                      b.getDenseI64ArrayAttr({1, 1})));
  }

  // The cached attentions' caches, [K, H, L, D] keys and values per node: types and names.
  void cacheSignature(const Step &at, SmallVectorImpl<Type> &types,
                      SmallVectorImpl<std::string> &names) {
    for (const AttentionCache &c : attentionCaches)
      if (at.cached.count(c.node)) {
        types.append({c.keys, c.values});
        names.append({"cache." + c.node + ".k", "cache." + c.node + ".v"});
      }
  }

  // Builds `build` with the diagnostics kept: the first one, or "" when it built.
  template <typename F> std::string quietly(F build) {
    std::string error;
    ScopedDiagnosticHandler capture(b.getContext(), [&](mlir::Diagnostic &d) {
      if (error.empty())
        error = d.str();
      return success();
    });
    if (!build() && error.empty())
      error = "it does not build";
    return error;
  }

  // The cached entries in place of the uncached one, `full` (lm: @step for @step_full;
  // seq2seq: @encode and @decode_step for @decode_full), where its network runs one position
  // at a time; else `full` stays, with the reason in its `attn.uncached` attribute
  // (docs/graph.md).
  void cached(ModuleOp module, Location l) {
    bool lm = spec.task == Task::Lm;
    auto full = module.lookupSymbol<func::FuncOp>(lm ? ::attn::names::kStepFull : "decode_full");
    StepPlan plan;
    Value tokens = full.getArgument(lm ? 0 : 2); // tokens, tgt_in
    std::string why = stepPlan(full, tokens, env.at(lm ? "mask" : "tgt_mask").front(), plan);
    if (why.empty())
      why = quietly(
          [&] { return lm ? stepEntry(module, plan, l) : decoderEntries(module, plan, l); });
    if (!why.empty())
      return full->setAttr("attn.uncached", b.getStringAttr(why));
    full.erase();
  }

  // A Step for `plan` at the current insertion point.
  Step stepFor(const StepPlan &plan) {
    Step at;
    at.fullDims = io.dims;
    at.tables = plan.tables;
    for (const auto &[c, cached] : llvm::zip(attentionCaches, plan.cached))
      if (cached)
        at.cached.insert(c.node);
    return at;
  }

  // @step(token i32 [1, 1], position f32 [1, 1], cache.<node>.k [1, H, L, D], cache.<node>.v
  // [1, H, L, Dv] per cached attention node) -> (logits [1, V], position + 1, the caches with
  // the position written): the network at batch 1 and length 1. False (the function erased)
  // when it does not build.
  bool stepEntry(ModuleOp module, const StepPlan &plan, Location l) {
    int64_t window = spec.data.window, vocab = cast<RankedTensorType>(io.output.type).getShape()[2];
    Step at = stepFor(plan);
    SmallVector<Type> types = {i32({1, 1}), f32({1, 1})};
    SmallVector<std::string> names = {"token", ::attn::names::kPosition};
    cacheSignature(at, types, names);
    SmallVector<Type> results(types);
    results[0] = f32({1, vocab});
    SmallVector<StringRef> refs(names.begin(), names.end()), resultRefs(refs);
    resultRefs[0] = io.output.name;
    b.setInsertionPointToEnd(module.getBody());
    auto f = entry(::attn::names::kStep, types, refs, results, resultRefs, l);
    // The caches hold `window` positions: the sampler restarts them when they are full.
    f->setAttr(::attn::names::kCapacityAttr, b.getI64IntegerAttr(window));
    positionOf(at, f.getArgument(1), window, l);
    at.cachesIn.assign(f.getArguments().begin() + 2, f.getArguments().end());
    FailureOr<Value> y = atOnePosition(at, {f.getArgument(0)}, vocab);
    if (failed(y)) {
      f.erase();
      return false;
    }
    SmallVector<Value> outs = {b.create<mlir::attn::ReshapeOp>(l, results[0], *y),
                               b.create<mlir::attn::AddOp>(l, f.getArgument(1), constant(1.0f, l))};
    outs.append(at.cachesOut);
    b.create<func::ReturnOp>(l, outs);
    return true;
  }

  // The network at one position with `at`, its inputs `args` (the task's, null where the step
  // has none), the decoder's length 1: its output [K, 1, vocab].
  FailureOr<Value> atOnePosition(Step &at, ArrayRef<Value> args, int64_t vocab) {
    TaskIo whole = io;
    std::string length = spec.task == Task::Lm ? "length" : "target";
    io.dims[length] = 1;
    int64_t rows = io.dims["batch"];
    Io &tokens = io.inputs[spec.task == Task::Lm ? 0 : 2];
    tokens.type = i32({rows, 1});
    io.output.type = f32({rows, 1, vocab});
    step = &at;
    FailureOr<Value> y = network(args);
    step = nullptr;
    io = std::move(whole);
    return y;
  }

  // The node (or input) an input name reads: `x` for `x` and for its result `x.1`.
  static std::string nodeOf(const std::string &input) {
    std::optional<std::pair<std::string, size_t>> ref = resultRef(input);
    return ref ? ref->first : input;
  }

  // The nodes that read the target (tgt_in, tgt_mask), and those that read the source
  // (src, src_mask) but not the target: the encoder, which @encode runs once.
  std::pair<std::set<std::string>, std::set<std::string>> decoderAndEncoder() {
    std::set<std::string> target = {"tgt_in", "tgt_mask"}, source = {"src", "src_mask"};
    for (const Node &node : graph.nodes)
      for (const auto &[in, where] : node.inputs) {
        if (target.count(nodeOf(in)))
          target.insert(node.name);
        else if (source.count(nodeOf(in)))
          source.insert(node.name);
      }
    for (const Node &node : graph.nodes)
      if (target.count(node.name))
        source.erase(node.name);
    return {target, source};
  }

  // @encode(src [K, S], src_mask [K, S]) -> (position [K, 1] zeros, the caches (zeros), the
  // encoder's values the decoder reads, `memory.<name>`), and @decode_step(token i32 [K, 1],
  // position, the caches, the encoder's values, src/src_mask where the decoder reads them)
  // -> (log_probs [K, V], position + 1, the caches with the position written). False (the
  // functions erased) when either does not build.
  bool decoderEntries(ModuleOp module, const StepPlan &plan, Location l) {
    int64_t rows = io.dims["batch"], length = io.dims["target"];
    int64_t vocab = cast<RankedTensorType>(io.output.type).getShape()[2];
    auto [decoder, encoder] = decoderAndEncoder();
    // What the decoder reads of the encoder (values, or src / src_mask themselves).
    std::vector<std::string> reads;
    for (const Node &node : graph.nodes)
      if (decoder.count(node.name))
        for (const auto &[in, where] : node.inputs)
          if (encoder.count(nodeOf(in)) && std::find(reads.begin(), reads.end(), in) == reads.end())
            reads.push_back(in);

    // @encode: the nodes that do not read the target.
    Step at = stepFor(plan);
    SmallVector<Type> carried = {f32({rows, 1})};
    SmallVector<std::string> carriedNames = {::attn::names::kPosition};
    cacheSignature(at, carried, carriedNames);
    b.setInsertionPointToEnd(module.getBody());
    auto [inTypes, inNames] = signature();
    inTypes.pop_back(); // tgt_in
    inNames.pop_back();
    auto enc = entry("encode", inTypes, inNames, {}, {}, l);
    skipped = decoder;
    FailureOr<Value> built = network(enc.getArguments(), /*output=*/false);
    skipped.clear();
    if (failed(built)) {
      enc.erase();
      return false;
    }
    SmallVector<Value> outs;
    for (Type t : carried)
      outs.push_back(b.create<mlir::attn::ConstantOp>(
          l, DenseElementsAttr::get(cast<RankedTensorType>(t), 0.0f)));
    SmallVector<Type> encTypes(carried);
    SmallVector<std::string> encNames(carriedNames);
    SmallVector<Type> givenTypes;
    SmallVector<std::string> givenNames;
    for (const std::string &name : reads) {
      if (name == "src" || name == "src_mask") { // the runtime hands encode's inputs on
        givenTypes.push_back(env.at(name).front().getType());
        givenNames.push_back(name);
        continue;
      }
      Value v = lookup(name);
      auto type = cast<RankedTensorType>(v.getType());
      if (type.getRank() == 0 || type.getShape()[0] != rows) {
        emitError(l) << "the decoder reads '" << name << "' " << shapeText(type)
                     << ", which does not hold the decoder's " << rows
                     << " rows first (beam search reorders every state by its rows)";
        enc.erase();
        return false;
      }
      outs.push_back(v);
      encTypes.push_back(type);
      encNames.push_back("memory." + name);
      givenTypes.push_back(type);
      givenNames.push_back("memory." + name);
    }
    b.create<func::ReturnOp>(l, outs);
    enc.setFunctionType(b.getFunctionType(enc.getArgumentTypes(), encTypes));
    for (auto [k, n] : llvm::enumerate(encNames))
      enc.setResultAttr(k, "attn.name", b.getStringAttr(n));

    // @decode_step: the nodes that read the target, at one position.
    SmallVector<Type> types = {i32({rows, 1})};
    SmallVector<std::string> names = {"token"};
    types.append(carried);
    names.append(carriedNames);
    types.append(givenTypes);
    names.append(givenNames);
    SmallVector<Type> results = {f32({rows, vocab})};
    results.append(carried);
    SmallVector<StringRef> refs(names.begin(), names.end());
    SmallVector<StringRef> resultRefs = {::attn::names::kLogProbs};
    for (const std::string &n : carriedNames)
      resultRefs.push_back(n);
    b.setInsertionPointToEnd(module.getBody());
    auto f = entry("decode_step", types, refs, results, resultRefs, l);
    positionOf(at, f.getArgument(1), length, l);
    unsigned numCaches = carried.size() - 1;
    at.cachesIn.assign(f.getArguments().begin() + 2, f.getArguments().begin() + 2 + numCaches);
    at.skip = encoder;
    for (auto [k, name] : llvm::enumerate(reads))
      at.given[name] = f.getArgument(2 + numCaches + k);
    Value srcArg = at.given.count("src") ? at.given["src"] : Value();
    Value maskArg = at.given.count("src_mask") ? at.given["src_mask"] : Value();
    FailureOr<Value> y = atOnePosition(at, {srcArg, maskArg, f.getArgument(0)}, vocab);
    if (failed(y)) {
      f.erase();
      enc.erase();
      return false;
    }
    SmallVector<Value> stepOuts = {
        logSoftmax(b.create<mlir::attn::ReshapeOp>(l, results[0], *y), l),
        b.create<mlir::attn::AddOp>(l, f.getArgument(1), constant(1.0f, l))};
    stepOuts.append(at.cachesOut);
    b.create<func::ReturnOp>(l, stepOuts);
    return true;
  }

  Value constant(float v, Location l) {
    return b.create<mlir::attn::ConstantOp>(l, DenseElementsAttr::get(f32({}), v));
  }

  // @<name>(the task's inputs) -> the network's output (its log_softmax with `logProbs`),
  // named `result`.
  LogicalResult outputEntry(ModuleOp module, StringRef name, StringRef result, bool logProbs,
                            Location l) {
    auto [types, names] = signature();
    b.setInsertionPointToEnd(module.getBody());
    auto f = entry(name, types, names, {io.output.type}, {result}, l);
    FailureOr<Value> y = network(f.getArguments());
    if (failed(y))
      return failure();
    b.create<func::ReturnOp>(l, logProbs ? logSoftmax(*y, l) : *y);
    return success();
  }

  // @loss(the task's inputs, its label) -> the task's loss: the mean squared error
  // (regress), else the cross-entropy with padding ignored (lm: every character id is a real
  // character, none is).
  LogicalResult lossEntry(ModuleOp module, Location l) {
    auto [types, names] = signature();
    types.push_back(io.label.type);
    names.push_back(io.label.name);
    b.setInsertionPointToEnd(module.getBody());
    auto loss =
        entry("loss", types, names, {RankedTensorType::get({}, b.getF32Type())}, {"loss"}, l);
    FailureOr<Value> y = network(loss.getArguments().drop_back());
    if (failed(y))
      return failure();
    Value label = loss.getArguments().back();
    if (spec.task == Task::Regress)
      b.create<func::ReturnOp>(l, b.create<mlir::attn::MseOp>(l, *y, label).getResult());
    else if (spec.task == Task::Lm)
      returnPaddedCrossEntropy(*y, label, l, /*ignore=*/-1);
    else
      returnPaddedCrossEntropy(*y, label, l);
    return success();
  }

  // The task's inputs' types and names (they live in `io`, which outlives the entry's build).
  std::pair<SmallVector<Type>, SmallVector<StringRef>> signature() const {
    std::pair<SmallVector<Type>, SmallVector<StringRef>> out;
    for (const Io &in : io.inputs) {
      out.first.push_back(in.type);
      out.second.push_back(in.name);
    }
    return out;
  }

  // A shape's sizes, the names given their values; a failure (reported at `where`) past
  // attnc's bound on a tensor, which the importer checks again for every op.
  FailureOr<SmallVector<int64_t>> shape(const std::vector<Dim> &dims, const Loc &where,
                                        const std::map<std::string, int64_t> *values = nullptr) {
    SmallVector<int64_t> out;
    for (const Dim &d : dims)
      out.push_back(d.symbol.empty() ? d.value : (values ? *values : io.dims).at(d.symbol));
    if (!fits(out)) {
      emitError(loc(where)) << "this shape has more than 2^28 elements, attnc's bound on a "
                               "tensor (1 GiB of f32)";
      return failure();
    }
    return out;
  }

  // The graph in the current function, from its arguments (null: an input the function has
  // not, which no node it builds reads); its output, checked against the task's when `output`.
  FailureOr<Value> network(ValueRange args, bool output = true) {
    env.clear();
    if (!step)
      attentionCaches.clear();
    for (auto [in, arg] : llvm::zip(io.inputs, args))
      if (arg)
        env[in.name] = {arg};
    if (step)
      for (const auto &[name, value] : step->given)
        env[name] = {value};
    for (const Io &one : io.ones) // at one position, lm's mask: the positions seen so far
      env[one.name] = {
          step ? step->seen
               : b.create<mlir::attn::ConstantOp>(loc(spec.model.graph->loc),
                                                  DenseElementsAttr::get(one.type, 1.0f))};
    for (const Param &p : graph.params) {
      for (const Dim &d : p.shape)
        if (std::optional<std::string> why = varies(spec, options, d.symbol)) {
          emitError(loc(d.loc)) << "parameter '" << p.name << "' has a size '" << d.symbol
                                << "', which differs between the programs that share it: " << *why;
          return failure();
        }
      Init init = *mlir::attn::symbolizeInit(p.init);
      // At one position, a parameter keeps the window's sizes (one tensor for every program).
      FailureOr<SmallVector<int64_t>> sizes =
          shape(p.shape, p.loc, step ? &step->fullDims : nullptr);
      if (failed(sizes))
        return failure();
      Location at = loc(p.loc);
      Value value = b.create<mlir::attn::ParamOp>(
          at, f32(*sizes), p.name, init, APFloat(static_cast<float>(p.scale)), p.trainable);
      if (step && step->tables.count(p.name)) {
        // A table of positions [L, ...] read at one position: its row there, [K, 1, ...]
        // (the one-hot [K, L] times the table as [L, rest]).
        int64_t rows = cast<RankedTensorType>(step->oneHot.getType()).getShape()[0], rest = 1;
        SmallVector<int64_t> row = {rows, 1};
        for (int64_t d : ArrayRef<int64_t>(*sizes).drop_front()) {
          rest *= d;
          row.push_back(d);
        }
        Value flat = b.create<mlir::attn::ReshapeOp>(at, f32({(*sizes)[0], rest}), value);
        value = b.create<mlir::attn::ReshapeOp>(
            at, f32(row),
            b.create<mlir::attn::MatmulOp>(at, step->oneHot, flat, b.getBoolAttr(false),
                                           b.getBoolAttr(false)));
      }
      env[p.name] = {value};
    }
    for (const Node &node : graph.nodes) {
      if (skipped.count(node.name) || (step && step->skip.count(node.name)))
        continue;
      FailureOr<Operation *> op = buildNode(node);
      if (failed(op))
        return failure();
      env[node.name] = SmallVector<Value>((*op)->getResults());
    }
    if (!output)
      return Value();
    Value out = lookup(graph.output);
    lastOutput = out;
    if (!out) {
      emitError(loc(graph.outputLoc))
          << "model.graph.output '" << graph.output << "': that node has fewer results";
      return failure();
    }
    if (out.getType() != io.output.type) {
      emitError(loc(graph.outputLoc))
          << "model.graph.output '" << graph.output << "' is " << shapeText(out.getType())
          << ", but task '" << nameOf(spec.task) << "' outputs " << shapeText(io.output.type)
          << " (" << io.output.name << ")";
      return failure();
    }
    return out;
  }

  // A name, or `node.K` for a node's result K; null for a result the node has not (readGraph
  // checked that the names are defined).
  Value lookup(const std::string &name) {
    if (auto it = env.find(name); it != env.end())
      return it->second.empty() ? Value() : it->second.front();
    std::optional<std::pair<std::string, size_t>> ref = resultRef(name);
    auto it = ref ? env.find(ref->first) : env.end();
    if (it == env.end() || ref->second >= it->second.size())
      return Value();
    return it->second[ref->second];
  }

  // A YAML attribute value as an MLIR attribute: integers (i64), numbers (f32), true/false,
  // lists of integers (array<i64>), and anything else read as MLIR attribute syntax
  // ("#attn.init<zeros>", "dense<1.0> : tensor<f32>"), else a string.
  FailureOr<Attribute> attribute(const Node &node, const Attr &a) {
    const YamlTree &v = a.value;
    // Attributes are sizes, axes and offsets: bounded, so that no type rule's arithmetic
    // on them can overflow.
    constexpr int64_t kMaxInt = int64_t(1) << 31;
    auto bounded = [&](int64_t i, const Loc &where) {
      if (i >= -kMaxInt && i <= kMaxInt)
        return true;
      emitError(loc(where)) << "node '" << node.name << "': attribute '" << a.name << "' holds "
                            << i << ", beyond +-2^31";
      return false;
    };
    if (std::optional<int64_t> i = asInt(v)) {
      if (!bounded(*i, v.loc))
        return failure();
      return Attribute(b.getI64IntegerAttr(*i));
    }
    if (std::optional<bool> flag = asBool(v))
      return Attribute(b.getBoolAttr(*flag));
    if (std::optional<double> x = asFloat(v)) {
      if (std::fabs(*x) > 3.0e38) {
        emitError(loc(v.loc)) << "node '" << node.name << "': attribute '" << a.name
                              << "' is beyond the range of f32";
        return failure();
      }
      return Attribute(b.getF32FloatAttr(static_cast<float>(*x)));
    }
    if (v.kind == Kind::Sequence) {
      SmallVector<int64_t> items;
      for (const YamlTree &item : v.items) {
        std::optional<int64_t> i = asInt(item);
        if (i && !bounded(*i, item.loc))
          return failure();
        if (!i) {
          emitError(loc(item.loc)) << "node '" << node.name << "': attribute '" << a.name
                                   << "' is a list, and lists hold integers";
          return failure();
        }
        items.push_back(*i);
      }
      return Attribute(b.getDenseI64ArrayAttr(items));
    }
    if (v.kind == Kind::Scalar) {
      // A string that is not MLIR syntax is a string attribute; the parser's complaint
      // about it is not the user's concern.
      ScopedDiagnosticHandler quiet(b.getContext(), [](mlir::Diagnostic &) { return success(); });
      if (Attribute parsed = parseAttribute(v.scalar, b.getContext()))
        return parsed;
      return Attribute(b.getStringAttr(v.scalar));
    }
    emitError(loc(v.loc)) << "node '" << node.name << "': attribute '" << a.name
                          << "' must be a scalar or a list of integers";
    return failure();
  }

  FailureOr<Operation *> buildNode(const Node &node) {
    if (node.op == "fused_attention")
      return buildAttention(node);
    Location l = loc(node.loc);
    std::string full = "attn." + node.op;
    std::optional<RegisteredOperationName> name =
        RegisteredOperationName::lookup(full, b.getContext());
    if (!name) {
      // The attn op spelled closest, for a typo ("embeding"): at most two edits away.
      std::string closest;
      unsigned best = 3;
      for (RegisteredOperationName op : b.getContext()->getRegisteredOperations()) {
        StringRef candidate = op.getStringRef();
        if (!candidate.consume_front("attn."))
          continue;
        unsigned distance = StringRef(node.op).edit_distance(candidate, true, best);
        if (distance < best) {
          best = distance;
          closest = candidate.str();
        }
      }
      InFlightDiagnostic error = emitError(loc(node.opLoc))
                                 << "node '" << node.name << "': there is no op '" << full << "'";
      if (!closest.empty())
        error << " (did you mean '" << closest << "'?)";
      error << "; docs/dialect.md lists the attn ops";
      return failure();
    }
    if (node.op == "param" || !name->hasTrait<OpTrait::ZeroRegions>()) {
      emitError(loc(node.opLoc))
          << "node '" << node.name << "': " << full
          << (node.op == "param" ? " is written as model.graph.params"
                                 : " holds a region, which a node cannot write; write it in "
                                   "a module of attn IR (model.mlir)");
      return failure();
    }
    int results = name->hasTrait<OpTrait::OneResult>()           ? 1
                  : name->hasTrait<OpTrait::NResults<2>::Impl>() ? 2
                  : name->hasTrait<OpTrait::NResults<3>::Impl>() ? 3
                                                                 : 0;
    if (results == 0) {
      emitError(loc(node.opLoc)) << "node '" << node.name << "': " << full
                                 << " is not an op a graph can use (it has no result, more "
                                    "than three, or a number that varies)";
      return failure();
    }
    SmallVector<Value> operands;
    for (const auto &[in, inLoc] : node.inputs) {
      Value v = lookup(in);
      if (!v) {
        emitError(loc(inLoc)) << "node '" << node.name << "' reads '" << in
                              << "', but that node has fewer results";
        return failure();
      }
      operands.push_back(v);
    }

    // The node's shape, for an op that does not infer its result's.
    SmallVector<Type> types;
    bool infers = name->hasInterface<InferTypeOpInterface>();
    if (node.shape) {
      if (results != 1) {
        emitError(l) << "node '" << node.name << "': " << full << " has " << results
                     << " results; shape gives one";
        return failure();
      }
      FailureOr<SmallVector<int64_t>> sizes = shape(*node.shape, node.loc);
      if (failed(sizes))
        return failure();
      types.push_back(f32(*sizes));
    } else if (!infers) {
      emitError(l) << "node '" << node.name << "': " << full
                   << " does not infer its result's shape; give the node shape: [sizes]";
      return failure();
    }

    // A first op carries the attributes; its verification checks them (and the operands)
    // before the op's type rule reads them. Where the op infers its results, the first op's
    // are placeholders.
    Operation *probe = Operation::create(
        l, *name,
        infers ? SmallVector<Type>(results, RankedTensorType::get({}, b.getF32Type())) : types,
        operands, NamedAttrList(), OpaqueProperties(nullptr), BlockRange(), 0);
    auto done = llvm::make_scope_exit([&] { probe->destroy(); });
    std::set<std::string> known;
    for (StringAttr n : name->getAttributeNames())
      known.insert(n.str());
    for (const Attr &a : node.attrs) {
      if (!known.count(a.name)) {
        std::string list;
        for (const std::string &k : known)
          list += (list.empty() ? "" : ", ") + k;
        emitError(loc(a.value.loc))
            << "node '" << node.name << "': " << full << " has no attribute '" << a.name << "' ("
            << (list.empty() ? "it has none" : "it has " + list) << ")";
        return failure();
      }
      FailureOr<Attribute> value = attribute(node, a);
      if (failed(value))
        return failure();
      probe->setAttr(a.name, *value);
    }

    // The probe's verification, for what must hold before its type rule may run: the
    // operands' count and types and the attributes (ODS checks these before the type rule).
    // What it says of its placeholder results is dropped, everything else is the node's
    // error; the op built below is verified whole.
    SmallVector<std::pair<Location, std::string>> said;
    {
      ScopedDiagnosticHandler capture(b.getContext(), [&](mlir::Diagnostic &d) {
        std::string text = d.str();
        if (!infers || (text.find("incompatible with return type") == std::string::npos &&
                        text.find("failed to infer returned types") == std::string::npos &&
                        text.find("result #") == std::string::npos &&
                        text.find("have same type") == std::string::npos))
          said.push_back({d.getLocation(), text});
        return success();
      });
      (void)verify(probe, /*verifyRecursively=*/false);
    }
    if (!said.empty()) {
      for (const auto &[where, text] : said)
        emitError(where) << "node '" << node.name << "': " << text;
      return failure();
    }

    // The type rule and the op's verifier speak of the op; what they say is the node's.
    SmallVector<std::pair<Location, std::string>> errors;
    Operation *op = nullptr;
    {
      ScopedDiagnosticHandler capture(b.getContext(), [&](mlir::Diagnostic &d) {
        errors.push_back({d.getLocation(), d.str()});
        return success();
      });
      SmallVector<Type> inferred;
      auto infer = dyn_cast<InferTypeOpInterface>(probe);
      if (infer && failed(infer.inferReturnTypes(
                       b.getContext(), l, probe->getOperands(), probe->getAttrDictionary(),
                       probe->getPropertiesStorage(), probe->getRegions(), inferred))) {
        if (errors.empty())
          errors.push_back({l, full + " cannot type these inputs"});
      } else if (infer && inferred.size() != (size_t)results) {
        errors.push_back(
            {l, full + "'s type rule gives " + std::to_string(inferred.size()) + " results"});
      } else if (infer && !types.empty() && types != SmallVector<Type>(inferred)) {
        errors.push_back({l, "its shape is given as " + shapeText(types[0]) + ", but " + full +
                                 " gives " + shapeText(inferred[0])});
      } else {
        if (infer)
          types = inferred;
        for (Type t : types)
          if (auto ranked = dyn_cast<RankedTensorType>(t); ranked && !fits(ranked.getShape()))
            errors.push_back({l, "its result " + shapeText(t) +
                                     " has more than 2^28 elements, attnc's bound on a tensor"});
        if (errors.empty()) {
          op = Operation::create(l, *name, types, operands,
                                 NamedAttrList(probe->getAttrDictionary()),
                                 probe->getPropertiesStorage(), BlockRange(), 0);
          b.insert(op);
          (void)verify(op, /*verifyRecursively=*/false);
        }
      }
    }
    if (!errors.empty())
      return reportAll(node, errors);
    return op;
  }

  // `op: fused_attention`, the one op with regions a node writes, as expressions (the
  // language of model.transformer.attention, ScoreExpr.h): inputs q [B, H, T, D], k [B, H,
  // S, D], v [B, H, S, Dv], key_mask [B, S], then the captures the expressions read by their
  // names (scalars, [H] read per head as name[h], or tables [H, N] read as name[h, index]);
  // attrs `score` (a number over score = q . k / sqrt(D), i, j and the captures; default:
  // score), `mask` (a condition), `softcap`, `sliding_window`, `causal`. Results: the output [B, H,
  // T, Dv] and the lse [B, H, T].
  FailureOr<Operation *> buildAttention(const Node &node) {
    Location l = loc(node.loc);
    auto fail = [&](const Loc &where, const std::string &message) -> FailureOr<Operation *> {
      emitError(loc(where)) << "node '" << node.name << "': " << message;
      return failure();
    };
    if (node.inputs.size() < 4)
      return fail(node.opLoc, "fused_attention takes inputs [q, k, v, key_mask, captures...]");
    SmallVector<Value> in;
    for (const auto &[name, where] : node.inputs) {
      Value v = lookup(name);
      if (!v)
        return fail(where, "it reads '" + name + "', but that node has fewer results");
      in.push_back(v);
    }
    auto dims = [](Value v) { return cast<RankedTensorType>(v.getType()).getShape(); };
    int64_t ranks[] = {4, 4, 4, 2};
    for (int n = 0; n < 4; ++n)
      if ((int64_t)dims(in[n]).size() != ranks[n])
        return fail(node.inputs[n].second, std::string("fused_attention's ") +
                                               (n < 3 ? "q, k, v" : "key_mask") +
                                               " must be of rank " + std::to_string(ranks[n]) +
                                               ", got " + shapeText(in[n].getType()));
    int64_t heads = dims(in[0])[1];
    // The captures: scalars by their names, [H] ones per head (with one head, [1] is both).
    expr::AttentionRegions r;
    std::vector<std::string> scalars = {"i", "j"}, perHead;
    std::map<std::string, int64_t> tables;
    for (size_t n = 4; n < in.size(); ++n) {
      const auto &[name, where] = node.inputs[n];
      ArrayRef<int64_t> s = dims(in[n]);
      bool scalar = s.empty() || (s.size() == 1 && s[0] == 1);
      bool table = s.size() == 2 && s[0] == heads && s[1] >= 1 && s[1] <= expr::kMaxTableColumns;
      if (!scalar && !(s.size() == 1 && s[0] == heads) && !table)
        return fail(where, "capture '" + name + "' must be a scalar, one per head [" +
                               std::to_string(heads) + "] or a table [" + std::to_string(heads) +
                               ", N] (N up to " + std::to_string(expr::kMaxTableColumns) +
                               "), got " + shapeText(in[n].getType()));
      if (name.find('.') != std::string::npos)
        return fail(where, "capture '" + name +
                               "': expressions read captures by name; give "
                               "this result a node of its own");
      if (table) { // read as name[h, index]
        tables[name] = s[1];
        expr::addTable(b, l, r, name, in[n]);
        continue;
      }
      if (scalar)
        scalars.push_back(name);
      if (!scalar || heads == 1)
        perHead.push_back(name);
      r.captures.push_back({name, in[n], !scalar});
    }
    std::unique_ptr<expr::Node> score, mask;
    bool causal = false;
    int64_t window = 0;
    for (const Attr &a : node.attrs) {
      const YamlTree &v = a.value;
      if (a.name == "score" || a.name == "mask") {
        bool isScore = a.name == "score";
        std::vector<std::string> names = scalars;
        if (isScore)
          names.insert(names.begin(), "score");
        expr::Error error;
        auto parsed =
            v.kind == Kind::Scalar
                ? expr::parse(v.scalar, names, isScore ? expr::Type::Number : expr::Type::Bool,
                              error, perHead, tables)
                : nullptr;
        if (!parsed)
          return fail(v.loc, a.name + " \"" + v.scalar + "\", column " +
                                 std::to_string(error.column) + ": " + error.message);
        (isScore ? score : mask) = std::move(parsed);
      } else if (a.name == "softcap") {
        std::optional<double> x = asFloat(v);
        if (!x || *x < 0)
          return fail(v.loc, "softcap must be a number >= 0 (0: none)");
        r.softcap = *x;
      } else if (a.name == "sliding_window") {
        std::optional<int64_t> x = v.kind == Kind::Scalar ? parseInt(v.scalar) : std::nullopt;
        if (!x || *x < 0 || *x > (int64_t(1) << 31))
          return fail(v.loc, "sliding_window must be an integer >= 0 (0: none)");
        window = *x;
      } else if (a.name == "causal") {
        std::optional<bool> x = v.kind == Kind::Scalar ? parseBool(v.scalar) : std::nullopt;
        if (!x)
          return fail(v.loc, "causal must be true or false");
        causal = *x;
      } else {
        return fail(v.loc, "fused_attention has no attribute '" + a.name +
                               "' (it has score, mask, softcap, sliding_window, causal)");
      }
    }
    mask = expr::withWindow(std::move(mask), window);
    r.score = score.get();
    r.mask = mask.get();
    r.scale = 1.0f / std::sqrt((float)dims(in[0])[3]);
    if (!step) { // the caches a step of this network would keep (their sizes at decoding)
      attentionCaches.push_back({node.name, in[1].getType(), in[2].getType()});
    } else {                               // one query at the step's position
      if (step->cached.count(node.name)) { // over the keys and values so far
        size_t at = step->cachesOut.size() / 2;
        if (at >= step->cachesIn.size() / 2)
          return fail(node.opLoc, "one attention more at one position than over the window");
        // The caches are zero at the position: adding the one-hot times the row writes it.
        for (int kv : {1, 2}) {
          Value cache = step->cachesIn[2 * at + kv - 1];
          in[kv] = b.create<mlir::attn::AddOp>(l, cache,
                                               b.create<mlir::attn::MulOp>(l, step->slot, in[kv]));
          step->cachesOut.push_back(in[kv]);
        }
        causal = false; // the seen mask (its key mask at one position) holds it
      }
      r.iOffset = step->iOffset;
    }
    SmallVector<std::pair<Location, std::string>> errors;
    Operation *op = nullptr;
    {
      ScopedDiagnosticHandler capture(b.getContext(), [&](mlir::Diagnostic &d) {
        errors.push_back({d.getLocation(), d.str()});
        return success();
      });
      // The op's verifier checks the operands' shapes before anything reads them further.
      Value out = expr::fusedAttention(b, l, in[0], in[1], in[2], in[3], causal, r);
      op = out.getDefiningOp();
      if (failed(verify(op)))
        errors.push_back({l, "attn.fused_attention cannot take these inputs"});
    }
    if (!errors.empty()) {
      op->erase();
      return reportAll(node, errors);
    }
    return op;
  }

  FailureOr<Operation *> reportAll(const Node &node,
                                   ArrayRef<std::pair<Location, std::string>> errors) {
    for (const auto &[where, text] : errors)
      emitError(where) << "node '" << node.name << "': " << text;
    return failure();
  }

  Graph graph;
  TaskIo io;
  std::map<std::string, SmallVector<Value>> env;
  // Each fused_attention node's name and the types of its keys and values at batch 1, from
  // the last build over the whole window; the step being built, or null.
  struct AttentionCache {
    std::string node;
    Type keys, values;
  };
  SmallVector<AttentionCache> attentionCaches;
  Step *step = nullptr;
  // The nodes network() leaves out (@encode: the decoder's); its last output.
  std::set<std::string> skipped;
  Value lastOutput;
};

// model.mlir: the module, checked against the task's contract and given its names.
OwningOpRef<ModuleOp> importModule(const Spec &spec, MLIRContext &ctx, const ImportOptions &o) {
  namespace fs = std::filesystem;
  fs::path path = spec.model.mlir; // absolute when the spec came from a file (Parser.cpp)
  Loc key = spec.locOf("model.mlir", spec.model.loc);
  Location where =
      FileLineColLoc::get(&ctx, key.file.empty() ? spec.file : key.file, key.line, key.col);
  std::string text;
  try {
    text = readRegularFile(path.string(), kMaxModuleBytes, "module of attn IR");
  } catch (const FileError &e) {
    emitError(where) << "model.mlir: " << e.what();
    return nullptr;
  }
  ParserConfig config(&ctx);
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(text, config, path.string());
  if (!module)
    return nullptr; // the parser said where
  // The entry points the task calls, and nothing else: the pipeline adds its own functions
  // (@loss_grad, @train_step), and entries call no others.
  for (auto f : module->getOps<func::FuncOp>())
    if (f.getSymName() != "forward" && f.getSymName() != "loss") {
      emitError(f.getLoc()) << "the module defines @" << f.getSymName() << "; a module for task '"
                            << nameOf(spec.task)
                            << "' defines @forward and @loss, each holding its whole network";
      return nullptr;
    }
  // Static shapes attnc can allocate: every type in the module, counted without overflow.
  WalkResult sized = module->walk([&](Operation *op) {
    auto bad = [&](Type t) {
      auto ranked = dyn_cast<RankedTensorType>(t);
      return isa<TensorType>(t) &&
             (!ranked || !ranked.hasStaticShape() || !fits(ranked.getShape()));
    };
    SmallVector<Type> types(op->getResultTypes());
    for (Region &r : op->getRegions())
      for (BlockArgument a : r.getArguments())
        types.push_back(a.getType());
    for (Type t : types)
      if (bad(t)) {
        emitError(op->getLoc()) << "'" << op->getName() << "' has the type " << t
                                << "; attnc compiles static shapes of at most 2^28 elements";
        return WalkResult::interrupt();
      }
    return WalkResult::advance();
  });
  if (sized.wasInterrupted())
    return nullptr;
  (*module)->setAttr("attn.model", StringAttr::get(&ctx, spec.name));
  TaskIo io = taskIo(spec, o, ctx);
  SmallVector<Io> lossInputs(io.inputs);
  lossInputs.push_back(io.label);
  auto check = [&](StringRef fname, ArrayRef<Io> inputs, const Io &result) {
    auto func = module->lookupSymbol<func::FuncOp>(fname);
    if (!func) {
      emitError(where) << "model.mlir: '" << spec.model.mlir << "' has no func.func @" << fname
                       << "; task '" << nameOf(spec.task) << "' needs @loss and @forward";
      return false;
    }
    if (func.isExternal() || func.isPrivate()) {
      emitError(func.getLoc()) << "@" << fname << " must be a public function with a body";
      return false;
    }
    FunctionType type = func.getFunctionType();
    std::string want;
    for (const Io &in : inputs)
      want += (want.empty() ? "" : ", ") + in.name + ": " + shapeText(in.type);
    bool ok = type.getNumInputs() == inputs.size() && type.getNumResults() == 1 &&
              type.getResult(0) == result.type;
    for (size_t i = 0; ok && i < inputs.size(); ++i)
      ok = type.getInput(i) == inputs[i].type;
    if (!ok) {
      emitError(func.getLoc()) << "@" << fname << " is " << type << ", but task '"
                               << nameOf(spec.task) << "' calls it with (" << want
                               << ") for one result " << shapeText(result.type)
                               << " (batch: train.batch_size, per rank in a data-parallel run)";
      return false;
    }
    // What the pipeline compiles: attn ops, returned (no calls into other functions yet).
    WalkResult foreign = func.walk([&](Operation *op) {
      if (op == func.getOperation() || isa<mlir::attn::AttnDialect>(op->getDialect()) ||
          isa<func::ReturnOp>(op))
        return WalkResult::advance();
      emitError(op->getLoc()) << "@" << fname << " holds '" << op->getName()
                              << "'; attnc compiles entry points of attn ops"
                              << (isa<func::CallOp>(op) ? " (write the callee's ops in place)"
                                                        : "");
      return WalkResult::interrupt();
    });
    if (foreign.wasInterrupted())
      return false;
    for (auto [i, in] : llvm::enumerate(inputs))
      func.setArgAttr(i, "attn.name", StringAttr::get(&ctx, in.name));
    func.setResultAttr(0, "attn.name", StringAttr::get(&ctx, result.name));
    return true;
  };
  Io lossResult{"loss", RankedTensorType::get({}, Float32Type::get(&ctx))};
  if (!check("forward", io.inputs, io.output) || !check("loss", lossInputs, lossResult))
    return nullptr;
  return module;
}

} // namespace

OwningOpRef<ModuleOp> importGraph(const Spec &spec, MLIRContext &context,
                                  const ImportOptions &options) {
  if (!spec.model.mlir.empty())
    return importModule(spec, context, options);
  std::vector<Diagnostic> unused;
  Problems problems(spec, unused);
  Graph graph = readGraph(spec, problems); // the family's validation passed
  return GraphImporter(spec, options, context, std::move(graph)).build();
}

} // namespace attn::yaml::graph
