#include "attn/plot/Plot.h"
#include "attn/train/MetricsLog.h"

#include <png.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <unistd.h>

namespace attn::plot {

// ------------------------------------------------------------------------------------------------
// PNG encoding: libpng
// ------------------------------------------------------------------------------------------------

std::vector<uint8_t> encodePng(uint32_t width, uint32_t height, const std::vector<uint8_t> &rgb) {
  size_t rowBytes = static_cast<size_t>(width) * 3;
  if (width == 0 || height == 0 || rgb.size() != rowBytes * height)
    throw std::invalid_argument("encodePng: pixel buffer does not match " + std::to_string(width) +
                                "x" + std::to_string(height) + " RGB");
  png_image image{};
  image.version = PNG_IMAGE_VERSION;
  image.width = width;
  image.height = height;
  image.format = PNG_FORMAT_RGB;
  png_alloc_size_t size = 0;
  // Asked once for the size, then written: libpng's simplified API compresses with zlib.
  if (!png_image_write_to_memory(&image, nullptr, &size, /*convert_to_8bit=*/0, rgb.data(),
                                 static_cast<png_int_32>(rowBytes), nullptr))
    throw std::runtime_error(std::string("encodePng: ") + image.message);
  std::vector<uint8_t> png(size);
  if (!png_image_write_to_memory(&image, png.data(), &size, 0, rgb.data(),
                                 static_cast<png_int_32>(rowBytes), nullptr))
    throw std::runtime_error(std::string("encodePng: ") + image.message);
  png.resize(size);
  return png;
}

// ------------------------------------------------------------------------------------------------
// The 5x7 font: each glyph is 7 rows of 5 columns, '#' = ink. Drawn in 6x8 cells.
// ------------------------------------------------------------------------------------------------

namespace {

constexpr int kGlyphW = 5, kGlyphH = 7, kCellW = 6;

// A space token drawn as an open box (like U+2423), not as blank: a heatmap label that is a space
// must not look like a missing label. A control character, so no real text maps to it.
constexpr char kVisibleSpace = '\x1f';

struct Glyph {
  char c;
  const char *rows[kGlyphH];
};

// clang-format off
const Glyph kFont[] = {
  {' ', {".....", ".....", ".....", ".....", ".....", ".....", "....."}},
  {'0', {".###.", "#...#", "#..##", "#.#.#", "##..#", "#...#", ".###."}},
  {'1', {"..#..", ".##..", "..#..", "..#..", "..#..", "..#..", ".###."}},
  {'2', {".###.", "#...#", "....#", "...#.", "..#..", ".#...", "#####"}},
  {'3', {"#####", "...#.", "..#..", "...#.", "....#", "#...#", ".###."}},
  {'4', {"...#.", "..##.", ".#.#.", "#..#.", "#####", "...#.", "...#."}},
  {'5', {"#####", "#....", "####.", "....#", "....#", "#...#", ".###."}},
  {'6', {"..##.", ".#...", "#....", "####.", "#...#", "#...#", ".###."}},
  {'7', {"#####", "....#", "...#.", "..#..", ".#...", ".#...", ".#..."}},
  {'8', {".###.", "#...#", "#...#", ".###.", "#...#", "#...#", ".###."}},
  {'9', {".###.", "#...#", "#...#", ".####", "....#", "...#.", ".##.."}},
  {'A', {".###.", "#...#", "#...#", "#####", "#...#", "#...#", "#...#"}},
  {'B', {"####.", "#...#", "#...#", "####.", "#...#", "#...#", "####."}},
  {'C', {".###.", "#...#", "#....", "#....", "#....", "#...#", ".###."}},
  {'D', {"###..", "#..#.", "#...#", "#...#", "#...#", "#..#.", "###.."}},
  {'E', {"#####", "#....", "#....", "####.", "#....", "#....", "#####"}},
  {'F', {"#####", "#....", "#....", "####.", "#....", "#....", "#...."}},
  {'G', {".###.", "#...#", "#....", "#.###", "#...#", "#...#", ".####"}},
  {'H', {"#...#", "#...#", "#...#", "#####", "#...#", "#...#", "#...#"}},
  {'I', {".###.", "..#..", "..#..", "..#..", "..#..", "..#..", ".###."}},
  {'J', {"..###", "...#.", "...#.", "...#.", "...#.", "#..#.", ".##.."}},
  {'K', {"#...#", "#..#.", "#.#..", "##...", "#.#..", "#..#.", "#...#"}},
  {'L', {"#....", "#....", "#....", "#....", "#....", "#....", "#####"}},
  {'M', {"#...#", "##.##", "#.#.#", "#.#.#", "#...#", "#...#", "#...#"}},
  {'N', {"#...#", "#...#", "##..#", "#.#.#", "#..##", "#...#", "#...#"}},
  {'O', {".###.", "#...#", "#...#", "#...#", "#...#", "#...#", ".###."}},
  {'P', {"####.", "#...#", "#...#", "####.", "#....", "#....", "#...."}},
  {'Q', {".###.", "#...#", "#...#", "#...#", "#.#.#", "#..#.", ".##.#"}},
  {'R', {"####.", "#...#", "#...#", "####.", "#.#..", "#..#.", "#...#"}},
  {'S', {".####", "#....", "#....", ".###.", "....#", "....#", "####."}},
  {'T', {"#####", "..#..", "..#..", "..#..", "..#..", "..#..", "..#.."}},
  {'U', {"#...#", "#...#", "#...#", "#...#", "#...#", "#...#", ".###."}},
  {'V', {"#...#", "#...#", "#...#", "#...#", "#...#", ".#.#.", "..#.."}},
  {'W', {"#...#", "#...#", "#...#", "#.#.#", "#.#.#", "#.#.#", ".#.#."}},
  {'X', {"#...#", "#...#", ".#.#.", "..#..", ".#.#.", "#...#", "#...#"}},
  {'Y', {"#...#", "#...#", ".#.#.", "..#..", "..#..", "..#..", "..#.."}},
  {'Z', {"#####", "....#", "...#.", "..#..", ".#...", "#....", "#####"}},
  {'a', {".....", ".....", ".###.", "....#", ".####", "#...#", ".####"}},
  {'b', {"#....", "#....", "#.##.", "##..#", "#...#", "#...#", "####."}},
  {'c', {".....", ".....", ".###.", "#....", "#....", "#...#", ".###."}},
  {'d', {"....#", "....#", ".##.#", "#..##", "#...#", "#...#", ".####"}},
  {'e', {".....", ".....", ".###.", "#...#", "#####", "#....", ".###."}},
  {'f', {"..##.", ".#..#", ".#...", "###..", ".#...", ".#...", ".#..."}},
  {'g', {".....", ".....", ".####", "#...#", ".####", "....#", "####."}},
  {'h', {"#....", "#....", "#.##.", "##..#", "#...#", "#...#", "#...#"}},
  {'i', {"..#..", ".....", ".##..", "..#..", "..#..", "..#..", ".###."}},
  {'j', {"...#.", ".....", "..##.", "...#.", "...#.", "#..#.", ".##.."}},
  {'k', {"#....", "#....", "#..#.", "#.#..", "##...", "#.#..", "#..#."}},
  {'l', {".##..", "..#..", "..#..", "..#..", "..#..", "..#..", ".###."}},
  {'m', {".....", ".....", "##.#.", "#.#.#", "#.#.#", "#...#", "#...#"}},
  {'n', {".....", ".....", "#.##.", "##..#", "#...#", "#...#", "#...#"}},
  {'o', {".....", ".....", ".###.", "#...#", "#...#", "#...#", ".###."}},
  {'p', {".....", ".....", "####.", "#...#", "####.", "#....", "#...."}},
  {'q', {".....", ".....", ".##.#", "#..##", ".####", "....#", "....#"}},
  {'r', {".....", ".....", "#.##.", "##..#", "#....", "#....", "#...."}},
  {'s', {".....", ".....", ".###.", "#....", ".###.", "....#", "####."}},
  {'t', {".#...", ".#...", "###..", ".#...", ".#...", ".#..#", "..##."}},
  {'u', {".....", ".....", "#...#", "#...#", "#...#", "#..##", ".##.#"}},
  {'v', {".....", ".....", "#...#", "#...#", "#...#", ".#.#.", "..#.."}},
  {'w', {".....", ".....", "#...#", "#...#", "#.#.#", "#.#.#", ".#.#."}},
  {'x', {".....", ".....", "#...#", ".#.#.", "..#..", ".#.#.", "#...#"}},
  {'y', {".....", ".....", "#...#", "#...#", ".####", "....#", ".###."}},
  {'z', {".....", ".....", "#####", "...#.", "..#..", ".#...", "#####"}},
  {'.', {".....", ".....", ".....", ".....", ".....", ".##..", ".##.."}},
  {',', {".....", ".....", ".....", ".....", ".##..", "..#..", ".#..."}},
  {'-', {".....", ".....", ".....", ".###.", ".....", ".....", "....."}},
  {'+', {".....", "..#..", "..#..", "#####", "..#..", "..#..", "....."}},
  {'_', {".....", ".....", ".....", ".....", ".....", ".....", "#####"}},
  {':', {".....", ".##..", ".##..", ".....", ".##..", ".##..", "....."}},
  {'/', {".....", "....#", "...#.", "..#..", ".#...", "#....", "....."}},
  {'(', {"...#.", "..#..", ".#...", ".#...", ".#...", "..#..", "...#."}},
  {')', {".#...", "..#..", "...#.", "...#.", "...#.", "..#..", ".#..."}},
  {'=', {".....", ".....", "#####", ".....", "#####", ".....", "....."}},
  {'%', {"##...", "##..#", "...#.", "..#..", ".#...", "#..##", "...##"}},
  {'?', {".###.", "#...#", "....#", "...#.", "..#..", ".....", "..#.."}},
  {'<', {"...#.", "..#..", ".#...", "#....", ".#...", "..#..", "...#."}},
  {'>', {".#...", "..#..", "...#.", "....#", "...#.", "..#..", ".#..."}},
  {'!', {"..#..", "..#..", "..#..", "..#..", "..#..", ".....", "..#.."}},
  {'\'', {"..#..", "..#..", ".#...", ".....", ".....", ".....", "....."}},
  {'"', {".#.#.", ".#.#.", ".....", ".....", ".....", ".....", "....."}},
  {';', {".....", ".##..", ".##..", ".....", ".##..", "..#..", ".#..."}},
  {'*', {".....", "..#..", "#.#.#", ".###.", "#.#.#", "..#..", "....."}},
  {'#', {".#.#.", ".#.#.", "#####", ".#.#.", "#####", ".#.#.", ".#.#."}},
  {'&', {".##..", "#..#.", "#.#..", ".#...", "#.#.#", "#..#.", ".##.#"}},
  {'[', {".###.", ".#...", ".#...", ".#...", ".#...", ".#...", ".###."}},
  {']', {".###.", "...#.", "...#.", "...#.", "...#.", "...#.", ".###."}},
  {kVisibleSpace, {".....", ".....", ".....", ".....", ".....", "#...#", "#####"}},
};
// clang-format on

// Characters the font lacks are drawn as '?'.
const Glyph &glyphFor(char c) {
  const Glyph *fallback = nullptr;
  for (const Glyph &g : kFont) {
    if (g.c == c)
      return g;
    if (g.c == '?')
      fallback = &g;
  }
  return *fallback;
}

// ------------------------------------------------------------------------------------------------
// Raster drawing
// ------------------------------------------------------------------------------------------------

struct Rect {
  int x0, y0, x1, y1; // inclusive
  bool contains(int x, int y) const { return x >= x0 && x <= x1 && y >= y0 && y <= y1; }
};

class Canvas {
public:
  Canvas(int w, int h) : w_(w), h_(h), rgb_(static_cast<size_t>(w) * h * 3, 0xff) {}

