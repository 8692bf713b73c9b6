#include "attn/plot/Plot.h"
#include "attn/train/MetricsLog.h"

#include <cairo.h>
#include <png.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
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

namespace {

// ------------------------------------------------------------------------------------------------
// Drawing: cairo (anti-aliased lines, text set in a real font through fontconfig)
// ------------------------------------------------------------------------------------------------

// fontconfig resolves the family to DejaVu Sans where it is installed (Debian's
// fonts-dejavu-core, which the build installs), else to the nearest sans-serif font.
constexpr const char *kFontFamily = "DejaVu Sans";

struct Rect {
  int x0, y0, x1, y1; // inclusive
};

struct Point {
  double x, y;
};

using SurfacePtr = std::unique_ptr<cairo_surface_t, decltype(&cairo_surface_destroy)>;
using ContextPtr = std::unique_ptr<cairo_t, decltype(&cairo_destroy)>;

void setColour(cairo_t *cr, uint32_t rgb) {
  cairo_set_source_rgb(cr, ((rgb >> 16) & 0xff) / 255.0, ((rgb >> 8) & 0xff) / 255.0,
                       (rgb & 0xff) / 255.0);
}

void setFont(cairo_t *cr, double size, bool bold) {
  cairo_select_font_face(cr, kFontFamily, CAIRO_FONT_SLANT_NORMAL,
                         bold ? CAIRO_FONT_WEIGHT_BOLD : CAIRO_FONT_WEIGHT_NORMAL);
  cairo_set_font_size(cr, size);
}

// A font size and weight; text is measured and drawn in one.
struct Font {
  double size;
  bool bold = false;
};

// An RGB image drawn with cairo. Rectangles sit on whole pixels, so cells, grid lines and frames
// keep their exact colours; curves and text are anti-aliased.
class Canvas {
public:
  Canvas(int w, int h)
      : w_(w), h_(h),
        surface_(cairo_image_surface_create(CAIRO_FORMAT_RGB24, w, h), cairo_surface_destroy),
        cr_(cairo_create(surface_.get()), cairo_destroy) {
    if (cairo_status(cr_.get()) != CAIRO_STATUS_SUCCESS)
      throw std::runtime_error(std::string("cairo: ") +
                               cairo_status_to_string(cairo_status(cr_.get())));
    cairo_set_source_rgb(cr_.get(), 1, 1, 1);
    cairo_paint(cr_.get());
  }

  int width() const { return w_; }
  int height() const { return h_; }

  void fill(const Rect &r, uint32_t colour) {
    setColour(cr_.get(), colour);
    cairo_rectangle(cr_.get(), r.x0, r.y0, r.x1 - r.x0 + 1, r.y1 - r.y0 + 1);
    cairo_fill(cr_.get());
  }

  void outline(const Rect &r, uint32_t colour) {
    fill({r.x0, r.y0, r.x1, r.y0}, colour);
    fill({r.x0, r.y1, r.x1, r.y1}, colour);
    fill({r.x0, r.y0, r.x0, r.y1}, colour);
    fill({r.x1, r.y0, r.x1, r.y1}, colour);
  }

  // Points joined by a `width`-px line with round joins, clipped to `clip`.
  void polyline(const std::vector<Point> &points, uint32_t colour, double width, const Rect &clip) {
    if (points.empty())
      return;
    cairo_t *cr = cr_.get();
    cairo_save(cr);
    cairo_rectangle(cr, clip.x0, clip.y0, clip.x1 - clip.x0 + 1, clip.y1 - clip.y0 + 1);
    cairo_clip(cr);
    // Pixel centres: point (x, y) is the middle of pixel (x, y).
    cairo_move_to(cr, points[0].x + 0.5, points[0].y + 0.5);
    for (const Point &p : points)
      cairo_line_to(cr, p.x + 0.5, p.y + 0.5);
    setColour(cr, colour);
    cairo_set_line_width(cr, width);
    cairo_set_line_join(cr, CAIRO_LINE_JOIN_ROUND);
    cairo_set_line_cap(cr, CAIRO_LINE_CAP_ROUND);
    cairo_stroke(cr);
    cairo_restore(cr);
  }

