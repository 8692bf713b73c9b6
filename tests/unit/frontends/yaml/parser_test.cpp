#include "frontends/yaml/Schema.h"
#include "frontends/yaml/Spec.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

using namespace attn::yaml;

namespace {

const char *kRnnSpec = R"(name: rnn-sine
task: regress
data: {builtin: sine, window: 16, train: 2000, valid: 200, seed: 7}
model:
  rnn: {cell: rnn, hidden: 32}
  output: {size: 1}
train: {batch_size: 32, seed: 1}
)";

const char *kMlpSpec = R"(name: mlp-sine
data:
  builtin: sine
  window: 8
model:
  mlp:
    hidden: [64, 48]
    activation: relu
)";

// Expects exactly one diagnostic and returns it.
Diagnostic onlyError(const std::string &text) {
  std::vector<Diagnostic> diags;
  std::optional<Spec> spec = parseSpecString(text, "t.yaml", diags);
  EXPECT_FALSE(spec.has_value());
  std::string all;
  for (const Diagnostic &d : diags)
    all += d.str() + "\n";
  EXPECT_EQ(diags.size(), 1u) << all;
  return diags.empty() ? Diagnostic{} : diags.front();
}

std::string at(const Diagnostic &d) {
  return d.loc.file + ":" + std::to_string(d.loc.line) + ":" + std::to_string(d.loc.col);
}

std::string writeTemp(const std::string &name, const std::string &text) {
  std::string path = ::testing::TempDir() + name;
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

std::string readFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

} // namespace

// --- valid specs ---------------------------------------------------------------------------------

TEST(SpecParser, ValidRnnSpec) {
  std::vector<Diagnostic> diags;
  std::optional<Spec> spec = parseSpecString(kRnnSpec, "rnn.yaml", diags);
  ASSERT_TRUE(spec.has_value());
  EXPECT_TRUE(diags.empty());
  EXPECT_EQ(spec->file, "rnn.yaml");
  EXPECT_EQ(spec->name, "rnn-sine");
  EXPECT_EQ(nameOf(spec->task), "regress");
  EXPECT_EQ(spec->data.builtin, "sine");
  EXPECT_EQ(spec->data.window, 16);
  EXPECT_EQ(spec->data.train, 2000);
  EXPECT_EQ(spec->data.valid, 200);
  EXPECT_EQ(spec->data.seed, 7u);
  ASSERT_TRUE(spec->model.rnn.has_value());
  EXPECT_FALSE(spec->model.mlp.has_value());
  EXPECT_EQ(nameOf(spec->model.rnn->cell), "rnn");
  EXPECT_EQ(spec->model.rnn->hidden, 32);
  EXPECT_EQ(spec->model.rnn->layers, 1); // default
  EXPECT_EQ(spec->model.output.size, 1);
  EXPECT_EQ(spec->train.batchSize, 32);
  EXPECT_EQ(spec->train.seed, 1u);

  // Each section is located at its map ('{' of a flow map, the first key of a block map).
  EXPECT_EQ(spec->data.loc.file, "rnn.yaml");
  EXPECT_EQ(spec->data.loc.line, 3);
  EXPECT_EQ(spec->data.loc.col, 7);
  EXPECT_EQ(spec->model.loc.line, 5);
  EXPECT_EQ(spec->model.loc.col, 3);
  EXPECT_EQ(spec->model.rnn->loc.line, 5);
  EXPECT_EQ(spec->model.rnn->loc.col, 8);
  EXPECT_EQ(spec->model.output.loc.line, 6);
  EXPECT_EQ(spec->model.output.loc.col, 11);
  EXPECT_EQ(spec->train.loc.line, 7);
  EXPECT_EQ(spec->train.loc.col, 8);
}

TEST(SpecParser, ValidMlpSpecWithDefaults) {
  std::vector<Diagnostic> diags;
  std::optional<Spec> spec = parseSpecString(kMlpSpec, "mlp.yaml", diags);
  ASSERT_TRUE(spec.has_value());
  EXPECT_TRUE(diags.empty());
  EXPECT_EQ(spec->name, "mlp-sine");
  EXPECT_EQ(nameOf(spec->task), "regress");
  EXPECT_EQ(spec->data.window, 8);
  EXPECT_EQ(spec->data.train, 2000);
  EXPECT_EQ(spec->data.valid, 200);
  EXPECT_EQ(spec->data.seed, 1u);
  ASSERT_TRUE(spec->model.mlp.has_value());
  EXPECT_FALSE(spec->model.rnn.has_value());
  EXPECT_EQ(spec->model.mlp->hidden, (std::vector<int64_t>{64, 48}));
  EXPECT_EQ(nameOf(spec->model.mlp->activation), "relu");
  EXPECT_EQ(spec->model.mlp->loc.line, 7);
  EXPECT_EQ(spec->model.mlp->loc.col, 5);
  EXPECT_EQ(spec->model.output.size, 1);
  EXPECT_EQ(spec->train.batchSize, 32);
  // Sections left out are located at their parent map.
  EXPECT_EQ(spec->model.output.loc.line, 6);
  EXPECT_EQ(spec->model.output.loc.col, 3);
  EXPECT_EQ(spec->train.loc.line, 1);
  EXPECT_EQ(spec->train.loc.col, 1);
}

