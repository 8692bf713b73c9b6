// Model families (frontends/yaml/Family.h): which family takes each model of models/, and
// their validators: every problem reported at once, each located in the spec.
#include "frontends/yaml/Family.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <map>

namespace {

using namespace attn::yaml;

Spec parse(const std::string &text, const std::vector<Override> &overrides = {}) {
  std::vector<Diagnostic> diags;
  std::optional<Spec> spec = parseSpecString(text, "m.yaml", overrides, diags);
  EXPECT_TRUE(spec) << (diags.empty() ? "" : diags[0].str());
  return spec ? *spec : Spec();
}

// checkConsistency's diagnostics, a line each ("" when the spec is consistent).
std::string problemsOf(const Spec &s) {
  std::vector<Diagnostic> diags;
  checkConsistency(s, diags);
  std::string all;
  for (const Diagnostic &d : diags)
    all += d.str() + "\n";
  return all;
}

TEST(Family, EveryModelBelongsToTheFamilyItsNameSays) {
  std::map<std::string, std::string> expected = {{"sine", "regressor"},
                                                 {"wave", "regressor"},
                                                 {"char-rnn", "language model"},
                                                 {"pos-tagger", "labeller"},
                                                 {"majority-classifier", "labeller"},
                                                 {"transformer", "transformer"},
                                                 {"convs2s", "conv"},
                                                 {"graph", "graph"},
                                                 {"mlir", "graph"},
                                                 {"dates-", "seq2seq"},
                                                 {"reverse-seq2seq", "seq2seq"}};
  int checked = 0;
  for (const auto &e : std::filesystem::directory_iterator(std::string(ATTN_SOURCE_DIR) + "/models")) {
    if (e.path().extension() != ".yaml")
      continue; // a module of attn IR that a spec names (model.mlir)
    std::vector<Diagnostic> diags;
    std::optional<Spec> spec = parseSpecFile(e.path().string(), diags);
    ASSERT_TRUE(spec) << e.path();
    const Family *family = familyOf(*spec);
    ASSERT_TRUE(family) << e.path();
    std::string stem = e.path().stem().string(), want;
    for (const auto &[part, name] : expected)
      if (stem.find(part) != std::string::npos &&
          (want.empty() || part == "transformer" || part == "convs2s" || part == "graph" ||
           part == "mlir"))
        want = name;
    EXPECT_EQ(family->name, want) << stem;
    std::vector<Diagnostic> problems;
    EXPECT_TRUE(checkConsistency(*spec, problems)) << stem << ": " << problems[0].str();
    ++checked;
  }
  EXPECT_GT(checked, 15);
}

TEST(Family, EveryProblemIsReportedAtOnceAndLocated) {
  // Three independent problems: a key for another cell, nbest above beam, dates by words.
  Spec s = parse("name: m\ntask: seq2seq\n"
                 "data: {builtin: dates, tokens: word}\n"
                 "model:\n  rnn: {cell: gru, hidden: 8, projection: 4}\n"
                 "decode: {beam: 2, nbest: 3}\n");
  std::vector<Diagnostic> diags;
  EXPECT_FALSE(checkConsistency(s, diags));
  ASSERT_EQ(diags.size(), 3u);
  std::string all;
  for (const Diagnostic &d : diags) {
    EXPECT_EQ(d.loc.file, "m.yaml");
    EXPECT_GT(d.loc.line, 0) << d.str();
    all += d.str() + "\n";
  }
  EXPECT_NE(all.find("m.yaml:5:8: error: model.rnn.projection is for the lstm cell"),
            std::string::npos) << all;
  EXPECT_NE(all.find("m.yaml:6:19: error: decode.nbest (3) cannot exceed decode.beam (2)"),
            std::string::npos) << all;
  EXPECT_NE(all.find("the dates data is written character by character"), std::string::npos)
      << all;
}

TEST(Family, SubwordKeysAreCheckedWhereTheyAreWritten) {
  auto problems = [](const std::string &task, const std::string &data) {
    return problemsOf(parse("name: m\ntask: " + task + "\ndata: " + data +
                            "\nmodel:\n  rnn: {cell: gru, hidden: 8}\n"));
  };
  EXPECT_EQ(problems("seq2seq", "{path: p.tsv, tokens: bpe, vocab_size: 500}"), "");
  EXPECT_EQ(problems("seq2seq", "{path: p.tsv, tokens: unigram, shared_vocab: true}"), "");
  EXPECT_EQ(problems("seq2seq", "{path: p.tsv, tokens: sentencepiece, spm_model: m.model}"), "");
  std::string tag = problems("tag", "{path: p.tsv, tokens: bpe}");
  EXPECT_NE(tag.find("m.yaml:3:"), std::string::npos) << tag;
  EXPECT_NE(tag.find("one tag per word"), std::string::npos) << tag;
  std::string noModel = problems("seq2seq", "{path: p.tsv, tokens: sentencepiece}");
  EXPECT_NE(noModel.find("data.tokens: sentencepiece reads the model in data.spm_model"),
            std::string::npos)
      << noModel;
  std::string stray = problems("seq2seq", "{path: p.tsv, tokens: word, vocab_size: 100, "
                                          "spm_model: m.model}");
  EXPECT_NE(stray.find("data.vocab_size sizes the subword models"), std::string::npos) << stray;
  EXPECT_NE(stray.find("data.spm_model is read with data.tokens: sentencepiece"),
            std::string::npos)
      << stray;
  // data.stream reads a file of pairs; its block size needs it.
  EXPECT_EQ(problems("seq2seq", "{path: p.tsv, stream: true, stream_buffer: 100}"), "");
  std::string generated = problems("seq2seq", "{builtin: dates, tokens: char, stream: true}");
  EXPECT_NE(generated.find("m.yaml:3:"), std::string::npos) << generated;
  EXPECT_NE(generated.find("data.stream reads the text (pairs) of data.path, but there is none"),
            std::string::npos)
      << generated;
  std::string buffer = problems("seq2seq", "{path: p.tsv, stream_buffer: 100}");
  EXPECT_NE(buffer.find("data.stream_buffer sizes the blocks of data.stream"), std::string::npos)
      << buffer;
}

// task lm learns from a text file of the user's (data.path) with any data.tokens, or from the
// builtin text, which is read as characters.
TEST(Family, ALanguageModelReadsItsOwnText) {
  auto problems = [](const std::string &data, const std::string &model = "rnn: {hidden: 8}") {
    return problemsOf(parse("name: m\ntask: lm\ndata: " + data + "\nmodel: {" + model + "}\n"));
  };
  EXPECT_EQ(problems("{path: book.txt}"), "");
  EXPECT_EQ(problems("{path: book.txt, tokens: char, valid_path: v.txt, stream: true}"), "");
  EXPECT_EQ(problems("{path: book.txt, tokens: bpe, vocab_size: 500}"), "");
  EXPECT_EQ(problems("{path: book.txt, tokens: sentencepiece, spm_model: m.model}"), "");
  EXPECT_EQ(problems("{path: book.txt, tokens: unigram}",
                     "transformer: {layers: 1, d_model: 8, heads: 2, ffn: 16}"),
            "");
  EXPECT_EQ(problems("{builtin: text}"), "");
  EXPECT_NE(problems("{builtin: text, tokens: bpe}").find("the builtin text is read as characters"),
            std::string::npos);
}

TEST(Family, EvalBleuIsForSeq2Seq) {
  auto problems = [](const std::string &task) {
    return problemsOf(parse("name: m\ntask: " + task + "\ndata: {path: p.tsv}\nmodel:\n"
                            "  rnn: {cell: gru, hidden: 8}\ntrain: {eval_bleu: true}\n"));
  };
  EXPECT_EQ(problems("seq2seq"), "");
  std::string tag = problems("tag");
  EXPECT_NE(tag.find("m.yaml:6:"), std::string::npos) << tag;
  EXPECT_NE(tag.find("train.eval_bleu scores the decoded translations of task 'seq2seq'"),
            std::string::npos)
      << tag;
}

TEST(Family, TokenCountBatchesAreForTextPairs) {
  auto problems = [](const std::string &task, const std::string &data, const std::string &train) {
    return problemsOf(parse("name: m\ntask: " + task + "\ndata: " + data +
                            "\nmodel:\n  rnn: {cell: gru, hidden: 8}\ntrain: " + train + "\n"));
  };
  EXPECT_EQ(problems("seq2seq", "{path: p.tsv}", "{batch_tokens: 512, length_buckets: 8}"), "");
  EXPECT_EQ(problems("tag", "{path: p.tsv}", "{batch_tokens: 512}"), "");
  std::string regress = problems("regress", "{builtin: sine}", "{batch_tokens: 512}");
  EXPECT_NE(regress.find("m.yaml:6:"), std::string::npos) << regress;
  EXPECT_NE(regress.find("task 'regress' reads no pairs"), std::string::npos) << regress;
  EXPECT_EQ(problems("seq2seq", "{path: p.tsv, stream: true}", "{batch_tokens: 512}"), "");
  std::string alone = problems("seq2seq", "{path: p.tsv}", "{length_buckets: 8}");
  EXPECT_NE(alone.find("train.length_buckets counts the batch shapes of train.batch_tokens"),
            std::string::npos)
      << alone;
}

TEST(Family, CosineKeysApplyToTheCosineScoreOnly) {
  std::string base = "name: m\ntask: seq2seq\ndata: {builtin: dates, tokens: char}\n"
                     "model:\n  rnn: {cell: lstm, hidden: 8}\n";
  std::vector<Diagnostic> diags;
  Spec general = parse(base + "  attention: {type: luong, score: general, temperature: 3}\n");
  EXPECT_FALSE(checkConsistency(general, diags));
  ASSERT_EQ(diags.size(), 1u);
  EXPECT_EQ(diags[0].str().substr(0, 16), "m.yaml:6:44: err") << diags[0].str();
  EXPECT_NE(diags[0].message.find("scale the cosine score"), std::string::npos);

  diags.clear();
  Spec cosine = parse(base + "  attention: {type: luong, score: cosine, temperature: 3}\n");
  EXPECT_TRUE(checkConsistency(cosine, diags)) << diags[0].str();

  diags.clear();
  Spec zero = parse(base + "  attention: {type: luong, score: cosine, temperature: 0}\n");
  EXPECT_FALSE(checkConsistency(zero, diags));
  ASSERT_EQ(diags.size(), 1u);
  EXPECT_NE(diags[0].message.find("must be above 0"), std::string::npos);

  diags.clear();
  Spec bidir = parse(base + "  attention: {type: luong, score: cosine}\n",
                     {{"model.rnn.bidirectional", "true"}});
  EXPECT_FALSE(checkConsistency(bidir, diags));
  ASSERT_EQ(diags.size(), 1u);
  EXPECT_NE(diags[0].message.find("score 'cosine' needs encoder states as wide"),
            std::string::npos);
}

// Local attention's Gaussian: off for monotonic alignment, on for predictive unless written;
// refused where it cannot apply (another type) or where nothing would learn without it.
TEST(Family, TheGaussianBelongsToLocalAttention) {
  std::string base = "name: m\ntask: seq2seq\ndata: {builtin: dates, tokens: char}\n"
                     "model:\n  rnn: {cell: lstm, hidden: 8}\n";
  std::vector<Diagnostic> diags;
  EXPECT_FALSE(parse(base + "  attention: {type: local, align: monotonic}\n")
                   .model.attention->gaussianWeighting());
  EXPECT_TRUE(parse(base + "  attention: {type: local, align: predictive}\n")
                  .model.attention->gaussianWeighting());
  Spec weighted = parse(base + "  attention: {type: local, align: monotonic, gaussian: true}\n");
  EXPECT_TRUE(weighted.model.attention->gaussianWeighting());
  EXPECT_TRUE(checkConsistency(weighted, diags)) << diags[0].str();

  Spec luong = parse(base + "  attention: {type: luong, gaussian: true}\n");
  EXPECT_FALSE(checkConsistency(luong, diags));
  ASSERT_EQ(diags.size(), 1u);
  EXPECT_EQ(diags[0].str().substr(0, 16), "m.yaml:6:28: err") << diags[0].str();
  EXPECT_NE(diags[0].message.find("weights a local attention's window, but this attention is "
                                  "'luong'"),
            std::string::npos)
      << diags[0].str();

  diags.clear();
  Spec unlearnable =
      parse(base + "  attention: {type: local, align: predictive, gaussian: false}\n");
  EXPECT_FALSE(checkConsistency(unlearnable, diags));
  ASSERT_EQ(diags.size(), 1u);
  EXPECT_NE(diags[0].message.find("W_p and v_p would never train"), std::string::npos)
      << diags[0].str();
}

// data.horizon: an mlp predicts all M values (output.size M), an rnn becomes a forecaster
// (output.size 1, unidirectional) that alone among regressors takes train.teacher_forcing.
TEST(Family, HorizonsAndForecasters) {
  std::string base = "name: m\ntask: regress\ndata: {builtin: sines, horizon: 4}\n";
  std::vector<Diagnostic> diags;
  auto problems = [&](const std::string &text) {
    diags.clear();
    EXPECT_FALSE(checkConsistency(parse(text), diags)) << text;
    std::string all;
    for (const Diagnostic &d : diags)
      all += d.str() + "\n";
    return all;
  };
  EXPECT_TRUE(checkConsistency(parse(base + "model: {rnn: {cell: gru}}\n"
                                            "train: {teacher_forcing: {ratio: 0.5}}\n"),
                               diags))
      << diags[0].str();
  EXPECT_TRUE(
      checkConsistency(parse(base + "model: {mlp: {hidden: [8]}, output: {size: 4}}\n"), diags))
      << diags[0].str();
  EXPECT_NE(problems(base + "model: {mlp: {hidden: [8]}}\n")
                .find("has 4 target values per example (data.horizon), but model.output.size is "
                      "1"),
            std::string::npos);
  EXPECT_NE(problems(base + "model: {rnn: {}, output: {size: 4}}\n")
                .find("predicts one value per step, but model.output.size is 4"),
            std::string::npos);
  EXPECT_NE(problems(base + "model: {rnn: {bidirectional: true}}\n").find("bidirectional"),
            std::string::npos);
  EXPECT_NE(problems(base + "model: {rnn: {layers: 2}, seq2seq: {decoder_hidden: 8}}\n")
                .find("model.seq2seq shapes the encoder-decoder of task 'seq2seq', not this "
                      "'regress' model"),
            std::string::npos);
  EXPECT_NE(problems("name: m\ntask: regress\ndata: {builtin: sine}\nmodel: {rnn: {}}\n"
                     "train: {teacher_forcing: {ratio: 0.5}}\n")
                .find("train.teacher_forcing is for decoders"),
            std::string::npos);
  EXPECT_NE(problems("name: m\ntask: lm\ndata: {builtin: text, horizon: 3}\nmodel: {rnn: {}}\n")
                .find("m.yaml:3:23: error: data.horizon is the number of values a 'regress' "
                      "model predicts"),
            std::string::npos)
      << problems("name: m\ntask: lm\ndata: {builtin: text, horizon: 3}\nmodel: {rnn: {}}\n");
}

// One to many: data.builtin wave takes model.rnn.feed and no data.window; nothing else takes
// feed.
TEST(Family, OneToMany) {
  std::string base = "name: m\ntask: regress\ndata: {builtin: wave, horizon: 8}\n";
  std::vector<Diagnostic> diags;
  EXPECT_TRUE(
      checkConsistency(parse(base + "model: {rnn: {cell: lstm, feed: every_step}}\n"), diags))
      << diags[0].str();
  EXPECT_TRUE(
      checkConsistency(parse(base + "model: {mlp: {hidden: [8]}, output: {size: 8}}\n"), diags))
      << diags[0].str();
  diags.clear();
  EXPECT_FALSE(checkConsistency(
      parse("name: m\ntask: regress\ndata: {builtin: wave, window: 4}\nmodel: {rnn: {}}\n"),
      diags));
  ASSERT_EQ(diags.size(), 1u);
  EXPECT_NE(diags[0].str().find("m.yaml:3:23: error: data.window does not apply to data.builtin "
                                "wave"),
            std::string::npos)
      << diags[0].str();
  diags.clear();
  EXPECT_FALSE(checkConsistency(parse(base + "model: {rnn: {}}\n"
                                             "train: {teacher_forcing: {ratio: 0.5}}\n"),
                                diags));
  ASSERT_EQ(diags.size(), 1u);
  EXPECT_NE(diags[0].message.find("train.teacher_forcing is for decoders"), std::string::npos)
      << diags[0].str();
  diags.clear();
  EXPECT_FALSE(checkConsistency(parse("name: m\ntask: regress\ndata: {builtin: sine}\n"
                                      "model: {rnn: {feed: every_step}}\n"),
                                diags));
  ASSERT_EQ(diags.size(), 1u);
  EXPECT_NE(diags[0].message.find("model.rnn.feed says where a one-to-many model's input"),
            std::string::npos)
      << diags[0].str();
}

// A file of vectors (data.features) is one to many too; data.features belongs to such files.
TEST(Family, OneToManyFromAFile) {
  std::vector<Diagnostic> diags;
  Spec file = parse("name: m\ntask: regress\ndata: {path: w.csv, features: 4, horizon: 8}\n"
                    "model: {rnn: {feed: every_step}}\n");
  EXPECT_TRUE(oneToMany(file));
  EXPECT_TRUE(checkConsistency(file, diags)) << diags[0].str();
  EXPECT_FALSE(oneToMany(parse("name: m\ntask: regress\ndata: {path: s.csv}\nmodel: {rnn: {}}\n")));

  Spec wave =
      parse("name: m\ntask: regress\ndata: {builtin: wave, features: 4}\nmodel: {rnn: {}}\n");
  EXPECT_FALSE(checkConsistency(wave, diags));
  ASSERT_EQ(diags.size(), 1u);
  EXPECT_NE(diags[0].str().find("m.yaml:3:23: error: data.features is the width of the vectors in "
                                "a data.path file, but the data is data.builtin: wave"),
            std::string::npos)
      << diags[0].str();

  diags.clear();
  Spec lm = parse("name: m\ntask: lm\ndata: {builtin: text, features: 2}\nmodel: {rnn: {}}\n");
  EXPECT_FALSE(checkConsistency(lm, diags));
  ASSERT_EQ(diags.size(), 1u);
  EXPECT_NE(diags[0].message.find("data.features is the width of a 'regress' file's vectors"),
            std::string::npos)
      << diags[0].str();
}

// task: seq2seq learns from the pair sets docs/yaml-reference.md names (copy, reverse, dates)
// or a file: every other builtin is refused at data, another task's with the task it is for.
TEST(Family, Seq2SeqDataIsPairs) {
  for (const char *builtin : {"copy", "reverse"}) {
    std::vector<Diagnostic> diags;
    Spec s = parse(std::string("name: m\ntask: seq2seq\ndata: {builtin: ") + builtin +
                   "}\nmodel: {rnn: {}}\n");
    EXPECT_TRUE(checkConsistency(s, diags)) << builtin << ": " << diags[0].str();
  }
  for (const char *builtin : {"sine", "sines", "wave", "text", "pos", "majority"}) {
    std::vector<Diagnostic> diags;
    Spec s = parse(std::string("name: m\ntask: seq2seq\ndata: {builtin: ") + builtin +
                   "}\nmodel: {rnn: {}}\n");
    EXPECT_FALSE(checkConsistency(s, diags)) << builtin;
    ASSERT_EQ(diags.size(), 1u) << builtin;
    EXPECT_NE(diags[0].str().find("m.yaml:3:7: error: task 'seq2seq' learns from pairs of "
                                  "sequences, but the data is 'data.builtin: " +
                                  std::string(builtin) + "'"),
              std::string::npos)
        << diags[0].str();
  }
}

TEST(Family, TheTransformerFamilyTakesEveryTaskItsStackDoes) {
  for (const char *task : {"seq2seq", "lm", "tag", "classify"}) {
    Spec s = parse(std::string("name: m\ntask: ") + task +
                   "\ndata: {builtin: text}\nmodel:\n  transformer: {d_model: 8, heads: 2}\n");
    ASSERT_TRUE(familyOf(s));
    EXPECT_STREQ(familyOf(s)->name, "transformer") << task;
  }
}

// model.conv is an encoder-decoder: other tasks, a recurrent decoder's keys and a
// Transformer's head are refused, every problem at its key.
TEST(Family, TheConvFamilyIsAnEncoderDecoder) {
  std::vector<Diagnostic> diags;
  Spec tagger = parse("name: m\ntask: tag\ndata: {builtin: pos}\nmodel:\n  conv: {layers: 2}\n");
  ASSERT_TRUE(familyOf(tagger));
  EXPECT_STREQ(familyOf(tagger)->name, "conv");
  EXPECT_FALSE(checkConsistency(tagger, diags));
  ASSERT_EQ(diags.size(), 1u);
  EXPECT_NE(diags[0].str().find("m.yaml:5:9: error: model.conv is a convolutional "
                                "encoder-decoder, for task 'seq2seq', not 'tag'"),
            std::string::npos)
      << diags[0].str();

  diags.clear();
  Spec s = parse("name: m\ntask: seq2seq\ndata: {builtin: dates, tokens: char}\n"
                 "model:\n  conv: {layers: 2, decoder_layers: 3}\n"
                 "  embedding: {dim: 16}\n  attention: {type: bahdanau}\n"
                 "train: {teacher_forcing: {ratio: 0.5}}\n"
                 "decode: {attention_layer: 4, attention_head: 1}\n");
  EXPECT_FALSE(checkConsistency(s, diags));
  std::string all;
  for (const Diagnostic &d : diags)
    all += d.str() + "\n";
  EXPECT_EQ(diags.size(), 5u) << all;
  for (const char *text : {"model.embedding.dim does not apply to a convolutional model",
                           "scheduled sampling feeds a recurrent decoder",
                           "every block of the convolutional decoder has its own",
                           "decode.attention_layer is 4, but the decoder has 3 blocks",
                           "decode.attention_head chooses a Transformer's head"})
    EXPECT_NE(all.find(text), std::string::npos) << text << "\n" << all;
}

// Hard attention's keys belong to it, and it trains with teacher forcing and Bahdanau's
// decoder: the rest is refused at its key.
TEST(Family, HardAttentionKeys) {
  std::string base = "name: m\ntask: seq2seq\ndata: {builtin: dates, tokens: char}\n"
                     "model:\n  rnn: {cell: gru, hidden: 8}\n";
  std::vector<Diagnostic> diags;
  Spec ok = parse(base + "  attention: {type: hard, score: concat, entropy: 0.01, "
                         "soft_probability: 0.5, baseline: none}\n");
  EXPECT_TRUE(checkConsistency(ok, diags)) << diags[0].str();

  Spec soft = parse(base + "  attention: {type: bahdanau, entropy: 0.01}\n");
  EXPECT_FALSE(checkConsistency(soft, diags));
  ASSERT_EQ(diags.size(), 1u);
  EXPECT_NE(diags[0].str().find("m.yaml:6:31: error: model.attention.entropy trains hard "
                                "attention's sampled positions, but this attention is "
                                "'bahdanau'"),
            std::string::npos)
      << diags[0].str();

  diags.clear();
  Spec mixed = parse(base + "  attention: {type: hard, window: 3}\n"
                            "train: {teacher_forcing: {ratio: 0.5}}\n");
  EXPECT_FALSE(checkConsistency(mixed, diags));
  std::string all;
  for (const Diagnostic &d : diags)
    all += d.str() + "\n";
  EXPECT_EQ(diags.size(), 2u) << all;
  EXPECT_NE(all.find("hard attention is trained with teacher forcing"), std::string::npos) << all;
  EXPECT_NE(all.find("m.yaml:6:27: error: model.attention.window, align and input_feeding shape "
                     "Luong's attention"),
            std::string::npos)
      << all;
}

} // namespace