  void disc(Point centre, double radius, uint32_t colour, const Rect &clip) {
    cairo_t *cr = cr_.get();
    cairo_save(cr);
    cairo_rectangle(cr, clip.x0, clip.y0, clip.x1 - clip.x0 + 1, clip.y1 - clip.y0 + 1);
    cairo_clip(cr);
    cairo_arc(cr, centre.x + 0.5, centre.y + 0.5, radius, 0, 2 * M_PI);
    setColour(cr, colour);
    cairo_fill(cr);
    cairo_restore(cr);
  }

  // Draws `s` (UTF-8) with the top of its line box at y and its start at x.
  void text(double x, double y, const std::string &s, uint32_t colour, Font f) {
    cairo_t *cr = cr_.get();
    setFont(cr, f.size, f.bold);
    cairo_font_extents_t fe;
    cairo_font_extents(cr, &fe);
    setColour(cr, colour);
    cairo_move_to(cr, x, y + fe.ascent);
    cairo_show_text(cr, s.c_str());
  }

  // Draws `s` turned 90 degrees counter-clockwise, reading upwards: the glyphs' tops face left,
  // the line box occupies columns x .. x + lineHeight and the text ends at yBottom.
  void textUp(double x, double yBottom, const std::string &s, uint32_t colour, Font f) {
    cairo_t *cr = cr_.get();
    cairo_save(cr);
    setFont(cr, f.size, f.bold);
    cairo_font_extents_t fe;
    cairo_font_extents(cr, &fe);
    cairo_translate(cr, x + fe.ascent, yBottom);
    cairo_rotate(cr, -M_PI / 2);
    setColour(cr, colour);
    cairo_move_to(cr, 0, 0);
    cairo_show_text(cr, s.c_str());
    cairo_restore(cr);
  }

  // height rows of width * 3 bytes, top row first (cairo's RGB24 is one native-endian
  // 0x00RRGGBB word per pixel).
  std::vector<uint8_t> pixels() const {
    cairo_surface_flush(surface_.get());
    if (cairo_status(cr_.get()) != CAIRO_STATUS_SUCCESS)
      throw std::runtime_error(std::string("cairo: ") +
                               cairo_status_to_string(cairo_status(cr_.get())));
    const unsigned char *data = cairo_image_surface_get_data(surface_.get());
    int stride = cairo_image_surface_get_stride(surface_.get());
    std::vector<uint8_t> rgb(static_cast<size_t>(w_) * h_ * 3);
    for (int y = 0; y < h_; ++y) {
      const uint32_t *row =
          reinterpret_cast<const uint32_t *>(data + static_cast<size_t>(y) * stride);
      for (int x = 0; x < w_; ++x) {
        uint8_t *p = &rgb[(static_cast<size_t>(y) * w_ + x) * 3];
        p[0] = static_cast<uint8_t>(row[x] >> 16);
        p[1] = static_cast<uint8_t>(row[x] >> 8);
        p[2] = static_cast<uint8_t>(row[x]);
      }
    }
    return rgb;
  }

private:
  int w_, h_;
  SurfacePtr surface_;
  ContextPtr cr_;
};

// Text measurement before there is a canvas to draw on (a heatmap's size follows from its
// labels).
class Measure {
public:
  Measure()
      : surface_(cairo_image_surface_create(CAIRO_FORMAT_RGB24, 1, 1), cairo_surface_destroy),
        cr_(cairo_create(surface_.get()), cairo_destroy) {}

  int width(const std::string &s, Font f) {
    if (s.empty())
      return 0;
    setFont(cr_.get(), f.size, f.bold);
    cairo_text_extents_t te;
    cairo_text_extents(cr_.get(), s.c_str(), &te);
    return static_cast<int>(std::ceil(te.x_advance));
  }