// The schema table is the source of truth for defaults; Spec.h's member initialisers must agree
// with it, since the importer may default-construct sub-specs.
// `peephole` names its form; `true` and `false` (its spellings when it was a flag) still read,
// as `diagonal` and `none`, and a spec prints its canonical name.
TEST(SpecParser, PeepholeFormsAndTheirOldSpellings) {
  const std::pair<const char *, Peephole> cases[] = {{"none", Peephole::None},
                                                     {"false", Peephole::None},
                                                     {"diagonal", Peephole::Diagonal},
                                                     {"true", Peephole::Diagonal},
                                                     {"full", Peephole::Full}};
  for (const auto &[text, form] : cases) {
    std::string yaml =
        std::string("name: m\ndata: {builtin: sine}\nmodel:\n  rnn: {cell: lstm, peephole: ") +
        text + "}\n";
    std::vector<Diagnostic> diags;
    std::optional<Spec> spec = parseSpecString(yaml, "t.yaml", diags);
    ASSERT_TRUE(spec.has_value()) << text << ": " << (diags.empty() ? "" : diags[0].str());
    EXPECT_EQ(spec->model.rnn->peephole, form) << text;
    EXPECT_NE(specToYaml(*spec).find("peephole: " + nameOf(form)), std::string::npos) << text;
  }
  Diagnostic d =
      onlyError("name: m\ndata: {builtin: sine}\nmodel:\n  rnn: {cell: lstm, peephole: diag}\n");
  EXPECT_NE(d.message.find("'model.rnn.peephole' must be one of 'none', 'diagonal', 'full'"),
            std::string::npos)
      << d.str();
}

// A key whose default depends on others is spelled out when printed (so every checkpoint's
// spec says it), and a stored spec without it predates it: local monotonic attention was
// trained with the Gaussian then.
TEST(SpecParser, DependentDefaultsArePrintedAndOldSpecsKeepTheirMeaning) {
  const char *text = "name: m\ntask: seq2seq\ndata: {builtin: dates, tokens: char}\n"
                     "model:\n  rnn: {cell: gru}\n  attention: {type: local, align: monotonic}\n";
  std::vector<Diagnostic> diags;
  std::optional<Spec> spec = parseSpecString(text, "t.yaml", diags);
  ASSERT_TRUE(spec);
  EXPECT_FALSE(spec->model.attention->gaussian.has_value());
  std::string printed = specToYaml(*spec);
  EXPECT_NE(printed.find("gaussian: false"), std::string::npos) << printed;
  std::optional<Spec> again = parseSpecString(printed, "printed.yaml", diags);
  ASSERT_TRUE(again);
  EXPECT_EQ(again->model.attention->gaussian, std::optional<bool>(false));
  EXPECT_FALSE(upgradeStoredSpec(*again)); // written by this attnc: as it says
  Spec old = *spec;                        // stored before the key existed
  EXPECT_TRUE(upgradeStoredSpec(old));
  EXPECT_EQ(old.model.attention->gaussian, std::optional<bool>(true));
  EXPECT_TRUE(old.model.attention->gaussianWeighting());
}