  int width() const { return w_; }
  int height() const { return h_; }
  const std::vector<uint8_t> &pixels() const { return rgb_; }

  void set(int x, int y, uint32_t color) {
    if (x < 0 || y < 0 || x >= w_ || y >= h_)
      return;
    uint8_t *p = &rgb_[(static_cast<size_t>(y) * w_ + x) * 3];
    p[0] = static_cast<uint8_t>(color >> 16);
    p[1] = static_cast<uint8_t>(color >> 8);
    p[2] = static_cast<uint8_t>(color);
  }

  void fill(const Rect &r, uint32_t color) {
    for (int y = r.y0; y <= r.y1; ++y)
      for (int x = r.x0; x <= r.x1; ++x)
        set(x, y, color);
  }

  void outline(const Rect &r, uint32_t color) {
    fill({r.x0, r.y0, r.x1, r.y0}, color);
    fill({r.x0, r.y1, r.x1, r.y1}, color);
    fill({r.x0, r.y0, r.x0, r.y1}, color);
    fill({r.x1, r.y0, r.x1, r.y1}, color);
  }

  // Bresenham with a 2x2 brush (the 2-px line width), clipped to `clip`.
  void line(int x0, int y0, int x1, int y1, uint32_t color, const Rect &clip) {
    int dx = std::abs(x1 - x0), sx = x0 < x1 ? 1 : -1;
    int dy = -std::abs(y1 - y0), sy = y0 < y1 ? 1 : -1;
    int err = dx + dy;
    for (;;) {
      for (int by = 0; by < 2; ++by)
        for (int bx = 0; bx < 2; ++bx)
          if (clip.contains(x0 + bx, y0 + by))
            set(x0 + bx, y0 + by, color);
      if (x0 == x1 && y0 == y1)
        return;
      int e2 = 2 * err;
      if (e2 >= dy) {
        err += dy;
        x0 += sx;
      }
      if (e2 <= dx) {
        err += dx;
        y0 += sy;
      }
    }
  }