  // The height of a line of text: ascent + descent.
  int lineHeight(Font f) {
    setFont(cr_.get(), f.size, f.bold);
    cairo_font_extents_t fe;
    cairo_font_extents(cr_.get(), &fe);
    return static_cast<int>(std::ceil(fe.ascent + fe.descent));
  }

private:
  SurfacePtr surface_;
  ContextPtr cr_;
};

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
// Text
// ------------------------------------------------------------------------------------------------

// The number of UTF-8 sequences in a valid UTF-8 string.
size_t characters(const std::string &s) {
  size_t n = 0;
  for (unsigned char c : s)
    n += (c & 0xc0) != 0x80;
  return n;
}

// The length of the valid UTF-8 sequence at s[i], or 0 (cairo refuses invalid UTF-8, and a
// refused string would stop every later drawing call on the canvas).
size_t sequenceLength(const std::string &s, size_t i) {
  unsigned char c = static_cast<unsigned char>(s[i]);
  size_t n = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xe ? 3 : (c >> 3) == 0x1e ? 4 : 0;
  if (n == 0 || i + n > s.size())
    return 0;
  for (size_t k = 1; k < n; ++k)
    if ((static_cast<unsigned char>(s[i + k]) & 0xc0) != 0x80)
      return 0;
  return n;
}

// What a label shows of `s`: a space becomes U+2423 (an open box) when `showSpaces`, so a token
// that is a space does not look like a missing label; a control character or a byte that is not
// valid UTF-8 becomes '?'; more than maxChars characters are cut to maxChars - 1 and an ellipsis.
std::string displayText(const std::string &s, bool showSpaces, size_t maxChars) {
  std::vector<std::string> chars;
  for (size_t i = 0; i < s.size();) {
    size_t n = sequenceLength(s, i);
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (n == 0) {
      chars.push_back("?");
      ++i;
      continue;
    }
    if (c == ' ')
      chars.push_back(showSpaces ? "\u2423" : " ");
    else if (n == 1 && !std::isprint(c))
      chars.push_back("?");
    else
      chars.push_back(s.substr(i, n));
    i += n;
  }
  if (chars.size() > maxChars) {
    chars.resize(maxChars - 1);
    chars.push_back("\u2026");
  }
  std::string out;
  for (const std::string &c : chars)
    out += c;
  return out;
}

// ------------------------------------------------------------------------------------------------
// The plot
// ------------------------------------------------------------------------------------------------

constexpr uint32_t kBlack = 0x000000, kGrid = 0xe6e6e6, kFrame = 0x808080, kText = 0x202020;
constexpr Font kLabelFont{11}, kTitleFont{15, true};
constexpr int kTickLen = 5;
constexpr double kCurveWidth = 2.0;

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
    std::string title = displayText(title_, false, title_.size());
    canvas_.text((canvas_.width() - measure_.width(title, kTitleFont)) / 2.0, 12, title, kBlack,
                 kTitleFont);
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

  // Pixel coordinates: exact for curves, rounded for grid lines and ticks.
  double fx(double x) const { return area_.x0 + x_.fraction(x) * (area_.x1 - area_.x0); }
  double fy(double y) const { return area_.y1 - y_.fraction(y) * (area_.y1 - area_.y0); }
  int px(double x) const { return static_cast<int>(std::lround(fx(x))); }
  int py(double y) const { return static_cast<int>(std::lround(fy(y))); }

  void drawGrid() {
    for (const Tick &t : x_.ticks)
      canvas_.fill({px(t.value), area_.y0, px(t.value), area_.y1}, kGrid);
    for (const Tick &t : y_.ticks)
      canvas_.fill({area_.x0, py(t.value), area_.x1, py(t.value)}, kGrid);
  }

  void drawSeries(const Series &s) {
    std::vector<Point> points;
    for (size_t i = 0; i < s.x.size(); ++i)
      if (finitePoint(s, i)) // others are skipped: their neighbours get joined
        points.push_back({fx(s.x[i]), fy(s.y[i])});
    if (points.size() == 1) // a single point: a dot the curve's width would be easy to miss
      canvas_.disc(points[0], 3.5, s.rgb, area_);
    else
      canvas_.polyline(points, s.rgb, kCurveWidth, area_);
  }

