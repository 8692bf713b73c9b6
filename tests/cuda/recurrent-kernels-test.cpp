// The GPU kernels of one recurrent step's gates (attn/cuda/Kernels.h) and the sequence loop
// over them (attn/cuda/Recurrent.h) on a GPU, against the cells' and layers' definitions in
// double and their central differences (RecurrentReference.h), every output poisoned with NaN
// first. The seed GRU's GEMMs between its kernels run on the host
// here (hostGemm), as in the emulated test. A plain program (the GPU machine has no
// GoogleTest): exit 0 pass, 1 fail, 77 no GPU.
#include "GpuTest.h"
#include "RecurrentReference.h"

using namespace attn::cuda;
using namespace attn::cuda::testing;

namespace {

CellOutputs run(const CellProblem &p) {
  const int64_t B = p.c.batch, H = p.c.hidden;
  std::map<std::string, DeviceBuffer> in;
  for (const auto &[name, v] : p.in)
    in.emplace(name, uploaded(v));
  auto x = [&](const char *name) { return in.at(name).as<float>(); };
  CellOutputs out;
  DeviceBuffer h = poisonedFloats(B * H);
  auto done = [&](const char *what) {
    check(synchronize(), what);
    out["h"] = downloaded<float>(h, B * H);
  };
  switch (p.c.cell) {
  case Cell::Rnn: {
    DeviceBuffer gates = poisonedFloats(B * H), dz = poisonedFloats(B * H);
    check(rnnCellForward(B, H, x("z"), gates.as<float>(), h.as<float>()), "rnn_cell");
    check(rnnCellBackward(B, H, gates.as<float>(), x("dh"), dz.as<float>()), "rnn_cell backward");
    done("rnn_cell");
    out["dz"] = downloaded<float>(dz, B * H);
    break;
  }
  case Cell::Lstm:
  case Cell::LstmPeephole: {
    const float *peep = p.c.cell == Cell::LstmPeephole ? x("peephole") : nullptr;
    DeviceBuffer gates = poisonedFloats(B * 4 * H), c = poisonedFloats(B * H),
                 dz = poisonedFloats(B * 4 * H), dcPrev = poisonedFloats(B * H),
                 rows = poisonedFloats(B * 3 * H), dpeep = poisonedFloats(3 * H);
    check(lstmCellForward(B, H, x("z"), x("cPrev"), peep, gates.as<float>(), c.as<float>(),
                          h.as<float>()),
          "lstm_cell");
    check(lstmCellBackward(B, H, gates.as<float>(), x("cPrev"), c.as<float>(), peep, x("dh"),
                           x("dcNext"), dz.as<float>(), dcPrev.as<float>(),
                           peep ? rows.as<float>() : nullptr),
          "lstm_cell backward");
    if (peep)
      check(sumRows(B, 3 * H, rows.as<float>(), dpeep.as<float>()), "sumRows");
    done("lstm_cell");
    out["c"] = downloaded<float>(c, B * H);
    out["dz"] = downloaded<float>(dz, B * 4 * H);
    out["dcPrev"] = downloaded<float>(dcPrev, B * H);
    if (peep)
      out["dpeephole"] = downloaded<float>(dpeep, 3 * H);
    break;
  }
  case Cell::Gru: {
    DeviceBuffer gates = poisonedFloats(B * 4 * H), da = poisonedFloats(B * 3 * H),
                 dbh = poisonedFloats(B * 3 * H), dhPrev = poisonedFloats(B * H);
    check(gruCellForward(B, H, x("a"), x("bh"), x("hPrev"), gates.as<float>(), h.as<float>()),
          "gru_cell");
    check(gruCellBackward(B, H, gates.as<float>(), x("hPrev"), x("dh"), da.as<float>(),
                          dbh.as<float>(), dhPrev.as<float>()),
          "gru_cell backward");
    done("gru_cell");
    out["da"] = downloaded<float>(da, B * 3 * H);
    out["dbh"] = downloaded<float>(dbh, B * 3 * H);
    out["dhPrev"] = downloaded<float>(dhPrev, B * H);
    break;
  }
  case Cell::GruMinimal: {
    DeviceBuffer gates = poisonedFloats(B * 2 * H), dz = poisonedFloats(B * 2 * H),
                 dhPrev = poisonedFloats(B * H);
    check(gruMinimalCellForward(B, H, x("a"), x("bh"), x("hPrev"), gates.as<float>(),
                                h.as<float>()),
          "gru_cell (minimal)");
    check(gruMinimalCellBackward(B, H, gates.as<float>(), x("hPrev"), x("dh"), dz.as<float>(),
                                 dhPrev.as<float>()),
          "gru_cell (minimal) backward");
    done("gru_cell (minimal)");
    out["dz"] = downloaded<float>(dz, B * 2 * H);
    out["dhPrev"] = downloaded<float>(dhPrev, B * H);
    break;
  }
  case Cell::GruSeed: {
    DeviceBuffer gates = poisonedFloats(B * 3 * H), rhDev = poisonedFloats(B * H),
                 da = poisonedFloats(B * 3 * H), dhPrev = poisonedFloats(B * H);
    check(gruSeedCellGates(B, H, x("a"), x("bur"), x("hPrev"), gates.as<float>(),
                           rhDev.as<float>()),
          "gru_cell (seed) gates");
    check(synchronize(), "gru_cell (seed) gates");
    const std::vector<float> rh = downloaded<float>(rhDev, B * H);
    DeviceBuffer bc = uploaded(hostGemm(rh, false, p.in.at("whc"), false, B, H, H, &p.in.at("bhc")));
    check(gruSeedCellOutput(B, H, x("a"), bc.as<float>(), x("hPrev"), gates.as<float>(),
                            h.as<float>()),
          "gru_cell (seed) output");
    check(gruSeedCellOutputBackward(B, H, gates.as<float>(), x("hPrev"), x("dh"), da.as<float>(),
                                    dhPrev.as<float>()),
          "gru_cell (seed) output backward");
    check(synchronize(), "gru_cell (seed) output backward");
    const std::vector<float> daHost = downloaded<float>(da, B * 3 * H);
    std::vector<float> dac(B * H);
    for (int64_t b = 0; b < B; ++b)
      std::copy_n(daHost.data() + b * 3 * H + 2 * H, H, dac.data() + b * H);
    DeviceBuffer drh = uploaded(hostGemm(dac, false, p.in.at("whc"), true, B, H, H));
    check(gruSeedCellGatesBackward(B, H, gates.as<float>(), x("hPrev"), drh.as<float>(),
                                   da.as<float>(), dhPrev.as<float>()),
          "gru_cell (seed) gates backward");
    done("gru_cell (seed)");
    out["da"] = downloaded<float>(da, B * 3 * H);
    out["dhPrev"] = downloaded<float>(dhPrev, B * H);
    out["dwhc"] = hostGemm(rh, true, dac, false, H, B, H);
    break;
  }
  }
  return out;
}

// The sequence loop of attn/cuda/Recurrent.h on the device (cuBLASLt GEMMs and the kernels).
Tensors runSequence(const SequenceProblem &p) {
  const SequenceCase &c = p.c;
  const bool lstm = c.cell == RecurrentCell::Lstm;
  const int64_t B = c.batch, T = c.steps, I = c.input, H = c.hidden, R = c.state(),
                G = gatesOf(c.cell, H);
  std::map<std::string, DeviceBuffer> in;
  for (const auto &[name, v] : p.in)
    in.emplace(name, uploaded(v));
  auto x = [&](const char *name) { return in.count(name) ? in.at(name).as<float>() : nullptr; };
  const RecurrentShape shape{B, T, I, H, c.reverse, c.projection};
  const RecurrentWeights w{x("wIh"), x("wHh"), x("bIh"), x("bHh"), x("peephole"), x("wProj")};
  std::map<std::string, std::pair<DeviceBuffer, int64_t>> out;
  auto result = [&](const char *name, int64_t n, bool wanted) -> float * {
    if (!wanted)
      return nullptr;
    out.emplace(name, std::pair{poisonedFloats(n), n});
    return out.at(name).first.as<float>();
  };
  float *outputs = result("outputs", B * T * R, true), *hn = result("hn", B * R, true),
        *cn = result("cn", B * H, lstm);
  check(recurrentForward(shape, c.cell, w, x("x"), x("h0"), x("c0"), x("mask"), outputs, hn, cn),
        "recurrent forward");
  const RecurrentGradients d{result("dx", B * T * I, true),
                             result("dh0", B * R, true),
                             result("dc0", B * H, lstm),
                             result("dwIh", I * G, true),
                             result("dwHh", R * G, true),
                             result("dbIh", G, true),
                             result("dbHh", G, c.cell == RecurrentCell::Gru),
                             result("dpeephole", 3 * H, c.peephole),
                             result("dwProj", H * R, c.projection > 0)};
  check(recurrentBackward(shape, c.cell, w, x("x"), x("h0"), x("c0"), x("mask"), x("dOutputs"),
                          x("dhn"), x("dcn"), d),
        "recurrent backward");
  Tensors got;
  for (const auto &[name, buffer] : out)
    got[name] = downloaded<float>(buffer.first, buffer.second);
  return got;
}

} // namespace

int main() {
  if (skipWithoutDevice())
    return 77;
  std::mt19937 rng(20261204);
  for (const CellCase &c : cellCases()) {
    std::printf("  %s\n", c.name);
    const CellProblem p = makeCellProblem(c, rng);
    for (const std::string &f : compare(p, run(p)))
      fail(f);
  }
  for (const SequenceCase &c : sequenceCases()) {
    std::printf("  sequence %s\n", c.name);
    const SequenceProblem p = makeSequenceProblem(c, rng);
    for (const std::string &f : compare(p, runSequence(p)))
      fail(f);
  }
  // Bad shapes are refused with the shape in the message, before any launch.
  Status bad = lstmCellForward(0, 8, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr);
  if (bad.ok() || bad.message().find("batch 0, hidden 8") == std::string::npos)
    fail("lstm_cell of batch 0 must be refused by shape: " + bad.message());
  return finish();
}