TEST(SpecParser, SchemaDefaultsMatchSpecStruct) {
  std::vector<Diagnostic> diags;
  std::optional<Spec> spec =
      parseSpecString("name: n\ndata: {builtin: sine}\nmodel: {rnn: {}}\n", "d.yaml", diags);
  ASSERT_TRUE(spec.has_value());
  EXPECT_EQ(spec->task, Spec{}.task);
  EXPECT_EQ(spec->data.window, DataSpec{}.window);
  EXPECT_EQ(spec->data.train, DataSpec{}.train);
  EXPECT_EQ(spec->data.valid, DataSpec{}.valid);
  EXPECT_EQ(spec->data.seed, DataSpec{}.seed);
  EXPECT_EQ(spec->model.rnn->cell, RnnSpec{}.cell);
  EXPECT_EQ(spec->model.rnn->hidden, RnnSpec{}.hidden);
  EXPECT_EQ(spec->model.rnn->layers, RnnSpec{}.layers);
  EXPECT_EQ(spec->model.rnn->gruForm, RnnSpec{}.gruForm);
  EXPECT_EQ(spec->model.rnn->peephole, RnnSpec{}.peephole);
  EXPECT_EQ(spec->model.rnn->projection, RnnSpec{}.projection);
  EXPECT_EQ(spec->model.rnn->bidirectional, RnnSpec{}.bidirectional);
  EXPECT_EQ(spec->model.rnn->merge, RnnSpec{}.merge);
  EXPECT_EQ(spec->model.output.size, OutputSpec{}.size);
  EXPECT_EQ(spec->train.batchSize, TrainSpec{}.batchSize);
  EXPECT_EQ(spec->train.seed, TrainSpec{}.seed);
  EXPECT_EQ(spec->train.steps, TrainSpec{}.steps);
  EXPECT_EQ(spec->train.optimizer.type, OptimizerSpec{}.type);
  EXPECT_DOUBLE_EQ(spec->train.optimizer.lr, OptimizerSpec{}.lr);
  EXPECT_DOUBLE_EQ(spec->train.optimizer.momentum, OptimizerSpec{}.momentum);
  EXPECT_DOUBLE_EQ(spec->train.optimizer.beta1, OptimizerSpec{}.beta1);
  EXPECT_DOUBLE_EQ(spec->train.optimizer.beta2, OptimizerSpec{}.beta2);
  EXPECT_DOUBLE_EQ(spec->train.optimizer.epsilon, OptimizerSpec{}.epsilon);
  EXPECT_DOUBLE_EQ(spec->train.optimizer.weightDecay, OptimizerSpec{}.weightDecay);
  EXPECT_EQ(spec->train.schedule.type, ScheduleSpec{}.type);
  EXPECT_EQ(spec->train.schedule.warmup, ScheduleSpec{}.warmup);
  EXPECT_EQ(spec->train.schedule.stepSize, ScheduleSpec{}.stepSize);
  EXPECT_DOUBLE_EQ(spec->train.schedule.gamma, ScheduleSpec{}.gamma);
  EXPECT_DOUBLE_EQ(spec->train.schedule.minLr, ScheduleSpec{}.minLr);
  EXPECT_DOUBLE_EQ(spec->train.clipNorm, TrainSpec{}.clipNorm);
  EXPECT_EQ(spec->train.evalEvery, TrainSpec{}.evalEvery);
  EXPECT_EQ(spec->train.logEvery, TrainSpec{}.logEvery);
  EXPECT_EQ(spec->train.checkpointEvery, TrainSpec{}.checkpointEvery);
  EXPECT_EQ(spec->train.checkpointDir, TrainSpec{}.checkpointDir);
  EXPECT_EQ(spec->train.patience, TrainSpec{}.patience);
  EXPECT_DOUBLE_EQ(spec->train.minDelta, TrainSpec{}.minDelta);
  EXPECT_EQ(findKey("model.mlp.activation")->defaultValue, nameOf(MlpSpec{}.activation));
}

TEST(SpecParser, ReferenceExamplesParse) {
  ASSERT_FALSE(exampleSpecs().empty());
  for (const ExampleSpec &example : exampleSpecs()) {
    std::vector<Diagnostic> diags;
    EXPECT_TRUE(parseSpecString(example.yaml, example.title, diags).has_value()) << example.title;
    for (const Diagnostic &d : diags)
      ADD_FAILURE() << d.str();
  }
}

TEST(SpecParser, EveryKeyHasAParentAndDefaultsAreValid) {
  for (const KeySchema &key : schema()) {
    if (!key.parent().empty()) {
      ASSERT_NE(findKey(key.parent()), nullptr) << key.path;
      EXPECT_EQ(findKey(key.parent())->type, KeyType::Map) << key.path;
    }
    EXPECT_FALSE(key.required && !key.defaultValue.empty()) << key.path;
    EXPECT_FALSE(key.doc.empty()) << key.path;
  }
}

// --- one test per error kind ---------------------------------------------------------------------

TEST(SpecErrors, YamlSyntax) {
  Diagnostic d = onlyError("name: x\ndata: {builtin: sine\nmodel: {rnn: {}}\n");
  EXPECT_NE(d.message.find("invalid YAML"), std::string::npos) << d.message;
  EXPECT_EQ(at(d), "t.yaml:3:6");
}

TEST(SpecErrors, YamlSyntaxTab) {
  Diagnostic d = onlyError("name: x\ndata:\n\tbuiltin: sine\n");
  EXPECT_NE(d.message.find("invalid YAML"), std::string::npos) << d.message;
  EXPECT_EQ(d.loc.line, 3);
}

TEST(SpecErrors, UnknownKeySuggestsClosest) {
  Diagnostic d = onlyError("name: x\ndata: {builtin: sine}\nmodel:\n  rnn:\n    hiden: 8\n");
  EXPECT_EQ(d.message, "unknown key 'hiden' in 'model.rnn'");
  EXPECT_EQ(d.hint, "did you mean 'hidden'?");
  EXPECT_EQ(at(d), "t.yaml:5:5");
}

TEST(SpecErrors, UnknownKeyListsAllowedKeys) {
  Diagnostic d = onlyError("name: x\ndata: {builtin: sine}\nmodel: {rnn: {}}\ncolour: red\n");
  EXPECT_EQ(d.message, "unknown key 'colour' at the top level");
  EXPECT_EQ(d.hint, "allowed keys at the top level: 'name', 'task', 'data', 'model', 'sample', 'train', "
            "'decode'");
  EXPECT_EQ(at(d), "t.yaml:4:1");
}

