// Corrupt and hostile files: every one must give "<path>: <clear reason>", never a crash.
#include "TestUtil.h"

#include <random>

namespace attn::checkpoint {
namespace {

using testing::safetensorsFile;
using testing::writeBytes;

class CorruptionTest : public testing::ScratchDirTest {
protected:
  // Writes `bytes` to a file and checks that load() rejects it naming the path and `reason`,
  // and that parse() rejects the same bytes in memory (an executable's embedded weights) for
  // the same reason, naming what it was told they are.
  void expectRejected(const std::string &bytes, const std::string &reason) {
    std::string path = file("corrupt.safetensors");
    writeBytes(path, bytes);
    expectLoadError(path, reason);
    try {
      parse(bytes.data(), bytes.size(), "the embedded weights");
      ADD_FAILURE() << "parse accepted bad bytes; expected: " << reason;
    } catch (const std::runtime_error &e) {
      std::string what = e.what();
      EXPECT_EQ(what.rfind("the embedded weights: ", 0), 0u) << what;
      EXPECT_NE(what.find(reason), std::string::npos) << "expected '" << reason << "' in: " << what;
    }
  }

  static void expectLoadError(const std::string &path, const std::string &reason) {
    try {
      load(path);
      ADD_FAILURE() << "load accepted a bad file; expected: " << reason;
    } catch (const std::runtime_error &e) {
      std::string what = e.what();
      EXPECT_EQ(what.rfind(path + ": ", 0), 0u) << what;
      EXPECT_NE(what.find(reason), std::string::npos) << "expected '" << reason << "' in: " << what;
    }
  }

