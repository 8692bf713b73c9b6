#include "attn/plot/Plot.h"

#include <png.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <unistd.h>

using namespace attn::plot;

namespace {

// --- PNG files read back with libpng (the encoder's output is also checked by Python's zlib
// in LossCurvePng, where it is installed) ---------------------------------------------------

struct Image {
  uint32_t width = 0, height = 0;
  std::vector<uint8_t> rgb;
  uint32_t at(uint32_t x, uint32_t y) const {
    const uint8_t *p = &rgb[(size_t(y) * width + x) * 3];
    return uint32_t(p[0]) << 16 | uint32_t(p[1]) << 8 | p[2];
  }
};

Image decodePng(const std::vector<uint8_t> &png) {
  static const uint8_t sig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
  if (png.size() < 8 || !std::equal(sig, sig + 8, png.begin()))
    throw std::runtime_error("bad signature");
  png_image image{};
  image.version = PNG_IMAGE_VERSION;
  if (!png_image_begin_read_from_memory(&image, png.data(), png.size()))
    throw std::runtime_error(std::string("libpng: ") + image.message);
  EXPECT_EQ(image.format & PNG_FORMAT_FLAG_COLOR, PNG_FORMAT_FLAG_COLOR);
  EXPECT_EQ(image.format & PNG_FORMAT_FLAG_ALPHA, 0u);
  image.format = PNG_FORMAT_RGB;
  Image img;
  img.width = image.width;
  img.height = image.height;
  img.rgb.resize(PNG_IMAGE_SIZE(image));
  if (!png_image_finish_read(&image, nullptr, img.rgb.data(), 0, nullptr))
    throw std::runtime_error(std::string("libpng: ") + image.message);
  return img;
}

std::vector<uint8_t> readFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::string tempPath(const std::string &name) {
  return ::testing::TempDir() + "attn_train_" + std::to_string(getpid()) + "_" + name;
}

size_t countColour(const Image &img, uint32_t rgb) {
  size_t n = 0;
  for (uint32_t y = 0; y < img.height; ++y)
    for (uint32_t x = 0; x < img.width; ++x)
      n += img.at(x, y) == rgb;
  return n;
}

// Whether `pixel` is `ink` drawn over white with at least half coverage (anti-aliased curves and
// text are such blends): every channel p = 255 - a (255 - c) for one a >= 0.5.
bool inkOverWhite(uint32_t pixel, uint32_t ink) {
  double a = -1;
  for (int shift = 16; shift >= 0; shift -= 8) {
    int p = (pixel >> shift) & 0xff, c = (ink >> shift) & 0xff;
    if (c < 0xf0) {
      a = std::max(a, double(255 - p) / (255 - c));
    }
  }
  if (a < 0.5 || a > 1.02)
    return false;
  for (int shift = 16; shift >= 0; shift -= 8) {
    int p = (pixel >> shift) & 0xff, c = (ink >> shift) & 0xff;
    if (std::abs(p - (255 - a * (255 - c))) > 8)
      return false;
  }
  return true;
}

size_t countInk(const Image &img, uint32_t ink) {
  size_t n = 0;
  for (uint32_t y = 0; y < img.height; ++y)
    for (uint32_t x = 0; x < img.width; ++x)
      n += inkOverWhite(img.at(x, y), ink);
  return n;
}

// A typical run: training loss falling over 3 decades with noise and a NaN, validation sparser.
std::vector<Series> lossCurves() {
  Series train{"loss", {}, {}, 0x1f77b4};
  Series valid{"valid_loss", {}, {}, 0xd62728};
  for (int step = 1; step <= 3000; ++step) {
    train.x.push_back(step);
    train.y.push_back(step == 1500 ? NAN : 2.0 * std::exp(-step / 400.0) + 0.002 +
                                               0.0005 * std::sin(step * 0.7));
    if (step % 250 == 0) {
      valid.x.push_back(step);
      valid.y.push_back(2.2 * std::exp(-step / 450.0) + 0.004);
    }
  }
  return {train, valid};
}

} // namespace