  void drawAxes() {
    canvas_.outline(area_, kFrame);
    canvas_.fill({area_.x0, area_.y1, area_.x1, area_.y1}, kBlack); // x axis
    canvas_.fill({area_.x0, area_.y0, area_.x0, area_.y1}, kBlack); // y axis
    int lineH = measure_.lineHeight(kLabelFont);
    for (const Tick &t : x_.ticks) {
      int x = px(t.value);
      canvas_.fill({x, area_.y1, x, area_.y1 + kTickLen}, kBlack);
      canvas_.text(x - measure_.width(t.label, kLabelFont) / 2.0, area_.y1 + kTickLen + 3, t.label,
                   kText, kLabelFont);
    }
    for (const Tick &t : y_.ticks) {
      int y = py(t.value);
      canvas_.fill({area_.x0 - kTickLen, y, area_.x0, y}, kBlack);
      canvas_.text(area_.x0 - kTickLen - 4 - measure_.width(t.label, kLabelFont), y - lineH / 2.0,
                   t.label, kText, kLabelFont);
    }
    for (double v : y_.minorTicks) {
      int y = py(v);
      canvas_.fill({area_.x0 - kTickLen / 2, y, area_.x0, y}, kBlack);
    }
  }

  // Top right inside the plot area, where a falling loss curve usually leaves room.
  void drawLegend() {
    std::vector<std::pair<const Series *, std::string>> named;
    int textW = 0;
    for (const Series &s : series_)
      if (!s.name.empty()) {
        named.push_back({&s, displayText(s.name, false, s.name.size())});
        textW = std::max(textW, measure_.width(named.back().second, kLabelFont));
      }
    if (named.empty())
      return;
    constexpr int kPad = 6, kSwatch = 20;
    int lineH = measure_.lineHeight(kLabelFont), rowH = lineH + 2;
    int w = kPad + kSwatch + kPad + textW + kPad;
    int h = kPad + static_cast<int>(named.size()) * rowH - (rowH - lineH) + kPad;
    Rect box{area_.x1 - 10 - w, area_.y0 + 10, area_.x1 - 10, area_.y0 + 10 + h};
    canvas_.fill(box, 0xffffff);
    canvas_.outline(box, kFrame);
    int y = box.y0 + kPad;
    for (const auto &[s, name] : named) {
      int mid = y + lineH / 2;
      canvas_.fill({box.x0 + kPad, mid - 1, box.x0 + kPad + kSwatch - 1, mid}, s->rgb);
      canvas_.text(box.x0 + kPad + kSwatch + kPad, y, name, kText, kLabelFont);
      y += rowH;
    }
  }

  const std::vector<Series> &series_;
  std::string title_;
  Canvas canvas_;
  Measure measure_;
  Rect area_;
  Axis x_, y_;
};

// ------------------------------------------------------------------------------------------------
// The heatmap
// ------------------------------------------------------------------------------------------------

