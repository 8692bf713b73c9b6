// The convolutional encoder-decoder end to end, as a user runs it (attnc subprocesses):
// models/dates-convs2s.yaml reaches >= 95% exact match on its 500 held-out dates; decoding
// with the step cache (each decoder block's last K-1 inputs) gives exactly the tokens of
// decoding without it (--no-cache: @decode_full over the whole prefix at every step), for
// greedy decoding and beam search, and by the programs of decode.buckets; --plots draws any
// decoder block's attention.
#include "AttncProcess.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <regex>

namespace {

using e2e::attnc;
using e2e::exactMatch;

// The model, trained once by the ctest fixture e2e-conv-dates-train (tests/e2e/CMakeLists.txt),
// or here when the binary runs alone. The tests only read it.
class DatesConv : public ::testing::Test {
protected:
  static void SetUpTestSuite() {
    dir = std::string(ATTN_E2E_DIR) + "/conv/dates";
    if (std::ifstream(dir + "/best.safetensors").good())
      status = 0;
    else
      status = attnc("train " + std::string(ATTN_SOURCE_DIR) + "/models/dates-convs2s.yaml --out " +
                         e2e::scratch("conv", "dates"),
                     &log);
  }
  // Inputs in every format the dates data writes (the cached and uncached decodings must
  // agree on whatever they give).
  static std::string inputs() {
    return "3 March 2021\n03/03/21\nWednesday, March 3rd 2021\nNov 30, 2019\n"
           "November 30, 1999\n30.11.99\nSat, 1 Jan 2000\n12 Dec 1987\n7/4/76\n"
           "Tuesday, March 5th 2019\n";
  }
  // The outputs without the log-probabilities of n-best lines (the two computations agree on
  // those only to float rounding).
  static std::string translate(const std::string &flags) {
    std::string out;
    EXPECT_EQ(e2e::attncWithInput("translate --ckpt " + dir + " " + flags, inputs(), dir, &out), 0)
        << out;
    return std::regex_replace(out, std::regex(" \\|\\|\\| log_prob=.*"), "");
  }
  static std::string dir, log;
  static int status;
};
std::string DatesConv::dir, DatesConv::log;
int DatesConv::status = -1;

TEST_F(DatesConv, ReachesExactMatchOnHeldOutDates) {
  ASSERT_EQ(status, 0) << log;
  std::string out;
  ASSERT_EQ(attnc("eval --ckpt " + dir, &out), 0) << out;
  EXPECT_NE(out.find("greedy decoding of 500 validation pairs"), std::string::npos) << out;
  EXPECT_GE(exactMatch(out), 95.0) << out;
}

TEST_F(DatesConv, CachedGreedyDecodingEqualsUncached) {
  ASSERT_EQ(status, 0) << log;
  std::string cached = translate(""), uncached = translate("--no-cache");
  EXPECT_EQ(std::count(cached.begin(), cached.end(), '\n'), 10) << cached;
  EXPECT_NE(cached.find("2021-03-03"), std::string::npos) << cached;
  EXPECT_EQ(cached, uncached);
}

TEST_F(DatesConv, CachedBeamSearchEqualsUncached) {
  ASSERT_EQ(status, 0) << log;
  EXPECT_EQ(translate("--beam 4 --nbest 2"), translate("--beam 4 --nbest 2 --no-cache"));
}

// decode.buckets: each line decoded by the shortest program that holds it (the programs
// share the encoder's position table), the same tokens as the full-length program's.
TEST_F(DatesConv, BucketsDecodeTheSameTokens) {
  ASSERT_EQ(status, 0) << log;
  EXPECT_EQ(translate("--set decode.buckets=[12,20]"), translate(""));
}

// Every decoder block attends; decode.attention_layer chooses the one plotted. The first
// block's weights differ from the last's, so the plots do too.
TEST_F(DatesConv, PlotsEachDecoderBlocksAttention) {
  ASSERT_EQ(status, 0) << log;
  auto plot = [&](int layer) {
    std::string plots = e2e::scratch("conv", "plots" + std::to_string(layer)), out;
    EXPECT_EQ(e2e::attncWithInput("translate --ckpt " + dir + " --plots " + plots +
                                      " --set decode.attention_layer=" + std::to_string(layer),
                                  "3 March 2021\n", plots, &out),
              0)
        << out;
    std::ifstream png(plots + "/attention-0.png", std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(png)), std::istreambuf_iterator<char>());
    EXPECT_EQ(bytes.substr(1, 3), "PNG") << out;
    return bytes;
  };
  EXPECT_NE(plot(1), plot(3));
}

// A Transformer's head does not exist here: the error says so before anything runs.
TEST_F(DatesConv, RefusesAnAttentionHead) {
  ASSERT_EQ(status, 0) << log;
  std::string out;
  EXPECT_NE(e2e::attncWithInput("translate --ckpt " + dir + " --set decode.attention_head=2",
                                "3 March 2021\n", dir, &out),
            0);
  EXPECT_NE(out.find("decode.attention_head chooses a Transformer's head"), std::string::npos)
      << out;
}

} // namespace