TEST(Plot, EncodePngSmallImage) {
  std::vector<uint8_t> rgb = {255, 0, 0, 0, 255, 0, 0, 0, 255, 10, 20, 30};
  Image img = decodePng(encodePng(2, 2, rgb));
  EXPECT_EQ(img.width, 2u);
  EXPECT_EQ(img.height, 2u);
  EXPECT_EQ(img.rgb, rgb);
  EXPECT_THROW(encodePng(2, 2, {1, 2, 3}), std::invalid_argument);
  EXPECT_THROW(encodePng(0, 0, {}), std::invalid_argument);
}

TEST(Plot, EncodePngLargeImage) {
  // 300 x 100 RGB of varied bytes: more than one zlib block of scanlines.
  std::vector<uint8_t> rgb(300 * 100 * 3);
  for (size_t i = 0; i < rgb.size(); ++i)
    rgb[i] = uint8_t(i * 7);
  Image img = decodePng(encodePng(300, 100, rgb));
  EXPECT_EQ(img.rgb, rgb);
}

TEST(Plot, LossCurvePng) {
  const char *keep = std::getenv("ATTN_PLOT_OUT"); // for looking at the picture by hand
  std::string path = keep ? std::string(keep) : tempPath("loss.png");
  writeLossCurvePng(path, lossCurves(), "sine_rnn training loss");
  Image img = decodePng(readFile(path));
  ASSERT_EQ(img.width, 800u);
  ASSERT_EQ(img.height, 500u);
  // White background: the corners, and most of the picture.
  for (auto [x, y] : {std::pair{0u, 0u}, {799u, 0u}, {0u, 499u}, {799u, 499u}})
    EXPECT_EQ(img.at(x, y), 0xffffffu) << x << "," << y;
  EXPECT_GT(countColour(img, 0xffffff), 800u * 500 / 2);
  EXPECT_GT(countInk(img, 0x1f77b4), 1000u);   // the training curve, 2 px wide
  EXPECT_GT(countInk(img, 0xd62728), 300u);    // the validation curve
  EXPECT_GT(countColour(img, 0x000000), 500u); // axes and ticks
  // No temporary file is left behind.
  EXPECT_NE(access(path.c_str(), F_OK), -1);
  EXPECT_EQ(access((path + ".tmp." + std::to_string(getpid())).c_str(), F_OK), -1);

  // An independent decoder, where one is installed: Python's zlib checks the deflate stream.
  if (std::system("python3 -c 'import zlib' >/dev/null 2>&1") != 0)
    GTEST_SKIP() << "python3 with zlib not available";
  std::string script =
      "import struct, sys, zlib\n"
      "b = open(sys.argv[1], 'rb').read()\n"
      "assert b[:8] == b'\\x89PNG\\r\\n\\x1a\\n'\n"
      "p, idat = 8, b''\n"
      "while p < len(b):\n"
      "    n, t = struct.unpack('>I4s', b[p:p+8])\n"
      "    assert struct.unpack('>I', b[p+8+n:p+12+n])[0] == zlib.crc32(b[p+4:p+8+n]), t\n"
      "    if t == b'IHDR': w, h = struct.unpack('>II', b[p+8:p+16])\n"
      "    if t == b'IDAT': idat += b[p+8:p+8+n]\n"
      "    p += 12 + n\n"
      "raw = zlib.decompress(idat)\n"
      "assert (w, h) == (800, 500) and len(raw) == h * (1 + 3 * w)\n";
  std::string scriptPath = tempPath("check_png.py");
  std::ofstream(scriptPath) << script;
  EXPECT_EQ(std::system(("python3 " + scriptPath + " " + path).c_str()), 0);
  std::remove(scriptPath.c_str());
  if (!keep)
    std::remove(path.c_str());
}

TEST(Plot, LinearAxisAndEdgeCases) {
  std::string path = tempPath("edge.png");
  // Linear y (max/min < 100), a single-point series, an all-NaN series and an unnamed one.
  std::vector<Series> series = {
      {"flat", {1, 2, 3, 4}, {0.5, 0.5, 0.5, 0.5}, 0x00aa00},
      {"one", {2}, {0.5}, 0xff00ff},
      {"nan", {1, 2}, {NAN, NAN}, 0x123456},
      {"", {1, 4}, {0.4, 0.6}, 0x0000ff},
  };
  writeLossCurvePng(path, series, "edge cases (ok?)");
  Image img = decodePng(readFile(path));
  EXPECT_GT(countInk(img, 0x00aa00), 100u);
  EXPECT_GT(countInk(img, 0xff00ff), 12u); // the single point's dot
  EXPECT_GT(countInk(img, 0x0000ff), 100u);
  EXPECT_GE(countColour(img, 0x123456), 10u); // only its legend swatch
  writeLossCurvePng(path, {}, "");              // nothing at all still makes a valid picture
  EXPECT_EQ(decodePng(readFile(path)).width, 800u);
  std::remove(path.c_str());
}