  // A valid 2-tensor file to damage.
  std::string validFile() {
    Checkpoint ckpt;
    ckpt.tensors.emplace_back("a", Tensor::f32({2, 2}, {1, 2, 3, 4}));
    ckpt.tensors.emplace_back("b", Tensor::i32({3}, {5, 6, 7}));
    ckpt.metadata["iteration"] = "3";
    std::string path = file("valid.safetensors");
    save(path, ckpt);
    return testing::readBytes(path);
  }
};

TEST_F(CorruptionTest, MissingFile) {
  expectLoadError(file("nope.safetensors"), "cannot open: No such file or directory");
}

TEST_F(CorruptionTest, DirectoryInsteadOfFile) { expectLoadError(dir_, "not a regular file"); }

TEST_F(CorruptionTest, TruncatedFile) {
  std::string valid = validFile();
  expectRejected("", "file is too small (0 bytes)");
  expectRejected(valid.substr(0, 5), "file is too small (5 bytes)");
  expectRejected(valid.substr(0, 8), "exceeds the file size (8 bytes)");
  expectRejected(valid.substr(0, 40), "exceeds the file size (40 bytes)");
  // Header intact, data cut short: the last tensor no longer fits.
  expectRejected(valid.substr(0, valid.size() - 1), "out of range");
  // Every other cut is rejected too.
  for (size_t n = 0; n < valid.size(); ++n) {
    writeBytes(file("cut.safetensors"), valid.substr(0, n));
    EXPECT_THROW(load(file("cut.safetensors")), std::runtime_error) << "cut at " << n;
  }
}

TEST_F(CorruptionTest, HeaderLengthLargerThanTheFile) {
  expectRejected(testing::lengthPrefix(1000) + "{}", "header length 1000 exceeds the file size (10 bytes)");
  expectRejected(testing::lengthPrefix(~uint64_t(0)) + "{}", "exceeds the limit");
  expectRejected(testing::lengthPrefix(uint64_t(1) << 40) + "{}", "exceeds the limit");
}

// The header is parsed by nlohmann-json (its reasons, at the byte they concern); what a
// safetensors header may not hold beyond JSON's grammar is attnc's to refuse.
TEST_F(CorruptionTest, MalformedJson) {
  expectRejected(safetensorsFile("", ""), "malformed JSON header: at byte 0: syntax error while parsing value - unexpected end of input");
  expectRejected(safetensorsFile("{\"a\": {", ""), "malformed JSON header");
  expectRejected(safetensorsFile("{\"a\":1,}", ""), "at byte 7: syntax error while parsing object key");
  expectRejected(safetensorsFile("{\"a\" 1}", ""), "expected ':'");
  expectRejected(safetensorsFile("{} x", ""), "expected end of input");
  expectRejected(safetensorsFile("{\"a\":1.5}", ""), "only integers are supported");
  expectRejected(safetensorsFile("{\"a\":true}", ""), "true, false and null are not supported");
  expectRejected(safetensorsFile("{\"a\":\"\\q\"}", ""), "forbidden character after backslash");
  expectRejected(safetensorsFile("{\"a\":\"\xff\"}", ""), "invalid string: ill-formed UTF-8 byte");
  expectRejected(safetensorsFile("{\"a\":1,\"a\":2}", ""), "duplicate key \"a\"");
  expectRejected(safetensorsFile(std::string(100000, '['), ""), "nesting deeper than");
  expectRejected(safetensorsFile(std::string("{\0}", 3), ""), "at byte 1: syntax error while parsing object key");
  expectRejected(safetensorsFile("[1, 2]", ""), "header must be a JSON object, got an array");
}

TEST_F(CorruptionTest, BadTensorEntries) {
  const std::string data(8, '\0');
  auto entry = [](const std::string &body) { return "{\"t\":{" + body + "}}"; };
  expectRejected(safetensorsFile(entry("\"dtype\":\"F16\",\"shape\":[4],\"data_offsets\":[0,8]"), data),
                 "tensor \"t\": unsupported dtype \"F16\" (only F32 and I32 are supported)");
  expectRejected(safetensorsFile(entry("\"shape\":[2],\"data_offsets\":[0,8]"), data),
                 "tensor \"t\": missing \"dtype\"");
  expectRejected(safetensorsFile(entry("\"dtype\":\"F32\",\"shape\":2,\"data_offsets\":[0,8]"), data),
                 "\"shape\" must be an array, got an integer");
  expectRejected(safetensorsFile(entry("\"dtype\":\"F32\",\"shape\":[-2],\"data_offsets\":[0,8]"), data),
                 "shape must hold non-negative integers");
  expectRejected(safetensorsFile(entry("\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0]"), data),
                 "data_offsets must be two non-negative integers");
  expectRejected(safetensorsFile(entry("\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[8,0]"), data),
                 "end before they begin");
  expectRejected(safetensorsFile(entry("\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8],\"x\":1"), data),
                 "unknown key \"x\"");
  expectRejected(safetensorsFile(entry("\"dtype\":\"F32\",\"shape\":[4294967296,4294967296,0],"
                                       "\"data_offsets\":[0,0]"),
                                 ""),
                 "shape is too large");
  expectRejected(safetensorsFile("{\"t\":[]}", data), "tensor \"t\": expected an object, got an array");
  expectRejected(safetensorsFile("{\"__metadata__\":{\"k\":1}}", ""),
                 "\"__metadata__\" value for \"k\" must be a string");
}

TEST_F(CorruptionTest, OffsetsOutOfRangeOverlappingOrMismatched) {
  const std::string f32x2 = "\"dtype\":\"F32\",\"shape\":[2],";
  expectRejected(safetensorsFile("{\"t\":{" + f32x2 + "\"data_offsets\":[0,8]}}", std::string(4, '\0')),
                 "tensor \"t\": data_offsets [0, 8] are out of range: the data section has 4 bytes");
  expectRejected(safetensorsFile("{\"a\":{" + f32x2 + "\"data_offsets\":[0,8]},"
                                 "\"b\":{" + f32x2 + "\"data_offsets\":[4,12]}}",
                                 std::string(12, '\0')),
                 "tensor \"b\" [4, 12] overlaps tensor \"a\" [0, 8]");
  expectRejected(safetensorsFile("{\"a\":{" + f32x2 + "\"data_offsets\":[0,8]},"
                                 "\"b\":{" + f32x2 + "\"data_offsets\":[0,8]}}",
                                 std::string(8, '\0')),
                 "overlaps");
  expectRejected(safetensorsFile("{\"t\":{\"dtype\":\"F32\",\"shape\":[3],\"data_offsets\":[0,8]}}",
                                 std::string(8, '\0')),
                 "tensor \"t\": shape [3] of F32 needs 12 bytes but data_offsets [0, 8] span 8");
  expectRejected(safetensorsFile("{\"t\":{" + f32x2 + "\"data_offsets\":[4,12]}}", std::string(12, '\0')),
                 "bytes [0, 4) of the data section belong to no tensor");
  expectRejected(safetensorsFile("{\"t\":{" + f32x2 + "\"data_offsets\":[0,8]}}", std::string(9, '\0')),
                 "the data section has 9 bytes but the tensors cover 8");
}

// Tensors listed out of offset order still load, in offset (file) order.
TEST_F(CorruptionTest, AcceptsHeaderOrderDifferentFromDataOrder) {
  std::string header = "{\"b\":{\"dtype\":\"I32\",\"shape\":[1],\"data_offsets\":[4,8]},"
                       "\"a\":{\"dtype\":\"I32\",\"shape\":[1],\"data_offsets\":[0,4]}}  ";
  std::string path = file("reordered.safetensors");
  writeBytes(path, safetensorsFile(header, std::string("\x01\0\0\0\x02\0\0\0", 8)));
  Checkpoint ckpt = load(path);
  ASSERT_EQ(ckpt.tensors.size(), 2u);
  EXPECT_EQ(ckpt.tensors[0].first, "a");
  EXPECT_EQ(ckpt.tensors[1].second.data<int32_t>()[0], 2);
}

// A byte of a tensor's data changed (a flipped bit on disk, weights overwritten in an
// executable): the CRC-32 written with it names the tensor, from a file or from memory. The
// metadata handed back does not hold the checksums (a re-save writes them anew).
TEST_F(CorruptionTest, DamagedTensorDataIsNamed) {
  std::string valid = validFile(), bytes = valid;
  bytes[bytes.size() - 1] ^= 0x10; // the last byte of "b"
  expectRejected(bytes, "tensor \"b\": its data does not match the checksum written with it");
  std::string path = file("damaged.safetensors");
  writeBytes(path, valid);
  Checkpoint ckpt = load(path);
  EXPECT_EQ(ckpt.metadata, (std::map<std::string, std::string>{{"iteration", "3"}}));
  EXPECT_EQ(loadMetadata(path), ckpt.metadata);
}

// A file written without checksums (before attnc wrote them, or by another tool) still loads.
TEST_F(CorruptionTest, FilesWithoutChecksumsLoad) {
  std::string header = "{\"a\":{\"dtype\":\"I32\",\"shape\":[1],\"data_offsets\":[0,4]}}";
  header.resize((header.size() + 7) / 8 * 8, ' ');
  std::string path = file("old.safetensors");
  writeBytes(path, safetensorsFile(header, std::string("\x05\0\0\0", 4)));
  Checkpoint ckpt = load(path);
  ASSERT_EQ(ckpt.tensors.size(), 1u);
  EXPECT_EQ(ckpt.tensors[0].second.data<int32_t>()[0], 5);
}

// Random byte flips of a valid file: load() either succeeds or throws, it never crashes.
TEST_F(CorruptionTest, RandomMutationsNeverCrash) {
  std::string valid = validFile();
  std::mt19937 rng(1234);
  std::string path = file("fuzz.safetensors");
  int rejected = 0;
  for (int round = 0; round < 2000; ++round) {
    std::string bytes = valid;
    int flips = 1 + static_cast<int>(rng() % 4);
    for (int i = 0; i < flips; ++i)
      bytes[rng() % bytes.size()] = static_cast<char>(rng() & 0xFF);
    writeBytes(path, bytes);
    try {
      load(path);
    } catch (const std::runtime_error &) {
      ++rejected;
    }
  }
  EXPECT_GT(rejected, 0);
}

} // namespace
} // namespace attn::checkpoint