  // Draws `text` with its top-left corner at (x, y), each font pixel as a scale x scale square.
  void text(int x, int y, const std::string &s, uint32_t color, int scale) {
    for (char c : s) {
      const Glyph &g = glyphFor(c);
      for (int row = 0; row < kGlyphH; ++row)
        for (int col = 0; col < kGlyphW; ++col)
          if (g.rows[row][col] == '#')
            fill({x + col * scale, y + row * scale, x + (col + 1) * scale - 1,
                  y + (row + 1) * scale - 1},
                 color);
      x += kCellW * scale;
    }
  }

  // Draws `s` turned 90 degrees counter-clockwise, reading upwards at scale 1: the glyphs' tops
  // face left, the text occupies columns x .. x + 6 and ends textWidth(s, 1) pixels above yBottom.
  void textUp(int x, int yBottom, const std::string &s, uint32_t color) {
    for (char c : s) {
      const Glyph &g = glyphFor(c);
      for (int row = 0; row < kGlyphH; ++row)
        for (int col = 0; col < kGlyphW; ++col)
          if (g.rows[row][col] == '#')
            set(x + row, yBottom - col, color);
      yBottom -= kCellW;
    }
  }

private:
  int w_, h_;
  std::vector<uint8_t> rgb_;
};

int textWidth(const std::string &s, int scale) {
  return s.empty() ? 0 : static_cast<int>(s.size()) * kCellW * scale - scale;
}

// ------------------------------------------------------------------------------------------------
// Axes
// ------------------------------------------------------------------------------------------------

struct Tick {
  double value; // in data units
  std::string label;
};

struct Axis {
  double lo = 0, hi = 1; // in axis units (log10 of the data for a log axis)
  bool log = false;
  std::vector<Tick> ticks;
  std::vector<double> minorTicks; // log axes: 2..9 x 10^k, unlabelled

