// Loss-curve plots as PNG files, with no image library: a built-in 5x7 bitmap font and a
// minimal PNG encoder (8-bit RGB, zlib stream of stored deflate blocks, so no compressor needed).
#ifndef ATTN_TRAIN_PLOT_H
#define ATTN_TRAIN_PLOT_H

#include <cstdint>
#include <string>
#include <vector>

namespace attn::train {

// The size writeLossCurvePng renders.
constexpr uint32_t kPlotWidth = 800;
constexpr uint32_t kPlotHeight = 500;

// One curve: points (x[i], y[i]) joined in order; `rgb` is 0xRRGGBB. Points with a NaN or
// infinite coordinate are skipped (their neighbours are joined). An empty name keeps the series
// out of the legend.
struct Series {
  std::string name;
  std::vector<double> x, y;
  uint32_t rgb = 0x1f77b4;
};

// Renders an 800x500 plot to `path`: white background, grid, axes with tick marks and labels, the
// series as 2-px polylines, a legend (top right) and the title. The y axis is logarithmic when
// every plotted y is > 0 and max/min > 100, else linear; x is linear. Axis ranges are widened to
// round tick values. The file is written to a temporary name and renamed over `path`, so readers
// never see half a PNG. Throws std::invalid_argument if a series' x and y differ in length and
// std::runtime_error ("PATH: error: ...") if the file cannot be written.
void writeLossCurvePng(const std::string &path, const std::vector<Series> &series,
                       const std::string &title);

// The PNG file bytes of an 8-bit RGB image; `rgb` holds height rows of width * 3 bytes, top row
// first. Throws std::invalid_argument if the sizes disagree or width/height is 0.
std::vector<uint8_t> encodePng(uint32_t width, uint32_t height, const std::vector<uint8_t> &rgb);

} // namespace attn::train

#endif // ATTN_TRAIN_PLOT_H
