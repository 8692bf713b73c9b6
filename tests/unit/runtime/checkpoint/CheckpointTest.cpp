// Round trips, the exact byte layout of a tiny file, and where save() may and may not write.
#include "TestUtil.h"

#include <cmath>
#include <cstring>
#include <limits>

#include <unistd.h>

namespace attn::checkpoint {
namespace {

using testing::readBytes;

class CheckpointTest : public testing::ScratchDirTest {};

// Element-wise bit equality (so NaN payloads and -0.0 count too).
void expectSameTensor(const std::string &name, const Tensor &expected, const Tensor &actual) {
  SCOPED_TRACE(name);
  EXPECT_EQ(actual.dtype(), expected.dtype());
  EXPECT_EQ(actual.shape(), expected.shape());
  ASSERT_EQ(actual.nbytes(), expected.nbytes());
  if (expected.nbytes() > 0) {
    EXPECT_EQ(std::memcmp(actual.raw(), expected.raw(), expected.nbytes()), 0);
  }
}

std::vector<float> ramp(size_t n, float scale) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i)
    v[i] = static_cast<float>(i) * scale - 1.5f;
  return v;
}

// A spec-like YAML text: newlines, quotes, backslashes, tabs, a control character, non-ASCII.
std::string yamlSpec() {
  std::string spec = "model:\n  name: \"tiny \\\"rnn\\\"\"\n  path: 'C:\\models\\x'\n"
                     "\tlayers: [dense, rnn_cell]\n  note: caf\xc3\xa9 \xe2\x9c\x93 \xf0\x9f\x98\x80\n"
                     "  bell: \x01\x1f end\n";
  for (int i = 0; i < 2000; ++i) // long: a whole spec
    spec += "  - {layer: " + std::to_string(i) + ", units: 64}\n";
  return spec;
}

TEST_F(CheckpointTest, RoundTripsTensorsOfEveryRankAndMetadata) {
  Checkpoint ckpt;
  std::vector<float> special = {0.0f, -0.0f, std::numeric_limits<float>::infinity(),
                                std::numeric_limits<float>::quiet_NaN(), 1e-45f, 3.4e38f};
  ckpt.tensors.emplace_back("scalar", Tensor::f32({}, {42.5f}));
  ckpt.tensors.emplace_back("empty", Tensor(ATTN_F32, {0}));
  ckpt.tensors.emplace_back("ids", Tensor::i32({5}, {0, -1, 7, INT32_MAX, INT32_MIN}));
  ckpt.tensors.emplace_back("rnn.w_ax", Tensor::f32({2, 3}, ramp(6, 0.25f)));
  ckpt.tensors.emplace_back("empty_i32", Tensor(ATTN_I32, {2, 0, 3}));
  ckpt.tensors.emplace_back("special", Tensor::f32({6}, special));
  ckpt.tensors.emplace_back("cube", Tensor::f32({2, 3, 4}, ramp(24, 0.5f)));
  ckpt.tensors.emplace_back("i32.rank4", Tensor::i32({1, 2, 1, 3}, {1, 2, 3, 4, 5, 6}));
  ckpt.tensors.emplace_back("we\"ird\\ name\n", Tensor::i32({1}, {9}));
  ckpt.metadata["spec"] = yamlSpec();
  ckpt.metadata["iteration"] = "1200";
  ckpt.metadata["key \"with\" quotes\\"] = "";

  std::string path = file("model.safetensors");
  save(path, ckpt);
  Checkpoint loaded = load(path);

  EXPECT_EQ(loaded.metadata, ckpt.metadata);
  ASSERT_EQ(loaded.tensors.size(), ckpt.tensors.size());
  for (size_t i = 0; i < ckpt.tensors.size(); ++i) {
    EXPECT_EQ(loaded.tensors[i].first, ckpt.tensors[i].first); // file order is kept
    expectSameTensor(ckpt.tensors[i].first, ckpt.tensors[i].second, loaded.tensors[i].second);
  }
  ASSERT_NE(loaded.find("rnn.w_ax"), nullptr);
  EXPECT_EQ(loaded.find("rnn.w_ax")->data<float>()[5], 5 * 0.25f - 1.5f);
  EXPECT_EQ(loaded.find("scalar")->rank(), 0);
  EXPECT_EQ(loaded.find("missing"), nullptr);

  // The same bytes parsed from memory give the same checkpoint.
  std::string bytes = readBytes(path);
  Checkpoint parsed = parse(bytes.data(), bytes.size(), "memory");
  EXPECT_EQ(parsed.metadata, ckpt.metadata);
  ASSERT_EQ(parsed.tensors.size(), ckpt.tensors.size());
  for (size_t i = 0; i < ckpt.tensors.size(); ++i)
    expectSameTensor(ckpt.tensors[i].first, ckpt.tensors[i].second, parsed.tensors[i].second);

  // The data section starts 8-byte aligned, as the safetensors writer pads it.
  uint64_t n = 0;
  for (int i = 0; i < 8; ++i)
    n |= static_cast<uint64_t>(static_cast<unsigned char>(bytes[i])) << (8 * i);
  EXPECT_EQ((8 + n) % 8, 0u);
}

TEST_F(CheckpointTest, EmptyCheckpointRoundTrips) {
  std::string path = file("empty.safetensors");
  save(path, Checkpoint{});
  EXPECT_EQ(readBytes(path), testing::lengthPrefix(8) + "{}      ");
  Checkpoint loaded = load(path);
  EXPECT_TRUE(loaded.tensors.empty());
  EXPECT_TRUE(loaded.metadata.empty());
}