  // Position in [0, 1] along the axis.
  double fraction(double v) const { return ((log ? std::log10(v) : v) - lo) / (hi - lo); }
};

// 1, 2 or 5 times a power of ten, giving about `target` intervals over `range`.
double niceStep(double range, int target) {
  double raw = range / target;
  double mag = std::pow(10.0, std::floor(std::log10(raw)));
  double norm = raw / mag;
  return (norm < 1.5 ? 1 : norm < 3 ? 2 : norm < 7 ? 5 : 10) * mag;
}

// Enough decimals to tell ticks `step` apart, and %g for very large or small magnitudes.
std::string linearLabel(double v, double step) {
  char buf[32];
  if (std::fabs(v) < step * 1e-6)
    v = 0; // -1.2e-17 from floating-point steps reads as 0
  if (std::fabs(v) >= 1e6 || step < 1e-4)
    std::snprintf(buf, sizeof buf, "%.3g", v);
  else
    std::snprintf(buf, sizeof buf, "%.*f",
                  std::max(0, -static_cast<int>(std::floor(std::log10(step) + 1e-9))), v);
  return buf;
}

std::string decadeLabel(int e) {
  char buf[32];
  if (e >= -3 && e <= 4)
    std::snprintf(buf, sizeof buf, "%g", std::pow(10.0, e));
  else
    std::snprintf(buf, sizeof buf, "1e%d", e);
  return buf;
}

Axis linearAxis(double min, double max, int target) {
  if (!(max > min)) { // one value (or none): give it some room
    double pad = min != 0 ? std::fabs(min) * 0.1 : 1.0;
    min -= pad;
    max += pad;
  }
  Axis a;
  double step = niceStep(max - min, target);
  a.lo = std::floor(min / step) * step;
  a.hi = std::ceil(max / step) * step;
  long n = std::lround((a.hi - a.lo) / step);
  for (long i = 0; i <= n; ++i) {
    double v = a.lo + static_cast<double>(i) * step;
    a.ticks.push_back({v, linearLabel(v, step)});
  }
  return a;
}

Axis logAxis(double min, double max) {
  Axis a;
  a.log = true;
  int lo = static_cast<int>(std::floor(std::log10(min)));
  int hi = static_cast<int>(std::ceil(std::log10(max)));
  if (hi == lo)
    ++hi;
  a.lo = lo;
  a.hi = hi;
  int every = (hi - lo + 7) / 8; // at most ~8 labelled decades
  for (int e = lo; e <= hi; e += every)
    a.ticks.push_back({std::pow(10.0, e), decadeLabel(e)});
  if (every == 1)
    for (int e = lo; e < hi; ++e)
      for (int m = 2; m <= 9; ++m)
        a.minorTicks.push_back(m * std::pow(10.0, e));
  return a;
}

bool finitePoint(const Series &s, size_t i) { return std::isfinite(s.x[i]) && std::isfinite(s.y[i]); }

struct Range {
  double min = INFINITY, max = -INFINITY;
  void add(double v) {
    min = std::min(min, v);
    max = std::max(max, v);
  }
  bool empty() const { return min > max; }
};

// ------------------------------------------------------------------------------------------------
// The plot
// ------------------------------------------------------------------------------------------------

constexpr uint32_t kBlack = 0x000000, kGrid = 0xe6e6e6, kFrame = 0x808080, kText = 0x202020;
constexpr int kLabelScale = 1, kTitleScale = 2, kTickLen = 5;

class LossPlot {
public:
  LossPlot(const std::vector<Series> &series, const std::string &title)
      : series_(series), title_(title), canvas_(kPlotWidth, kPlotHeight),
        area_{80, 44, static_cast<int>(kPlotWidth) - 24, static_cast<int>(kPlotHeight) - 44} {}