TEST(SpecErrors, WrongType) {
  Diagnostic d = onlyError("name: x\ndata: {builtin: sine}\nmodel:\n  rnn:\n    hidden: abc\n");
  EXPECT_EQ(d.message, "expected an integer for 'model.rnn.hidden', got 'abc'");
  EXPECT_EQ(at(d), "t.yaml:5:13");
}

TEST(SpecErrors, WrongTypeQuotedNumber) {
  Diagnostic d = onlyError("name: x\ndata: {builtin: sine, window: \"16\"}\nmodel: {rnn: {}}\n");
  EXPECT_EQ(d.message, "expected an integer for 'data.window', got the quoted string \"16\"");
  EXPECT_EQ(d.hint, "quoted values are strings; remove the quotes");
  EXPECT_EQ(at(d), "t.yaml:2:31");
}

TEST(SpecErrors, WrongTypeListItemAndMap) {
  std::vector<Diagnostic> diags;
  EXPECT_FALSE(parseSpecString("name: x\ndata: sine\nmodel:\n  mlp: {hidden: [64, 1.5]}\n", "t.yaml",
                               diags));
  ASSERT_EQ(diags.size(), 2u);
  EXPECT_EQ(diags[0].message, "expected a map for 'data', got 'sine'");
  EXPECT_EQ(at(diags[0]), "t.yaml:2:7");
  EXPECT_EQ(diags[1].message, "expected an integer for 'model.mlp.hidden[1]', got '1.5'");
  EXPECT_EQ(at(diags[1]), "t.yaml:4:22");
}

TEST(SpecErrors, MissingRequiredKeyAtParent) {
  Diagnostic d = onlyError("name: x\ndata:\n  window: 4\nmodel: {rnn: {}}\n");
  EXPECT_EQ(d.message, "'data' needs exactly one of 'builtin', 'path'");
  EXPECT_EQ(d.hint, "add one of 'builtin', 'path'");
  EXPECT_EQ(at(d), "t.yaml:3:3");
}

TEST(SpecErrors, MissingRequiredTopLevelKey) {
  Diagnostic d = onlyError("\n\ndata: {builtin: sine}\nmodel: {rnn: {}}\n");
  EXPECT_EQ(d.message, "missing required key 'name' at the top level");
  EXPECT_EQ(at(d), "t.yaml:3:1");
}

TEST(SpecErrors, ValueOutOfRange) {
  Diagnostic d = onlyError("name: x\ndata: {builtin: sine, window: 0}\nmodel: {rnn: {}}\n");
  EXPECT_EQ(d.message, "'data.window' must be >= 1, got 0");
  EXPECT_EQ(at(d), "t.yaml:2:31");
}

TEST(SpecErrors, EmptyHiddenList) {
  Diagnostic d = onlyError("name: x\ndata: {builtin: sine}\nmodel: {mlp: {hidden: []}}\n");
  EXPECT_EQ(d.message, "'model.mlp.hidden' needs at least 1 item, got 0");
  EXPECT_EQ(at(d), "t.yaml:3:23");
}

TEST(SpecErrors, NotAnEnumValue) {
  Diagnostic d =
      onlyError("name: x\ndata: {builtin: sine}\nmodel:\n  mlp: {hidden: [8], activation: tahn}\n");
  EXPECT_EQ(d.message, "'model.mlp.activation' must be one of 'tanh', 'relu', 'sigmoid', got 'tahn'");
  EXPECT_EQ(d.hint, "did you mean 'tanh'? allowed values: 'tanh', 'relu', 'sigmoid'");
  EXPECT_EQ(at(d), "t.yaml:4:34");
}

TEST(SpecErrors, BothArchitectures) {
  Diagnostic d = onlyError(
      "name: x\ndata: {builtin: sine}\nmodel:\n  mlp: {hidden: [8]}\n  rnn: {hidden: 8}\n");
  EXPECT_EQ(d.message, "'model' takes exactly one of 'mlp', 'rnn', 'transformer', 'conv', 'graph', "
                       "'mlir', got both 'mlp' and 'rnn'");
  EXPECT_EQ(at(d), "t.yaml:5:3");
}

TEST(SpecErrors, NeitherArchitecture) {
  Diagnostic d = onlyError("name: x\ndata: {builtin: sine}\nmodel:\n  output: {size: 1}\n");
  EXPECT_EQ(d.message,
            "'model' needs exactly one of 'mlp', 'rnn', 'transformer', 'conv', 'graph', 'mlir'");
  EXPECT_EQ(d.hint, "add one of 'mlp', 'rnn', 'transformer', 'conv', 'graph', 'mlir'");
  EXPECT_EQ(at(d), "t.yaml:4:3");
}