TEST(Plot, Errors) {
  EXPECT_THROW(writeLossCurvePng(tempPath("x.png"), {{"bad", {1, 2}, {1}, 0}}, "t"),
               std::invalid_argument);
  EXPECT_THROW(writeLossCurvePng("/nonexistent-dir/x/loss.png", {}, "t"), std::runtime_error);
}

// --- Attention heatmaps ---------------------------------------------------------------------

namespace {

constexpr uint32_t kFrameGrey = 0x808080, kLabelInk = 0x202020;

int channel(uint32_t rgb, int i) { return (rgb >> (16 - 8 * i)) & 0xff; }
bool isDark(uint32_t rgb) { return channel(rgb, 0) < 0x40 && channel(rgb, 1) < 0x60; }
bool isWhite(uint32_t rgb) { return rgb == 0xffffff; }
bool isBlue(uint32_t rgb) { return channel(rgb, 2) > channel(rgb, 0) + 40; }

// The cell grid, found from the outside: the first frame-grey pixel in reading order is the
// top-left corner of the grid's outline (the colour bar's outline starts further right).
struct Grid {
  uint32_t x0 = 0, y0 = 0, cell = 0; // the top-left cell's top-left pixel; the cell size
  uint32_t cx(size_t j) const { return x0 + uint32_t(j) * cell + cell / 2; }
  uint32_t cy(size_t i) const { return y0 + uint32_t(i) * cell + cell / 2; }
};

Grid findGrid(const Image &img, size_t rows, size_t cols) {
  for (uint32_t y = 0; y < img.height; ++y)
    for (uint32_t x = 0; x < img.width; ++x) {
      if (img.at(x, y) != kFrameGrey)
        continue;
      uint32_t x1 = x, y1 = y;
      while (x1 + 1 < img.width && img.at(x1 + 1, y) == kFrameGrey)
        ++x1;
      while (y1 + 1 < img.height && img.at(x, y1 + 1) == kFrameGrey)
        ++y1;
      if (x1 - x < 3 || y1 - y < 3)
        continue; // an anti-aliased label pixel that happens to be this grey
      uint32_t w = x1 - x - 1, h = y1 - y - 1; // inside the outline
      EXPECT_EQ(w % cols, 0u) << w;
      EXPECT_EQ(h % rows, 0u) << h;
      EXPECT_EQ(w / cols, h / rows);
      return {x + 1, y + 1, w / uint32_t(cols)};
    }
  ADD_FAILURE() << "no grid outline";
  return {};
}

// Label ink (anti-aliased) in the rectangle [x0, x1) x [y0, y1).
size_t inkIn(const Image &img, uint32_t x0, uint32_t y0, uint32_t x1, uint32_t y1) {
  size_t n = 0;
  for (uint32_t y = y0; y < y1; ++y)
    for (uint32_t x = x0; x < x1; ++x)
      n += inkOverWhite(img.at(x, y), kLabelInk);
  return n;
}

} // namespace