  const Canvas &render() {
    for (const Series &s : series_) // before anything indexes y by x's indices
      if (s.x.size() != s.y.size())
        throw std::invalid_argument("writeLossCurvePng: series '" + s.name + "' has " +
                                    std::to_string(s.x.size()) + " x values but " +
                                    std::to_string(s.y.size()) + " y values");
    computeAxes();
    drawGrid();
    for (const Series &s : series_)
      drawSeries(s);
    drawAxes();
    drawLegend();
    canvas_.text((canvas_.width() - textWidth(title_, kTitleScale)) / 2, 12, title_, kBlack,
                 kTitleScale);
    return canvas_;
  }

private:
  void computeAxes() {
    Range xr, yr;
    for (const Series &s : series_)
      for (size_t i = 0; i < s.x.size(); ++i)
        if (finitePoint(s, i)) {
          xr.add(s.x[i]);
          yr.add(s.y[i]);
        }
    if (xr.empty()) { // nothing to plot: still draw a frame with 0..1 axes
      xr.add(0), xr.add(1), yr.add(0), yr.add(1);
    }
    x_ = linearAxis(xr.min, xr.max, 8);
    // Log when losses span orders of magnitude (a linear axis would flatten everything late).
    y_ = yr.min > 0 && yr.max / yr.min > 100 ? logAxis(yr.min, yr.max) : linearAxis(yr.min, yr.max, 6);
  }

  int px(double x) const {
    return area_.x0 + static_cast<int>(std::lround(x_.fraction(x) * (area_.x1 - area_.x0)));
  }
  int py(double y) const {
    return area_.y1 - static_cast<int>(std::lround(y_.fraction(y) * (area_.y1 - area_.y0)));
  }

  void drawGrid() {
    for (const Tick &t : x_.ticks)
      canvas_.fill({px(t.value), area_.y0, px(t.value), area_.y1}, kGrid);
    for (const Tick &t : y_.ticks)
      canvas_.fill({area_.x0, py(t.value), area_.x1, py(t.value)}, kGrid);
  }

  void drawSeries(const Series &s) {
    bool havePrev = false, alone = true;
    int prevX = 0, prevY = 0;
    for (size_t i = 0; i < s.x.size(); ++i) {
      if (!finitePoint(s, i))
        continue; // skipped: the neighbours get joined
      int x = px(s.x[i]), y = py(s.y[i]);
      canvas_.line(havePrev ? prevX : x, havePrev ? prevY : y, x, y, s.rgb, area_);
      alone = !havePrev;
      prevX = x, prevY = y, havePrev = true;
    }
    if (havePrev && alone) // a single point: a 2x2 dot would be easy to miss, draw a 6x6 marker
      for (int y = std::max(prevY - 2, area_.y0); y <= std::min(prevY + 3, area_.y1); ++y)
        for (int x = std::max(prevX - 2, area_.x0); x <= std::min(prevX + 3, area_.x1); ++x)
          canvas_.set(x, y, s.rgb);
  }

