// attn::app::ModelConfig as JSON (what a standalone executable carries): every field comes
// back, and text that is not a configuration is refused with a message naming it.
#include "attn/app/Config.h"

#include <gtest/gtest.h>

namespace {

using attn::app::ModelConfig;

TEST(AppConfig, RoundTripsEveryField) {
  ModelConfig c;
  c.name = "dates \"x\"";
  c.data.task = attn::task::Task::Tag;
  c.data.builtin = "pos";
  c.data.path = "train.tsv";
  c.data.tokens = attn::data::Tokenize::Char;
  c.data.maxLen = 17;
  c.data.seed = 1ull << 60;
  c.data.reverseSource = true;
  c.decode.beam = 5;
  c.decode.lengthPenalty = 0.6;
  c.decode.sample = true;
  c.sample.options.temperature = 0.25;
  c.sample.prime = "It was\n";
  c.stepInputs.teacherForcing.schedule = "inverse_sigmoid";
  c.stepInputs.teacherForcing.k = 12;
  c.stepInputs.dropout = 0.3;
  c.train.steps = 123;
  c.train.schedule.type = "cosine";
  c.train.schedule.lr = 3e-3;
  c.train.patience = 4;
  c.train.checkpointDir = "runs/x";
  c.spec = "name: x\nmodel: {}\n";
  c.equations = {{"model.rnn.cell", "gru"}, {"task", "tag"}};
  ModelConfig back = attn::app::fromJson(attn::app::toJson(c), "test");
  EXPECT_EQ(attn::app::toJson(back), attn::app::toJson(c));
  EXPECT_EQ(back.name, c.name);
  EXPECT_EQ(back.data.task, attn::task::Task::Tag);
  EXPECT_EQ(back.data.tokens, attn::data::Tokenize::Char);
  EXPECT_EQ(back.data.seed, c.data.seed);
  EXPECT_TRUE(back.data.reverseSource);
  EXPECT_EQ(back.decode.lengthPenalty, 0.6);
  EXPECT_EQ(back.sample.prime, c.sample.prime);
  EXPECT_EQ(back.stepInputs.teacherForcing.schedule, "inverse_sigmoid");
  EXPECT_EQ(back.train.schedule.lr, 3e-3);
  EXPECT_EQ(back.spec, c.spec);
  // The training loop's options carry the spec into every checkpoint.
  attn::train::TrainOptions t = attn::app::trainOptions(back, "dir");
  EXPECT_EQ(t.steps, 123);
  EXPECT_EQ(t.metadata.at("spec"), c.spec);
  EXPECT_EQ(attn::app::runDirectory(back, ""), "runs/x");
  EXPECT_EQ(attn::app::runDirectory(back, "out"), "out");
}

// A checkpoint's recorded equations against the model's (attn::app::checkEquations): a key
// both record with other values is refused, naming both; keys one side lacks (another attnc
// version's) and checkpoints that record none pass; a damaged record is named.
TEST(AppConfig, CheckpointsOfOtherEquationsAreRefused) {
  ModelConfig c;
  c.name = "tagger";
  c.equations = {{"model.rnn.cell", "gru"}, {"model.rnn.gru_form", "pytorch"}, {"task", "tag"}};
  auto errorOf = [&](const attn::task::Metadata &meta) {
    try {
      attn::app::checkEquations(c, meta, "ck.safetensors");
    } catch (const std::runtime_error &e) {
      return std::string(e.what());
    }
    return std::string("<accepted>");
  };
  attn::task::Metadata meta = attn::app::checkpointMetadata(c);
  EXPECT_EQ(errorOf(meta), "<accepted>");
  EXPECT_EQ(errorOf({}), "<accepted>");
  meta[attn::task::kEquationsKey] =
      R"({"model.rnn.cell": "gru", "model.rnn.gru_form": "seed", "task": "tag"})";
  EXPECT_EQ(errorOf(meta),
            "ck.safetensors: the checkpoint was trained as another model:\n"
            "  model.rnn.gru_form: seed in the checkpoint, pytorch in this model\n"
            "  hint: give a checkpoint trained from the spec tagger was compiled from");
  meta[attn::task::kEquationsKey] = R"({"model.rnn.cell": "gru", "task": "tag", "model.new": "1"})";
  EXPECT_EQ(errorOf(meta), "<accepted>");
  meta[attn::task::kEquationsKey] = "[1, 2";
  EXPECT_NE(errorOf(meta).find("ck.safetensors: the checkpoint's metadata is damaged"),
            std::string::npos)
      << errorOf(meta);
}

TEST(AppConfig, RefusesWhatIsNotAConfiguration) {
  for (const char *text : {"", "[]", "{\"name\": \"x\"}", "{not json"}) {
    try {
      attn::app::fromJson(text, "the embedded configuration");
      ADD_FAILURE() << "accepted: " << text;
    } catch (const std::runtime_error &e) {
      EXPECT_NE(std::string(e.what()).find("the embedded configuration: not a model configuration"),
                std::string::npos)
          << e.what();
    }
  }
  std::string json = attn::app::toJson(ModelConfig{});
  auto at = json.find("\"regress\"");
  ASSERT_NE(at, std::string::npos);
  EXPECT_THROW(attn::app::fromJson(json.replace(at, 9, "\"nonsense\""), "x"), std::runtime_error);
}

} // namespace