TEST(SpecErrors, DuplicateKey) {
  Diagnostic d = onlyError("name: x\nname: y\ndata: {builtin: sine}\nmodel: {rnn: {}}\n");
  EXPECT_EQ(d.message, "duplicate key 'name' at the top level");
  EXPECT_EQ(d.hint, "first written at line 1, column 1");
  EXPECT_EQ(at(d), "t.yaml:2:1");
}

TEST(SpecErrors, EmptyAndNonMapDocuments) {
  EXPECT_EQ(onlyError("").message, "the spec is empty");
  Diagnostic d = onlyError("- a\n- b\n");
  EXPECT_EQ(d.message, "expected a map at the top level, got a list");
  EXPECT_EQ(at(d), "t.yaml:1:1");
}

TEST(SpecErrors, CollectsAllProblems) {
  std::vector<Diagnostic> diags;
  EXPECT_FALSE(parseSpecString(
      "data: {builtin: cosine, window: -1}\nmodel:\n  rnn: {hiden: 8, layers: x}\ntrain: {}\n",
      "t.yaml", diags));
  std::vector<std::string> got;
  for (const Diagnostic &d : diags)
    got.push_back(at(d) + " " + d.message);
  EXPECT_EQ(
      got, (std::vector<std::string>{
               "t.yaml:1:17 'data.builtin' must be one of 'sine', 'sines', 'wave', 'text', 'copy', "
               "'reverse', 'dates', 'pos', "
               "'majority', "
               "got 'cosine'",
               "t.yaml:1:33 'data.window' must be >= 1, got -1",
               "t.yaml:3:9 unknown key 'hiden' in 'model.rnn'",
               "t.yaml:3:27 expected an integer for 'model.rnn.layers', got 'x'",
               "t.yaml:1:1 missing required key 'name' at the top level",
           }));
}

// The sample output shown in the reference, reproduced from its first example.
TEST(SpecErrors, ReferenceSampleOutput) {
  std::string text = exampleSpecs().front().yaml;
  text.replace(text.find("hidden: 32"), 6, "hiden");
  text.replace(text.find("batch_size: 32"), 14, "batch_size: 0");
  std::vector<Diagnostic> diags;
  EXPECT_FALSE(parseSpecString(text, "rnn-sine.yaml", diags));
  std::string out;
  for (const Diagnostic &d : diags)
    out += d.str() + "\n";
  EXPECT_EQ(out, "rnn-sine.yaml:5:20: error: unknown key 'hiden' in 'model.rnn'\n"
                 "  hint: did you mean 'hidden'?\n"
                 "rnn-sine.yaml:7:21: error: 'train.batch_size' must be >= 1, got 0\n");
  EXPECT_NE(schemaMarkdown().find(out), std::string::npos);
}

TEST(SpecErrors, IntegerTooLarge) {
  Diagnostic d = onlyError("name: x\ndata: {builtin: sine, seed: 99999999999999999999}\n"
                           "model: {rnn: {}}\n");
  EXPECT_EQ(d.message, "'data.seed' is too large, got 99999999999999999999");
  EXPECT_EQ(at(d), "t.yaml:2:29");
}

// Odd documents must produce diagnostics, never an exception or a crash.
TEST(SpecErrors, OddInputsOnlyDiagnose) {
  const char *inputs[] = {
      "name: x\ndata: {builtin: sine}\nmodel: {rnn: {}}\n? [a, b]\n: c\n",
      "name: *undefined\n",
      "name: &n x\ndata: {builtin: sine}\nmodel: {rnn: *n}\n",
      "name: [x]\ndata: {builtin: [sine]}\nmodel: {rnn: 3, mlp: {hidden: {a: 1}}}\n",
      "name: x\ndata: {builtin: sine}\nmodel: {rnn: {hidden: -9223372036854775808}}\n",
      "name: x\ndata: {builtin: sine}\nmodel:\n  rnn:\n  mlp:\n",
      "\"just a string\"\n",
      "name: x\n---\nname: y\n--- [\n",
      "{",
      "\x01\x02\xff",
  };
  for (const char *input : inputs) {
    std::vector<Diagnostic> diags;
    std::optional<Spec> spec;
    EXPECT_NO_THROW(spec = parseSpecString(input, "odd.yaml", diags)) << input;
    EXPECT_FALSE(spec.has_value()) << input;
    EXPECT_FALSE(diags.empty()) << input;
  }
}

TEST(SpecErrors, EmptySectionPointsAtItsKey) {
  Diagnostic d = onlyError("name: x\ndata: {builtin: sine}\nmodel:\n  mlp:\n");
  EXPECT_EQ(d.message, "missing required key 'hidden' in 'model.mlp'");
  EXPECT_EQ(at(d), "t.yaml:4:3");
}

TEST(SpecErrors, SeveralDocuments) {
  Diagnostic d = onlyError("name: x\n---\nname: y\n");
  EXPECT_EQ(d.message, "expected one YAML document, found 2");
  EXPECT_EQ(at(d), "t.yaml:3:1");
}