constexpr uint32_t kHeatNan = 0xd62728; // off the colour map, so a NaN cannot pass for a weight
constexpr int kMaxCell = 20, kMinCell = 4, kHeatmapSpan = 800; // px
constexpr int kMaxColumnChars = 8, kMaxRowChars = 12;
constexpr int kPad = 12, kLabelGap = 5, kBarGap = 16, kBarW = 12, kMinBarH = 64;
constexpr Font kBigLabelFont{18};

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

  Measure measure;
  // Cells shrink from 20 px so that long sequences stay about kHeatmapSpan wide; when they get
  // smaller than a line of text, only every `stride`-th row and column is labelled.
  int rows = static_cast<int>(weights.size()), cols = static_cast<int>(columnLabels.size());
  int cell = std::clamp(kHeatmapSpan / std::max(rows, cols), kMinCell, kMaxCell);
  int pitch = measure.lineHeight(kLabelFont) - 2; // lines may overlap in their leading
  int stride = (pitch + cell - 1) / cell;

  std::vector<std::string> colText, rowText;
  size_t longest = 0;
  for (const std::string &l : columnLabels) {
    colText.push_back(displayText(l, true, kMaxColumnChars));
    longest = std::max(longest, characters(colText.back()));
  }
  for (const std::string &l : rowLabels) {
    rowText.push_back(displayText(l, true, kMaxRowChars));
    longest = std::max(longest, characters(rowText.back()));
  }
  std::string titleText = displayText(title, false, title.size());
  // Single characters (the dates model's tokens) are hard to read small beside 20-px cells, so
  // they are set larger where cells have room; words stay small to keep the margins small.
  Font font = longest <= 1 && cell >= 16 ? kBigLabelFont : kLabelFont;
  int colW = 0, rowW = 0;
  for (const std::string &t : colText)
    colW = std::max(colW, measure.width(t, font));
  for (const std::string &t : rowText)
    rowW = std::max(rowW, measure.width(t, font));
  int lineH = measure.lineHeight(font);
  // Column labels read across while they fit their column (characters, short tokens), and
  // upwards (turned 90 degrees, only ever small) when a word would run into its neighbours.
  bool turned = colW + 2 > cell * stride;
  if (turned) {
    font = kLabelFont;
    colW = 0;
    for (const std::string &t : colText)
      colW = std::max(colW, measure.width(t, font));
  }

  int titleH = titleText.empty() ? 0 : measure.lineHeight(kTitleFont) + 8;
  int gridX = kPad + rowW + kLabelGap + 1;
  int gridY = kPad + titleH + (turned ? colW : lineH) + kLabelGap + 1;
  int gridW = cols * cell, gridH = rows * cell;
  int barX = gridX + gridW + kBarGap, barH = std::max(gridH, kMinBarH);
  int width = std::max(barX + kBarW + 6 + measure.width("0.5", kLabelFont) + kPad,
                       2 * kPad + measure.width(titleText, kTitleFont));
  int height = gridY + barH + 1 + kPad;

  Canvas canvas(width, height);
  canvas.text((width - measure.width(titleText, kTitleFont)) / 2.0, kPad, titleText, kBlack,
              kTitleFont);
  for (int i = 0; i < rows; ++i)
    for (int j = 0; j < cols; ++j)
      canvas.fill({gridX + j * cell, gridY + i * cell, gridX + (j + 1) * cell - 1,
                   gridY + (i + 1) * cell - 1},
                  heatColour(weights[i][j]));
  canvas.outline({gridX - 1, gridY - 1, gridX + gridW, gridY + gridH}, kFrame);

  int smallH = measure.lineHeight(kLabelFont);
  for (int j = 0; j < cols; j += stride) {
    const std::string &t = colText[j];
    if (turned)
      canvas.textUp(gridX + j * cell + (cell - smallH) / 2.0, gridY - 1 - kLabelGap, t, kText,
                    font);
    else
      canvas.text(gridX + j * cell + (cell - measure.width(t, font)) / 2.0,
                  gridY - 1 - kLabelGap - lineH, t, kText, font);
  }
  for (int i = 0; i < rows; i += stride) // right-aligned against the grid
    canvas.text(gridX - 1 - kLabelGap - measure.width(rowText[i], font),
                gridY + i * cell + (cell - lineH) / 2.0, rowText[i], kText, font);

  // The colour bar: 1 at the top, 0 at the bottom, ticks at 0, 0.5 and 1.
  for (int y = 0; y < barH; ++y)
    canvas.fill({barX, gridY + y, barX + kBarW - 1, gridY + y},
                heatColour(static_cast<float>(1.0 - static_cast<double>(y) / (barH - 1))));
  canvas.outline({barX - 1, gridY - 1, barX + kBarW, gridY + barH}, kFrame);
  for (auto [y, label] : {std::pair{0, "1"}, {(barH - 1) / 2, "0.5"}, {barH - 1, "0"}}) {
    canvas.fill({barX + kBarW + 1, gridY + y, barX + kBarW + 3, gridY + y}, kBlack);
    canvas.text(barX + kBarW + 6, gridY + y - smallH / 2.0, label, kText, kLabelFont);
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
    std::vector<std::string> columns = data::tokenize(lines[i], data.sourceTokens);
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