  void drawAxes() {
    canvas_.outline(area_, kFrame);
    canvas_.fill({area_.x0, area_.y1, area_.x1, area_.y1}, kBlack); // x axis
    canvas_.fill({area_.x0, area_.y0, area_.x0, area_.y1}, kBlack); // y axis
    int charH = kGlyphH * kLabelScale;
    for (const Tick &t : x_.ticks) {
      int x = px(t.value);
      canvas_.fill({x, area_.y1, x, area_.y1 + kTickLen}, kBlack);
      canvas_.text(x - textWidth(t.label, kLabelScale) / 2, area_.y1 + kTickLen + 4, t.label,
                   kText, kLabelScale);
    }
    for (const Tick &t : y_.ticks) {
      int y = py(t.value);
      canvas_.fill({area_.x0 - kTickLen, y, area_.x0, y}, kBlack);
      canvas_.text(area_.x0 - kTickLen - 4 - textWidth(t.label, kLabelScale), y - charH / 2,
                   t.label, kText, kLabelScale);
    }
    for (double v : y_.minorTicks) {
      int y = py(v);
      canvas_.fill({area_.x0 - kTickLen / 2, y, area_.x0, y}, kBlack);
    }
  }

  // Top right inside the plot area, where a falling loss curve usually leaves room.
  void drawLegend() {
    std::vector<const Series *> named;
    int textW = 0;
    for (const Series &s : series_)
      if (!s.name.empty()) {
        named.push_back(&s);
        textW = std::max(textW, textWidth(s.name, kLabelScale));
      }
    if (named.empty())
      return;
    constexpr int kPad = 6, kSwatch = 20, kRowH = 14;
    int w = kPad + kSwatch + kPad + textW + kPad;
    int h = kPad + static_cast<int>(named.size()) * kRowH - (kRowH - kGlyphH * kLabelScale) + kPad;
    Rect box{area_.x1 - 10 - w, area_.y0 + 10, area_.x1 - 10, area_.y0 + 10 + h};
    canvas_.fill(box, 0xffffff);
    canvas_.outline(box, kFrame);
    int y = box.y0 + kPad;
    for (const Series *s : named) {
      int mid = y + kGlyphH * kLabelScale / 2;
      canvas_.fill({box.x0 + kPad, mid - 1, box.x0 + kPad + kSwatch - 1, mid}, s->rgb);
      canvas_.text(box.x0 + kPad + kSwatch + kPad, y, s->name, kText, kLabelScale);
      y += kRowH;
    }
  }

  const std::vector<Series> &series_;
  std::string title_;
  Canvas canvas_;
  Rect area_;
  Axis x_, y_;
};

// ------------------------------------------------------------------------------------------------
// The heatmap
// ------------------------------------------------------------------------------------------------

constexpr uint32_t kHeatNan = 0xd62728; // off the colour map, so a NaN cannot pass for a weight
constexpr int kMaxCell = 20, kMinCell = 4, kHeatmapSpan = 800; // px
constexpr int kLabelPitch = kGlyphH + 1; // the least spacing of label lines: a glyph and 1 px
constexpr int kMaxColumnChars = 8, kMaxRowChars = 12;
constexpr int kPad = 12, kLabelGap = 5, kBarGap = 16, kBarW = 12, kMinBarH = 64;

// White -> mid blue -> dark blue (the ends and middle of matplotlib's "Blues"), interpolated in
// RGB. The middle stop keeps weights around 0.5 saturated; a straight white-to-navy ramp greys
// them out. NaN is kHeatNan; anything else is clamped to [0, 1].
uint32_t heatColour(float v) {
  if (std::isnan(v))
    return kHeatNan;
  static const uint32_t kStops[] = {0xffffff, 0x6baed6, 0x08306b};
  double t = std::clamp(static_cast<double>(v), 0.0, 1.0) * 2;
  int i = std::min(static_cast<int>(t), 1);
  double f = t - i;
  uint32_t out = 0;
  for (int shift = 16; shift >= 0; shift -= 8) {
    double a = (kStops[i] >> shift) & 0xff, b = (kStops[i + 1] >> shift) & 0xff;
    out |= static_cast<uint32_t>(std::lround(a + (b - a) * f)) << shift;
  }
  return out;
}

// What the ASCII font can show of `s`: a space becomes kVisibleSpace when `showSpaces`, a UTF-8
// sequence one '?' (not one per byte), any other unprintable byte '?'; more than maxChars
// characters are cut to maxChars - 1 and a '.'.
std::string displayText(const std::string &s, bool showSpaces, size_t maxChars) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (c >= 0x80) {
      while (i + 1 < s.size() && (static_cast<unsigned char>(s[i + 1]) & 0xc0) == 0x80)
        ++i; // continuation bytes 10xxxxxx
      out += '?';
    } else if (c == ' ') {
      out += showSpaces ? kVisibleSpace : ' ';
    } else {
      out += std::isprint(c) ? static_cast<char>(c) : '?';
    }
  }
  if (out.size() > maxChars)
    out = out.substr(0, maxChars - 1) + ".";
  return out;
}