// yaml-cpp 0.7.0's parser does not advance past a stray top-level ',' and YAML::LoadAll then
// collected empty documents until memory ran out; these are the inputs that did it.
TEST(SpecErrors, StrayFlowIndicatorsEndWithAnError) {
  Diagnostic d = onlyError(",");
  EXPECT_EQ(d.message, "invalid YAML: unexpected ','");
  EXPECT_EQ(at(d), "t.yaml:1:1");
  d = onlyError("\n!attention_layer ,\n:&a \n");
  EXPECT_EQ(d.message, "invalid YAML: unexpected ','");
  EXPECT_EQ(at(d), "t.yaml:2:18");
  std::vector<Diagnostic> diags;
  EXPECT_FALSE(parseSpecString(kRnnSpec, "rnn.yaml", {{"name", ","}}, diags).has_value());
  ASSERT_EQ(diags.size(), 1u);
  EXPECT_EQ(diags[0].message, "invalid YAML: unexpected ','");
  EXPECT_EQ(diags[0].loc.file, "--set name");
}

TEST(SpecErrors, DiagnosticFormat) {
  Diagnostic d{{"a.yaml", 3, 7}, "something is off", "try this"};
  EXPECT_EQ(d.str(), "a.yaml:3:7: error: something is off\n  hint: try this");
  d.hint.clear();
  EXPECT_EQ(d.str(), "a.yaml:3:7: error: something is off");
}

TEST(SpecErrors, MissingFile) {
  std::vector<Diagnostic> diags;
  EXPECT_FALSE(parseSpecFile("/nonexistent/spec.yaml", diags));
  ASSERT_EQ(diags.size(), 1u);
  EXPECT_EQ(diags[0].str(),
            "/nonexistent/spec.yaml: error: cannot open file: No such file or directory");
}

// A device read until memory ran out, and a directory or a FIFO is no spec either.
TEST(SpecErrors, OnlyRegularFilesOfBoundedSize) {
  for (const char *path : {"/dev/zero", "/tmp"}) {
    std::vector<Diagnostic> diags;
    EXPECT_FALSE(parseSpecFile(path, diags)) << path;
    ASSERT_EQ(diags.size(), 1u) << path;
    EXPECT_NE(diags[0].message.find(path == std::string("/tmp") ? "is a directory"
                                                                 : "not a regular file"),
              std::string::npos)
        << diags[0].str();
  }
  std::string big = writeTemp("big.yaml", std::string((1 << 20) + 1, '#'));
  std::vector<Diagnostic> diags;
  EXPECT_FALSE(parseSpecFile(big, diags));
  ASSERT_EQ(diags.size(), 1u);
  EXPECT_EQ(diags[0].message, "the spec file is 1048577 B, more than the limit of 1 MiB");
}

// Sizes are bounded before anything is built (10^9 passed `check` and then exhausted memory),
// and NaN, which passed every bound, is refused.
TEST(SpecErrors, SizesAreBoundedAndNumbersFinite) {
  const std::string base = "name: x\ndata: {builtin: sine}\nmodel:\n  rnn: {hidden: ";
  Diagnostic d = onlyError(base + "1000000000}\n");
  EXPECT_EQ(d.message, "'model.rnn.hidden' must be <= 16384, got 1000000000");
  d = onlyError("name: x\ndata: {builtin: sine, window: 9223372036854775807}\nmodel: {rnn: {}}\n");
  EXPECT_EQ(d.message, "'data.window' must be <= 4096, got 9223372036854775807");
  d = onlyError(base + "8}\ntrain: {optimizer: {lr: nan}}\n");
  EXPECT_EQ(d.message, "'train.optimizer.lr' must be a finite number, got nan");
  d = onlyError(base + "8}\ntrain: {clip_norm: inf}\n");
  EXPECT_EQ(d.message, "'train.clip_norm' must be a finite number, got inf");
  d = onlyError(base + "8, dropout: 1.0}\n");
  EXPECT_EQ(d.message, "'model.rnn.dropout' must be < 1, got 1.0");
  d = onlyError(base + "8}\ntrain: {optimizer: {beta1: 5}}\n");
  EXPECT_EQ(d.message, "'train.optimizer.beta1' must be < 1, got 5");
}

TEST(SpecErrors, MlpLayerCountIsBounded) {
  std::string hidden;
  for (int i = 0; i < 33; ++i)
    hidden += (i ? ", " : "") + std::string("4");
  Diagnostic d = onlyError("name: x\ndata: {builtin: sine}\nmodel: {mlp: {hidden: [" + hidden +
                           "]}}\n");
  EXPECT_EQ(d.message, "'model.mlp.hidden' takes at most 32 items, got 33");
}