// The exact bytes, computed by hand from the safetensors spec.
TEST_F(CheckpointTest, WritesTheSafetensorsByteLayout) {
  Checkpoint ckpt;
  ckpt.tensors.emplace_back("x", Tensor::f32({2}, {1.0f, -2.0f}));
  ckpt.tensors.emplace_back("n", Tensor::i32({}, {7}));
  ckpt.metadata["k"] = "v";
  std::string path = file("tiny.safetensors");
  save(path, ckpt);

  // 187 bytes of JSON, padded with 5 spaces to 192 = 0xc0. The metadata gains each tensor's
  // CRC-32 (zlib's: 1.0f, -2.0f -> c3872656; 7 -> bc93e7a5, as Python's zlib.crc32 gives).
  const std::string json =
      "{\"__metadata__\":{\"k\":\"v\",\"attn.crc32\":"
      "\"{\\\"x\\\":\\\"c3872656\\\",\\\"n\\\":\\\"bc93e7a5\\\"}\"},"
      "\"x\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
      "\"n\":{\"dtype\":\"I32\",\"shape\":[],\"data_offsets\":[8,12]}}     ";
  ASSERT_EQ(json.size(), 192u);
  const std::string expected = std::string("\xc0\0\0\0\0\0\0\0", 8) + json +
                               std::string("\x00\x00\x80\x3f" // 1.0f
                                           "\x00\x00\x00\xc0" // -2.0f
                                           "\x07\x00\x00\x00", // 7
                                           12);
  EXPECT_EQ(readBytes(path), expected);
}

TEST_F(CheckpointTest, OverwritesAndLeavesNoTempFile) {
  std::string path = file("ckpt.safetensors");
  Checkpoint big;
  big.tensors.emplace_back("w", Tensor(ATTN_F32, {1000}));
  save(path, big);
  Checkpoint small;
  small.tensors.emplace_back("w", Tensor::f32({1}, {3.0f}));
  save(path, small);
  EXPECT_EQ(load(path).find("w")->numel(), 1);
  size_t files = 0;
  for (const auto &entry : std::filesystem::directory_iterator(dir_)) {
    EXPECT_EQ(entry.path().filename(), "ckpt.safetensors");
    ++files;
  }
  EXPECT_EQ(files, 1u);
}

TEST_F(CheckpointTest, CreatesMissingParentDirectories) {
  std::string path = file("a/b/c/ckpt.safetensors");
  Checkpoint ckpt;
  ckpt.tensors.emplace_back("w", Tensor::f32({2}, {1.0f, 2.0f}));
  save(path, ckpt);
  EXPECT_EQ(load(path).find("w")->data<float>()[1], 2.0f);
}

// Every save error names the path and leaves no temp file behind.
void expectSaveError(const std::string &path, const Checkpoint &ckpt, const std::string &reason) {
  try {
    save(path, ckpt);
    ADD_FAILURE() << "save(" << path << ") did not throw";
  } catch (const std::runtime_error &e) {
    std::string what = e.what();
    EXPECT_EQ(what.rfind(path + ": ", 0), 0u) << what;
    EXPECT_NE(what.find(reason), std::string::npos) << what;
  }
  EXPECT_FALSE(std::filesystem::exists(path + ".tmp-" + std::to_string(::getpid())));
}

TEST_F(CheckpointTest, SaveIntoUnwritableLocationsThrowsWithThePath) {
  Checkpoint ckpt;
  ckpt.tensors.emplace_back("w", Tensor::f32({1}, {1.0f}));
  testing::writeBytes(file("plain"), "not a directory");
  // A regular file where a directory should be: fails even for root.
  expectSaveError(file("plain/sub/ckpt.safetensors"), ckpt, "cannot create directory");
  // The target is a directory: the temp file is written, the rename fails, the temp file goes.
  std::filesystem::create_directories(file("isdir"));
  expectSaveError(file("isdir"), ckpt, "cannot rename");
}

TEST_F(CheckpointTest, SaveIntoReadOnlyDirectoryThrowsWithThePath) {
  Checkpoint ckpt;
  ckpt.tensors.emplace_back("w", Tensor::f32({1}, {1.0f}));
  if (::geteuid() == 0)
    GTEST_SKIP() << "running as root: directory permissions are not enforced";
  std::filesystem::create_directories(file("readonly"));
  std::filesystem::permissions(file("readonly"), std::filesystem::perms::owner_read |
                                                     std::filesystem::perms::owner_exec);
  expectSaveError(file("readonly/ckpt.safetensors"), ckpt, "Permission denied");
}

TEST_F(CheckpointTest, RejectsCheckpointsThatCouldNotBeReadBack) {
  std::string path = file("bad.safetensors");
  Checkpoint duplicate;
  duplicate.tensors.emplace_back("w", Tensor::f32({1}, {1.0f}));
  duplicate.tensors.emplace_back("w", Tensor::f32({1}, {2.0f}));
  expectSaveError(path, duplicate, "duplicate tensor name \"w\"");

  Checkpoint reserved;
  reserved.tensors.emplace_back("__metadata__", Tensor::f32({1}, {1.0f}));
  expectSaveError(path, reserved, "reserved");

  Checkpoint badUtf8;
  badUtf8.metadata["k"] = "\xff\xfe";
  expectSaveError(path, badUtf8, "not valid UTF-8");
  EXPECT_FALSE(std::filesystem::exists(path));
}

} // namespace
} // namespace attn::checkpoint
