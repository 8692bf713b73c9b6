// save() under SIGKILL: a child process saves checkpoints in a loop, the parent kills it at random
// moments, and after each kill the file must load and be entirely one iteration's checkpoint.
#include "TestUtil.h"

#include <chrono>
#include <csignal>
#include <random>
#include <thread>

#include <sys/wait.h>
#include <unistd.h>

namespace attn::checkpoint {
namespace {

// ~3 MB per checkpoint: large enough that a kill often lands in the middle of a write.
constexpr int64_t kCounterElements = 1 << 19; // i32, 2 MB
constexpr int64_t kWeightElements = 1 << 18;  // f32, 1 MB

int32_t counterValue(uint64_t iteration, int64_t k) {
  return static_cast<int32_t>(static_cast<uint32_t>(iteration * 31 + static_cast<uint64_t>(k)));
}
float weightValue(uint64_t iteration, int64_t k) {
  return static_cast<float>((iteration * 7 + static_cast<uint64_t>(k)) % 65536);
}

// Every element is derived from the iteration, so a mix of two saves cannot pass verify().
Checkpoint makeCheckpoint(uint64_t iteration) {
  Tensor counter(ATTN_I32, {kCounterElements});
  Tensor weights(ATTN_F32, {512, kWeightElements / 512});
  for (int64_t k = 0; k < kCounterElements; ++k)
    counter.data<int32_t>()[k] = counterValue(iteration, k);
  for (int64_t k = 0; k < kWeightElements; ++k)
    weights.data<float>()[k] = weightValue(iteration, k);
  Checkpoint ckpt;
  ckpt.tensors.emplace_back("counter", std::move(counter));
  ckpt.tensors.emplace_back("weights", std::move(weights));
  ckpt.metadata["iteration"] = std::to_string(iteration);
  return ckpt;
}

// Checks that `ckpt` is exactly makeCheckpoint(its metadata's iteration); returns the iteration.
uint64_t verify(const Checkpoint &ckpt) {
  uint64_t iteration = std::stoull(ckpt.metadata.at("iteration"));
  const Tensor *counter = ckpt.find("counter");
  const Tensor *weights = ckpt.find("weights");
  EXPECT_TRUE(counter && weights);
  if (!counter || !weights)
    return iteration;
  EXPECT_EQ(counter->numel(), kCounterElements);
  EXPECT_EQ(weights->numel(), kWeightElements);
  int64_t badCounters = 0, badWeights = 0;
  for (int64_t k = 0; k < counter->numel(); ++k)
    badCounters += counter->data<int32_t>()[k] != counterValue(iteration, k);
  for (int64_t k = 0; k < weights->numel(); ++k)
    badWeights += weights->data<float>()[k] != weightValue(iteration, k);
  EXPECT_EQ(badCounters, 0) << "iteration " << iteration;
  EXPECT_EQ(badWeights, 0) << "iteration " << iteration;
  return iteration;
}

// Saves iterations first, first + 1, ... until killed, writing one byte to `progressFd` after
// each completed save. Never returns.
[[noreturn]] void saveForever(const std::string &path, uint64_t first, int progressFd) {
  for (uint64_t iteration = first;; ++iteration) {
    try {
      save(path, makeCheckpoint(iteration));
    } catch (...) {
      ::_exit(1); // the parent reports a non-SIGKILL exit
    }
    if (::write(progressFd, "s", 1) != 1)
      ::_exit(1);
  }
}

// Kills `child` with SIGKILL and reaps it; false if it had already exited on its own.
bool killAndReap(pid_t child) {
  ::kill(child, SIGKILL);
  int status = 0;
  if (::waitpid(child, &status, 0) != child)
    return false;
  return WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL;
}

class AtomicityTest : public testing::ScratchDirTest {};

TEST_F(AtomicityTest, SigkillDuringSaveLeavesOldOrNewCheckpoint) {
  const std::string path = file("ckpt.safetensors");
  save(path, makeCheckpoint(0));
  uint64_t lastIteration = 0;

  // A save of ~3 MB with its fsyncs takes tens of milliseconds, so a random delay alone mostly
  // kills the first save. In odd rounds the parent first waits for one completed save, so kills
  // also hit a save that replaces a file the child itself wrote, and "new" outcomes are certain.
  std::mt19937 rng(20240607);
  std::uniform_int_distribution<int> delayUs(0, 30000);
  constexpr int kRounds = 20;
  int advanced = 0, killedMidSave = 0;
  for (int round = 1; round <= kRounds; ++round) {
    int progress[2];
    ASSERT_EQ(::pipe(progress), 0);
    pid_t child = ::fork();
    ASSERT_GE(child, 0) << "fork failed";
    if (child == 0) {
      ::close(progress[0]);
      saveForever(path, static_cast<uint64_t>(round) * 1000000, progress[1]);
    }
    ::close(progress[1]);
    bool waitForSave = round % 2 == 1;
    char byte;
    bool saved = waitForSave && ::read(progress[0], &byte, 1) == 1;
    std::this_thread::sleep_for(std::chrono::microseconds(delayUs(rng)));
    bool killed = killAndReap(child);
    ::close(progress[0]);
    ASSERT_TRUE(killed) << "the saving child failed on its own in round " << round;
    if (waitForSave) {
      ASSERT_TRUE(saved) << "no save completed in round " << round;
    }
    killedMidSave += std::filesystem::exists(path + ".tmp-" + std::to_string(child));

    Checkpoint loaded;
    ASSERT_NO_THROW(loaded = load(path)) << "round " << round;
    uint64_t iteration = verify(loaded);
    bool isNew = iteration / 1000000 == static_cast<uint64_t>(round);
    // Fully old (the previous survivor) or fully new (this round's child).
    EXPECT_TRUE(iteration == lastIteration || isNew)
        << "round " << round << " loaded iteration " << iteration;
    if (waitForSave) {
      EXPECT_TRUE(isNew) << "round " << round << ": a completed save was lost";
    }
    advanced += isNew;
    lastIteration = iteration;
  }
  std::cout << "[          ] " << advanced << " of " << kRounds << " rounds left a new checkpoint, "
            << killedMidSave << " kills interrupted a save\n";

  // Leftover temp files (from kills mid-write) are the only other files, and load() ignores them.
  for (const auto &entry : std::filesystem::directory_iterator(dir_)) {
    std::string name = entry.path().filename().string();
    EXPECT_TRUE(name == "ckpt.safetensors" || name.rfind("ckpt.safetensors.tmp-", 0) == 0) << name;
  }
  EXPECT_EQ(verify(load(path)), lastIteration);
}

} // namespace
} // namespace attn::checkpoint
