// Program::call over a hand-written entry function standing in for compiled code.
#include "attn/Program.h"

#include <gtest/gtest.h>

#include <stdexcept>

namespace {

// args: params (bias [3]), inputs (x [2, 3]), outputs (y [2, 3]); y = x + 1 + bias.
void add_one(void **args) {
  const float *bias = static_cast<const float *>(args[0]);
  const float *x = static_cast<const float *>(args[1]);
  float *y = static_cast<float *>(args[2]);
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      y[i * 3 + j] = x[i * 3 + j] + 1.0f + bias[j];
}

const attn_tensor_info kParams[] = {{"bias", ATTN_F32, 1, {3}, "zeros", 0.f}};
const attn_tensor_info kInputs[] = {{"x", ATTN_F32, 2, {2, 3}, nullptr, 0.f}};
const attn_tensor_info kOutputs[] = {{"y", ATTN_F32, 2, {2, 3}, nullptr, 0.f}};
const attn_entry_info kEntries[] = {{"forward", add_one, 1, kInputs, 1, kOutputs}};
const attn_program_info kProgram = {"tiny", 1, kParams, 1, kEntries};

TEST(Program, Lookup) {
  attn::Program p(&kProgram);
  EXPECT_EQ(p.name(), "tiny");
  EXPECT_NE(p.findEntry("forward"), nullptr);
  EXPECT_EQ(p.findEntry("train"), nullptr);
  EXPECT_EQ(p.entryNames(), std::vector<std::string>{"forward"});
  EXPECT_THROW(p.entry("train"), std::runtime_error);
}

TEST(Program, Call) {
  attn::Program p(&kProgram);
  attn::Tensor bias = attn::Tensor::f32({3}, {10, 20, 30});
  attn::Tensor x = attn::Tensor::f32({2, 3}, {1, 2, 3, 4, 5, 6});
  std::vector<attn::Tensor> out = p.call("forward", {bias}, {x});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].shape(), (std::vector<int64_t>{2, 3}));
  const float want[] = {12, 23, 34, 15, 26, 37};
  for (int i = 0; i < 6; ++i)
    EXPECT_EQ(out[0].data<float>()[i], want[i]);
  EXPECT_EQ(out[0].str(), "f32[2, 3] [[12, 23, 34], [15, 26, 37]]");
}

TEST(Program, ShapeMismatchNamesEverything) {
  attn::Program p(&kProgram);
  attn::Tensor bias(ATTN_F32, {3});
  attn::Tensor x(ATTN_F32, {2, 4});
  try {
    p.call("forward", {bias}, {x});
    FAIL() << "expected an exception";
  } catch (const std::runtime_error &e) {
    EXPECT_STREQ(e.what(), "attn: model 'tiny', entry 'forward': input 'x' is f32[2, 4], "
                           "expected f32[2, 3]");
  }
}

TEST(Program, DtypeAndCountMismatch) {
  attn::Program p(&kProgram);
  attn::Tensor x(ATTN_F32, {2, 3});
  try {
    p.call("forward", {attn::Tensor(ATTN_I32, {3})}, {x});
    FAIL() << "expected an exception";
  } catch (const std::runtime_error &e) {
    EXPECT_STREQ(e.what(), "attn: model 'tiny', entry 'forward': parameter 'bias' is i32[3], "
                           "expected f32[3]");
  }
  EXPECT_THROW(p.call("forward", {}, {x}), std::runtime_error);
}

// A program compiled for a device is refused, with the reason, where it cannot run: this test
// links no CUDA runtime (the weak probe is null), and no runtime knows a made-up device.
TEST(Program, RefusesADeviceItCannotRun) {
  auto message = [](const char *device) {
    attn_program_info info = kProgram;
    info.device = device;
    try {
      attn::Program p(&info);
    } catch (const std::runtime_error &e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_EQ(message(nullptr), "");
  EXPECT_NE(message("cuda").find("'tiny' was compiled with --device cuda and cannot run here: it "
                                 "was linked without attnc's CUDA runtime"),
            std::string::npos)
      << message("cuda");
  EXPECT_NE(message("tpu").find("this runtime knows no device 'tpu'"), std::string::npos)
      << message("tpu");
}

TEST(Tensor, ValueSemanticsAndAlignment) {
  attn::Tensor a = attn::Tensor::f32({2, 2}, {1, 2, 3, 4});
  EXPECT_EQ(reinterpret_cast<uintptr_t>(a.raw()) % 64, 0u);
  attn::Tensor b = a;
  b.data<float>()[0] = 9;
  EXPECT_EQ(a.data<float>()[0], 1);
  attn::Tensor c = std::move(b);
  EXPECT_EQ(c.data<float>()[0], 9);
  EXPECT_EQ(b.numel(), 0);
  EXPECT_THROW(a.data<int32_t>(), std::runtime_error);
  EXPECT_EQ(attn::Tensor(ATTN_I32, {}).numel(), 1);
  EXPECT_EQ(attn::Tensor::f32({5}, {1, 2, 3, 4, 5}).str(2), "f32[5] [1, 2, ...]");
}

} // namespace