// The name becomes runs/<name>: "../../x" wrote outside it, "" into runs/ itself; and text that
// is not UTF-8 failed only at the first checkpoint save.
TEST(SpecErrors, NamesAreFileNamesAndTextIsUtf8) {
  for (const char *name : {"\"../../x\"", "\"\"", "\".hidden\"", "\"a/b\"", "\"a b\""}) {
    Diagnostic d = onlyError(std::string("name: ") + name + "\ndata: {builtin: sine}\nmodel: {rnn: {}}\n");
    EXPECT_NE(d.message.find("'name' must be a name of letters, digits"), std::string::npos) << name;
  }
  Diagnostic d = onlyError("name: x\ndata: {builtin: sine}\nmodel: {rnn: {}}\nsample: {prime: \"\xff\"}\n");
  EXPECT_EQ(d.message, "'sample.prime' is not valid UTF-8 text (byte 1 of the value)");
}

// --- overrides -----------------------------------------------------------------------------------

TEST(SpecOverrides, ApplyBeforeValidation) {
  std::string path = writeTemp("override_ok.yaml", kMlpSpec);
  std::vector<Diagnostic> diags;
  std::optional<Spec> spec = parseSpecFile(
      path,
      {{"train.batch_size", "64"}, {"model.mlp.hidden", "[128, 128, 8]"}, {"data.seed", "9"}},
      diags);
  ASSERT_TRUE(spec.has_value());
  EXPECT_TRUE(diags.empty());
  EXPECT_EQ(spec->file, path);
  EXPECT_EQ(spec->train.batchSize, 64); // `train` did not exist: created by the override
  EXPECT_EQ(spec->train.seed, 1u);
  EXPECT_EQ(spec->model.mlp->hidden, (std::vector<int64_t>{128, 128, 8}));
  EXPECT_EQ(spec->data.seed, 9u);
  EXPECT_EQ(spec->data.window, 8); // untouched
}

TEST(SpecOverrides, CanSwitchArchitectureBySettingASection) {
  std::string path = writeTemp("override_arch.yaml", kRnnSpec);
  std::vector<Diagnostic> diags;
  // Later overrides win: the second one replaces `model` wholesale.
  std::optional<Spec> spec = parseSpecFile(
      path, {{"model.rnn.hidden", "8"}, {"model", "{mlp: {hidden: [4]}}"}}, diags);
  ASSERT_TRUE(spec.has_value());
  EXPECT_TRUE(spec->model.mlp.has_value());
  EXPECT_FALSE(spec->model.rnn.has_value());
}

TEST(SpecOverrides, UnknownKeyPointsAtCommandLine) {
  std::string path = writeTemp("override_unknown.yaml", kRnnSpec);
  std::vector<Diagnostic> diags;
  EXPECT_FALSE(parseSpecFile(path, {{"train.batchsize", "64"}}, diags));
  ASSERT_EQ(diags.size(), 1u);
  EXPECT_EQ(diags[0].str(), "--set train.batchsize:1:1: error: unknown key 'batchsize' in 'train'\n"
                            "  hint: did you mean 'batch_size'?");
}

TEST(SpecOverrides, BadValuePointsAtCommandLine) {
  std::string path = writeTemp("override_bad.yaml", kRnnSpec);
  std::vector<Diagnostic> diags;
  EXPECT_FALSE(parseSpecFile(path, {{"train.batch_size", "0"}, {"model.rnn.hidden", "[8, x]"}},
                             diags));
  ASSERT_EQ(diags.size(), 2u);
  EXPECT_EQ(diags[0].str(),
            "--set model.rnn.hidden:1:1: error: expected an integer for 'model.rnn.hidden', got a list");
  EXPECT_EQ(diags[1].str(), "--set train.batch_size:1:1: error: 'train.batch_size' must be >= 1, got 0");
}

// A key another flag sets (attnc's --precision, --beam, ...) is that flag's fault, as typed.
TEST(SpecOverrides, ABadValueFromAFlagNamesTheFlag) {
  std::string path = writeTemp("override_flag.yaml", kRnnSpec);
  std::vector<Diagnostic> diags;
  EXPECT_FALSE(parseSpecFile(path, {{"train.precision", "fp8", "--precision fp8"}}, diags));
  ASSERT_EQ(diags.size(), 1u);
  EXPECT_EQ(diags[0].str().rfind("--precision fp8: error: ", 0), 0u) << diags[0].str();
}

TEST(SpecOverrides, NewSectionMissingRequiredKey) {
  std::string path = writeTemp("override_section.yaml", kRnnSpec);
  std::vector<Diagnostic> diags;
  EXPECT_FALSE(parseSpecFile(path, {{"model.mlp.activation", "relu"}}, diags));
  std::vector<std::string> got;
  for (const Diagnostic &d : diags)
    got.push_back(at(d) + " " + d.message);
  EXPECT_EQ(got, (std::vector<std::string>{
                     "--set model.mlp.activation:1:1 missing required key 'hidden' in 'model.mlp'",
                     "--set model.mlp.activation:1:1 'model' takes exactly one of 'mlp', 'rnn', "
                     "'transformer', 'conv', 'graph', 'mlir', got "
                     "both 'rnn' and 'mlp'",
                 }));
}

