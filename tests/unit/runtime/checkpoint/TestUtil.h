// Shared helpers for the checkpoint tests: a scratch directory per test and raw file access.
#ifndef ATTN_TESTS_CHECKPOINT_TESTUTIL_H
#define ATTN_TESTS_CHECKPOINT_TESTUTIL_H

#include "attn/checkpoint/Checkpoint.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

namespace attn::checkpoint::testing {

// Gives each test a fresh directory under the GoogleTest temp dir and removes it afterwards.
class ScratchDirTest : public ::testing::Test {
protected:
  void SetUp() override {
    std::string tmpl = ::testing::TempDir() + "attn-ckpt-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override {
    std::error_code ec;
    std::filesystem::permissions(dir_, std::filesystem::perms::owner_all,
                                 std::filesystem::perm_options::add, ec);
    std::filesystem::remove_all(dir_, ec);
  }
  std::string file(const std::string &name) const { return dir_ + "/" + name; }

  std::string dir_;
};

inline std::string readBytes(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

inline void writeBytes(const std::string &path, const std::string &bytes) {
  // A fresh file rather than a truncated one: ext4 flushes truncated-and-rewritten files on close.
  std::filesystem::remove(path);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// The 8-byte little-endian length prefix of a safetensors file.
inline std::string lengthPrefix(uint64_t n) {
  std::string bytes(8, '\0');
  for (int i = 0; i < 8; ++i)
    bytes[i] = static_cast<char>((n >> (8 * i)) & 0xFF);
  return bytes;
}

// A safetensors file with the given header text (unpadded) and data bytes.
inline std::string safetensorsFile(const std::string &header, const std::string &data) {
  return lengthPrefix(header.size()) + header + data;
}

} // namespace attn::checkpoint::testing

#endif // ATTN_TESTS_CHECKPOINT_TESTUTIL_H