Canvas renderHeatmap(const std::vector<std::vector<float>> &weights,
                     const std::vector<std::string> &columnLabels,
                     const std::vector<std::string> &rowLabels, const std::string &title) {
  if (weights.empty() || columnLabels.empty())
    throw std::invalid_argument("writeHeatmapPng: no weights to draw");
  if (weights.size() != rowLabels.size())
    throw std::invalid_argument("writeHeatmapPng: " + std::to_string(weights.size()) +
                                " rows of weights but " + std::to_string(rowLabels.size()) +
                                " row labels");
  for (size_t i = 0; i < weights.size(); ++i)
    if (weights[i].size() != columnLabels.size())
      throw std::invalid_argument("writeHeatmapPng: row " + std::to_string(i) + " has " +
                                  std::to_string(weights[i].size()) + " weights but there are " +
                                  std::to_string(columnLabels.size()) + " column labels");

  // Cells shrink from 20 px so that long sequences stay about kHeatmapSpan wide; when they get
  // smaller than a line of text, only every `stride`-th row and column is labelled.
  int rows = static_cast<int>(weights.size()), cols = static_cast<int>(columnLabels.size());
  int cell = std::clamp(kHeatmapSpan / std::max(rows, cols), kMinCell, kMaxCell);
  int stride = (kLabelPitch + cell - 1) / cell;

  std::vector<std::string> colText, rowText;
  size_t longest = 0;
  for (const std::string &l : columnLabels) {
    colText.push_back(displayText(l, true, kMaxColumnChars));
    longest = std::max(longest, colText.back().size());
  }
  for (const std::string &l : rowLabels) {
    rowText.push_back(displayText(l, true, kMaxRowChars));
    longest = std::max(longest, rowText.back().size());
  }
  std::string titleText = displayText(title, false, title.size());
  // Single characters (the dates model's tokens) are hard to read at scale 1 beside 20-px cells,
  // so they are drawn double size where cells have room; words stay at scale 1 to keep the
  // margins small.
  int scale = longest <= 1 && cell >= 2 * kLabelPitch ? 2 : 1;
  int colW = 0, rowW = 0;
  for (const std::string &t : colText)
    colW = std::max(colW, textWidth(t, scale));
  for (const std::string &t : rowText)
    rowW = std::max(rowW, textWidth(t, scale));
  int charH = kGlyphH * scale;
  // Column labels read across while they fit their column (characters, short tokens), and
  // upwards (turned 90 degrees, only ever at scale 1) when a word would run into its neighbours.
  bool turned = colW + 2 > cell * stride;

  int titleH = titleText.empty() ? 0 : kGlyphH * kTitleScale + 10;
  int gridX = kPad + rowW + kLabelGap + 1;
  int gridY = kPad + titleH + (turned ? colW : charH) + kLabelGap + 1;
  int gridW = cols * cell, gridH = rows * cell;
  int barX = gridX + gridW + kBarGap, barH = std::max(gridH, kMinBarH);
  int width = std::max(barX + kBarW + 6 + textWidth("0.5", 1) + kPad,
                       2 * kPad + textWidth(titleText, kTitleScale));
  int height = gridY + barH + 1 + kPad;

  Canvas canvas(width, height);
  canvas.text((width - textWidth(titleText, kTitleScale)) / 2, kPad, titleText, kBlack,
              kTitleScale);
  for (int i = 0; i < rows; ++i)
    for (int j = 0; j < cols; ++j)
      canvas.fill({gridX + j * cell, gridY + i * cell, gridX + (j + 1) * cell - 1,
                   gridY + (i + 1) * cell - 1},
                  heatColour(weights[i][j]));
  canvas.outline({gridX - 1, gridY - 1, gridX + gridW, gridY + gridH}, kFrame);

  for (int j = 0; j < cols; j += stride) {
    const std::string &t = colText[j];
    if (turned)
      canvas.textUp(gridX + j * cell + (cell - kGlyphH) / 2, gridY - 1 - kLabelGap, t, kText);
    else
      canvas.text(gridX + j * cell + (cell - textWidth(t, scale)) / 2,
                  gridY - 1 - kLabelGap - charH, t, kText, scale);
  }
  for (int i = 0; i < rows; i += stride) // right-aligned against the grid
    canvas.text(gridX - 1 - kLabelGap - textWidth(rowText[i], scale),
                gridY + i * cell + (cell - charH) / 2, rowText[i], kText, scale);

  // The colour bar: 1 at the top, 0 at the bottom, ticks at 0, 0.5 and 1.
  for (int y = 0; y < barH; ++y)
    canvas.fill({barX, gridY + y, barX + kBarW - 1, gridY + y},
                heatColour(static_cast<float>(1.0 - static_cast<double>(y) / (barH - 1))));
  canvas.outline({barX - 1, gridY - 1, barX + kBarW, gridY + barH}, kFrame);
  for (auto [y, label] : {std::pair{0, "1"}, {(barH - 1) / 2, "0.5"}, {barH - 1, "0"}}) {
    canvas.fill({barX + kBarW + 1, gridY + y, barX + kBarW + 3, gridY + y}, kBlack);
    canvas.text(barX + kBarW + 6, gridY + y - kGlyphH / 2, label, kText, 1);
  }
  return canvas;
}