TEST(Plot, HeatmapPng) {
  const char *keep = std::getenv("ATTN_HEATMAP_OUT"); // for looking at the picture by hand
  std::string path = keep ? std::string(keep) : tempPath("heatmap.png");
  // Characters of "Mar 5," (one a space) against four target characters; row 3 spreads its
  // weight, and out-of-range weights and a NaN are clamped / flagged.
  std::vector<std::string> src = {"M", "a", "r", " ", "5", ","}, tgt = {"0", "3", "-", "0"};
  std::vector<std::vector<float>> w = {{0, 1, 0, 0, 0, 0},
                                       {0, 0, 0.5f, 0, 0, 0.5f},
                                       {1.7f, -0.3f, 0, NAN, 0, 0},
                                       {0, 0, 0, 0, 1, 0}};
  writeHeatmapPng(path, w, src, tgt, "attention: dates");
  Image img = decodePng(readFile(path));
  Grid g = findGrid(img, 4, 6);
  EXPECT_GE(g.cell, 16u); // a short sequence gets readable cells
  EXPECT_LE(g.cell, 20u);
  EXPECT_GT(img.width, g.x0 + 6 * g.cell + 20); // room for the colour bar
  uint32_t right = img.width - 1, bottom = img.height - 1;
  for (auto [x, y] : {std::pair{0u, 0u}, {right, 0u}, {0u, bottom}, {right, bottom}})
    EXPECT_EQ(img.at(x, y), 0xffffffu) << x << "," << y;

  // Strong cells are dark blue, zero cells white, 0.5 in between; clamped and NaN cells.
  EXPECT_TRUE(isDark(img.at(g.cx(1), g.cy(0))));
  EXPECT_TRUE(isDark(img.at(g.cx(4), g.cy(3))));
  EXPECT_TRUE(isWhite(img.at(g.cx(0), g.cy(0))));
  EXPECT_TRUE(isWhite(img.at(g.cx(5), g.cy(3))));
  uint32_t half = img.at(g.cx(2), g.cy(1));
  EXPECT_TRUE(isBlue(half) && !isDark(half)) << std::hex << half;
  EXPECT_EQ(img.at(g.cx(5), g.cy(1)), half);
  EXPECT_EQ(img.at(g.cx(0), g.cy(2)), img.at(g.cx(1), g.cy(0))); // 1.7 is drawn as 1
  EXPECT_TRUE(isWhite(img.at(g.cx(1), g.cy(2))));                // -0.3 as 0
  EXPECT_EQ(img.at(g.cx(3), g.cy(2)), 0xd62728u);                // NaN is red
  // A cell is one colour edge to edge.
  EXPECT_EQ(img.at(g.x0 + g.cell, g.y0), img.at(g.x0 + 2 * g.cell - 1, g.y0 + g.cell - 1));

  // A label above every column, the space included, and left of every row; none in the grid.
  for (size_t j = 0; j < src.size(); ++j)
    EXPECT_GE(inkIn(img, g.x0 + uint32_t(j) * g.cell, g.y0 - 16, g.x0 + uint32_t(j + 1) * g.cell,
                    g.y0 - 1),
              3u)
        << "column " << j;
  for (size_t i = 0; i < tgt.size(); ++i)
    EXPECT_GE(inkIn(img, 0, g.y0 + uint32_t(i) * g.cell, g.x0 - 1, g.y0 + uint32_t(i + 1) * g.cell),
              3u) // '-' is the least ink
        << "row " << i;
  EXPECT_EQ(inkIn(img, g.x0, g.y0, g.x0 + 6 * g.cell, g.y0 + 4 * g.cell), 0u);
  // The title (black) above the labels.
  size_t titleInk = 0;
  for (uint32_t y = 0; y + 16 < g.y0; ++y)
    for (uint32_t x = 0; x < img.width; ++x)
      titleInk +=
          channel(img.at(x, y), 0) < 0x18 && channel(img.at(x, y), 1) < 0x18; // darker than labels
  EXPECT_GT(titleInk, 100u);

  // The colour bar right of the grid: dark at the top, white at the bottom, ticks labelled.
  uint32_t barX = g.x0 + 6 * g.cell + 1;
  while (barX < img.width && !isDark(img.at(barX, g.y0)))
    ++barX;
  ASSERT_LT(barX, img.width);
  EXPECT_TRUE(isWhite(img.at(barX, g.y0 + 4 * g.cell - 1)));
  EXPECT_GT(inkIn(img, barX, g.y0 - 4, img.width, g.y0 + 4 * g.cell + 4), 20u);

  EXPECT_EQ(access((path + ".tmp." + std::to_string(getpid())).c_str(), F_OK), -1);
  if (!keep)
    std::remove(path.c_str());
}