TEST(SpecOverrides, MalformedOverrides) {
  std::string path = writeTemp("override_malformed.yaml", kRnnSpec);
  std::vector<Diagnostic> diags;
  EXPECT_FALSE(parseSpecFile(
      path, {{"train..seed", "1"}, {"train.seed", "[1, 2"}, {"name.first", "x"}}, diags));
  ASSERT_EQ(diags.size(), 3u);
  EXPECT_EQ(diags[0].str(), "--set train..seed:1:1: error: invalid override key 'train..seed'\n"
                            "  hint: write --set <dotted.key>=<value>, e.g. --set train.batch_size=64");
  EXPECT_EQ(diags[1].loc.file, "--set train.seed");
  EXPECT_NE(diags[1].message.find("invalid YAML"), std::string::npos) << diags[1].message;
  EXPECT_EQ(diags[2].str(), "--set name.first:1:1: error: cannot set 'name.first': 'name' is not a map\n"
                            "  hint: override 'name' itself instead");
}

// --- the reference ----------------------------------------------------------------------------

// docs/yaml-reference.md is schemaMarkdown()'s output, so the docs cannot drift from the parser.
// ATTN_REGENERATE_DOCS=1 rewrites it.
TEST(SpecReference, DocsMatchSchema) {
  const std::string path = std::string(ATTN_SOURCE_DIR) + "/docs/yaml-reference.md";
  const std::string expected = schemaMarkdown();
  if (const char *regenerate = std::getenv("ATTN_REGENERATE_DOCS");
      regenerate && std::string(regenerate) == "1")
    std::ofstream(path, std::ios::binary) << expected;
  EXPECT_TRUE(readFile(path) == expected)
      << path << " is out of date; regenerate it with "
      << "ATTN_REGENERATE_DOCS=1 ./bin/attn-frontend-yaml-tests --gtest_filter=SpecReference.*";
}

// The fuzzers' seed and regression inputs (tests/fuzz/corpus/spec, scripts/fuzz.sh): each is
// refused with a diagnostic or parses, prints and parses back to the same text.
TEST(FuzzCorpus, SpecInputsDiagnoseOrRoundTrip) {
  namespace fs = std::filesystem;
  int inputs = 0;
  for (const auto &entry : fs::directory_iterator(std::string(ATTN_SOURCE_DIR) +
                                                  "/tests/fuzz/corpus/spec")) {
    std::ifstream in(entry.path(), std::ios::binary);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::vector<Diagnostic> diags;
    std::optional<Spec> spec;
    if (text.rfind("--set ", 0) == 0) {
      std::string line = text.substr(6, text.find('\n') - 6);
      size_t eq = line.find('=');
      spec = parseSpecString(kRnnSpec, "rnn.yaml", {{line.substr(0, eq), line.substr(eq + 1)}},
                             diags);
    } else {
      spec = parseSpecString(text, "fuzz.yaml", diags);
    }
    ++inputs;
    if (!spec) {
      EXPECT_FALSE(diags.empty()) << entry.path();
      continue;
    }
    std::string printed = specToYaml(*spec);
    std::vector<Diagnostic> again;
    std::optional<Spec> reparsed = parseSpecString(printed, "printed.yaml", again);
    ASSERT_TRUE(reparsed) << entry.path() << "\n" << printed;
    EXPECT_EQ(specToYaml(*reparsed), printed) << entry.path();
  }
  EXPECT_GE(inputs, 5);
}

// Every model of the zoo, and free text that YAML would read as something else, survive
// printing: the spec stored in a checkpoint is the spec that was trained.
TEST(SpecPrinter, RoundTripsEveryModelAndAwkwardText) {
  namespace fs = std::filesystem;
  std::vector<std::string> texts;
  for (const auto &entry : fs::directory_iterator(std::string(ATTN_SOURCE_DIR) + "/models")) {
    if (entry.path().extension() != ".yaml")
      continue;
    std::ifstream in(entry.path());
    texts.push_back(std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>()));
  }
  for (const char *prime : {"a: b", "null", "", "[1, 2]", "keep #this", "'quoted'", "\\\"x\\\"",
                            "true", "0x10", "- item", "tab\\there", "\\u00e9t\\u00e9"})
    texts.push_back(std::string("name: \"null\"\ndata: {builtin: text}\ntask: lm\nmodel: {rnn: {}}\n"
                                "sample: {prime: \"") + prime + "\"}\n");
  for (const std::string &text : texts) {
    std::vector<Diagnostic> diags;
    std::optional<Spec> spec = parseSpecString(text, "t.yaml", diags);
    ASSERT_TRUE(spec) << text << (diags.empty() ? "" : diags[0].str());
    std::string printed = specToYaml(*spec);
    std::optional<Spec> again = parseSpecString(printed, "printed.yaml", diags);
    ASSERT_TRUE(again) << printed << (diags.empty() ? "" : diags.back().str());
    EXPECT_EQ(again->name, spec->name);
    EXPECT_EQ(again->sample.prime, spec->sample.prime) << printed;
    EXPECT_EQ(specToYaml(*again), printed);
  }
}