[[noreturn]] void writeError(const std::string &path, const std::string &what) {
  throw std::runtime_error(path + ": error: " + what + ": " + std::strerror(errno));
}

// Writes to "<path>.tmp.<pid>" and renames it over `path` (atomic on POSIX file systems).
void writeFileAtomically(const std::string &path, const std::vector<uint8_t> &bytes) {
  std::string tmp = path + ".tmp." + std::to_string(getpid());
  std::FILE *f = std::fopen(tmp.c_str(), "wb");
  if (!f)
    writeError(path, "cannot create " + tmp);
  bool ok = std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size();
  ok = std::fclose(f) == 0 && ok;
  if (!ok) {
    int saved = errno;
    std::remove(tmp.c_str());
    errno = saved;
    writeError(path, "cannot write " + tmp);
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    int saved = errno;
    std::remove(tmp.c_str());
    errno = saved;
    writeError(path, "cannot rename " + tmp);
  }
}

} // namespace

void writeLossCurvePng(const std::string &path, const std::vector<Series> &series,
                       const std::string &title) {
  LossPlot plot(series, title);
  const Canvas &canvas = plot.render();
  writeFileAtomically(path, encodePng(kPlotWidth, kPlotHeight, canvas.pixels()));
}

std::vector<std::string> writeAlignmentPlots(const task::Seq2SeqDecoder &decoder,
                                             const std::string &dir,
                                             const std::vector<std::string> &lines,
                                             const std::vector<task::Encoded> &sources,
                                             const std::vector<decode::Hypothesis> &outputs) {
  const task::PairData &data = decoder.pairData();
  std::vector<std::vector<std::vector<float>>> weights = decoder.alignments(sources, outputs);
  std::filesystem::create_directories(dir);
  std::vector<std::string> paths;
  for (size_t i = 0; i < sources.size(); ++i) {
    std::vector<std::string> columns = data::tokenize(lines[i], data.tokenize);
    std::vector<std::string> rowLabels = data.target.decode(outputs[i].tokens);
    rowLabels.push_back("<eos>");
    rowLabels.resize(weights[i].size()); // an output that ended at the length limit: no eos
    std::string path = dir + "/attention-" + std::to_string(i) + ".png";
    writeHeatmapPng(path, weights[i], columns, rowLabels,
                    "\"" + lines[i] + "\" -> \"" + decoder.text(outputs[i]) + "\"");
    paths.push_back(path);
  }
  return paths;
}

void writeLossPlot(const std::string &dir, const std::string &title) {
  Series loss{"loss", {}, {}, 0x1f77b4}, valid{"valid_loss", {}, {}, 0xd62728};
  for (const train::Record &r : train::readMetrics(dir + "/metrics.jsonl")) {
    loss.x.push_back(r.step);
    loss.y.push_back(r.loss);
    double v = r.get("valid_loss");
    if (!std::isnan(v)) {
      valid.x.push_back(r.step);
      valid.y.push_back(v);
    }
  }
  std::vector<Series> series = {loss};
  if (!valid.x.empty())
    series.push_back(valid);
  writeLossCurvePng(dir + "/loss.png", series, title);
}

void writeHeatmapPng(const std::string &path, const std::vector<std::vector<float>> &weights,
                     const std::vector<std::string> &columnLabels,
                     const std::vector<std::string> &rowLabels, const std::string &title) {
  Canvas canvas = renderHeatmap(weights, columnLabels, rowLabels, title);
  writeFileAtomically(path, encodePng(static_cast<uint32_t>(canvas.width()),
                                      static_cast<uint32_t>(canvas.height()), canvas.pixels()));
}

} // namespace attn::plot