TEST(Plot, HeatmapWordLabels) {
  // Word tokens do not fit a 20-px column: they are turned to read upwards and cut.
  std::vector<std::string> src = {"the", "international", "committee", "<eos>"};
  std::vector<std::string> tgt = {"le", "comité", "internationalement", "<eos>"};
  std::vector<std::vector<float>> w = {
      {0.9f, 0.05f, 0.05f, 0}, {0, 0.1f, 0.9f, 0}, {0, 0.8f, 0.2f, 0}, {0, 0, 0, 1}};
  std::string path = tempPath("heatmap_words.png");
  writeHeatmapPng(path, w, src, tgt, "");
  Image img = decodePng(readFile(path));
  Grid g = findGrid(img, 4, 4);
  EXPECT_EQ(g.cell, 20u);
  // Turned labels of up to 8 characters (6 px each) need a band about 48 px high.
  EXPECT_GE(g.y0, 48u);
  EXPECT_LE(g.y0, 80u);
  // Target labels of up to 12 characters: at most 12 * 6 px left of the grid, plus margins.
  EXPECT_LE(g.x0, 12u * 6 + 24);
  for (size_t j = 0; j < src.size(); ++j) {
    size_t ink =
        inkIn(img, g.x0 + uint32_t(j) * g.cell, 0, g.x0 + uint32_t(j + 1) * g.cell, g.y0 - 1);
    EXPECT_GT(ink, 20u) << "column " << j;
  }
  // The turned labels stay within their columns: none in the gaps between them.
  for (size_t j = 0; j < src.size(); ++j) {
    uint32_t x = g.x0 + uint32_t(j) * g.cell;
    EXPECT_EQ(inkIn(img, x, 0, x + 2, g.y0 - 1), 0u) << "column " << j;
  }
  EXPECT_TRUE(isDark(img.at(g.cx(3), g.cy(3))));
  EXPECT_TRUE(isWhite(img.at(g.cx(0), g.cy(3))));
  std::remove(path.c_str());
}

TEST(Plot, HeatmapLongSequences) {
  // 300 source tokens: cells shrink so the picture stays a sensible size.
  size_t rows = 120, cols = 300;
  std::vector<std::string> src(cols, "x"), tgt(rows, "y");
  std::vector<std::vector<float>> w(rows, std::vector<float>(cols, 0));
  for (size_t i = 0; i < rows; ++i)
    w[i][i * 2] = 1;
  std::string path = tempPath("heatmap_long.png");
  writeHeatmapPng(path, w, src, tgt, "long");
  Image img = decodePng(readFile(path));
  Grid g = findGrid(img, rows, cols);
  EXPECT_GE(g.cell, 2u);
  EXPECT_LE(g.cell, 8u);
  EXPECT_LT(img.width, 1600u);
  EXPECT_TRUE(isDark(img.at(g.cx(2 * 100), g.cy(100))));
  EXPECT_TRUE(isWhite(img.at(g.cx(2 * 100 + 1), g.cy(100))));
  // A single cell is still a valid picture, with the colour bar taller than the grid.
  writeHeatmapPng(path, {{0.5f}}, {"a"}, {"b"}, "one");
  img = decodePng(readFile(path));
  g = findGrid(img, 1, 1);
  EXPECT_EQ(g.cell, 20u);
  std::remove(path.c_str());
}

TEST(Plot, HeatmapErrors) {
  std::string path = tempPath("heatmap_bad.png");
  std::vector<std::string> two = {"a", "b"};
  EXPECT_THROW(writeHeatmapPng(path, {}, two, {}, "t"), std::invalid_argument);
  EXPECT_THROW(writeHeatmapPng(path, {{}}, {}, {"a"}, "t"), std::invalid_argument);
  EXPECT_THROW(writeHeatmapPng(path, {{1, 0}, {0, 1}}, two, {"a"}, "t"), std::invalid_argument);
  EXPECT_THROW(writeHeatmapPng(path, {{1, 0}, {0}}, two, two, "t"), std::invalid_argument);
  EXPECT_THROW(writeHeatmapPng(path, {{1, 0, 0}, {0, 1, 0}}, two, two, "t"), std::invalid_argument);
  EXPECT_EQ(access(path.c_str(), F_OK), -1); // nothing written
  try {
    writeHeatmapPng("/nonexistent-dir/x/attn.png", {{1, 0}}, two, {"a"}, "t");
    ADD_FAILURE() << "no exception";
  } catch (const std::runtime_error &e) {
    EXPECT_EQ(std::string(e.what()).rfind("/nonexistent-dir/x/attn.png: error: ", 0), 0u)
        << e.what();
  }
}
