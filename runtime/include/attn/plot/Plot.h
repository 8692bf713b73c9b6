// Loss-curve plots and attention heatmaps as PNG files, drawn by cairo (anti-aliased curves,
// UTF-8 text set in DejaVu Sans through fontconfig) and encoded by libpng. Its own library
// (AttnRuntimePlot), so the training loop and ahead-of-time programs need no image library:
// attnc hands the trainer writeLossPlot as its plot hook.
#ifndef ATTN_PLOT_PLOT_H
#define ATTN_PLOT_PLOT_H

#include "attn/task/Seq2SeqDecoder.h"

#include <cstdint>
#include <string>
#include <vector>

namespace attn::plot {

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
// series as anti-aliased 2-px polylines, a legend (top right) and the title. The y axis is
// logarithmic when every plotted y is > 0 and max/min > 100, else linear; x is linear. Axis ranges
// are widened to round tick values. The file is written to a temporary name and renamed over
// `path`, so readers never see half a PNG. Throws std::invalid_argument if a series' x and y differ
// in length and std::runtime_error ("PATH: error: ...") if the file cannot be written.
void writeLossCurvePng(const std::string &path, const std::vector<Series> &series,
                       const std::string &title);

// Renders attention weights to `path` as a labelled heatmap: weights[i][j] is the weight target
// token i (row i, top to bottom) gives source token j (column j, left to right). Each weight is
// a square cell coloured from white (0) through mid blue to dark blue (1); values are clamped to
// [0, 1] and NaN is drawn red. Cells are 20 px, or 800 / max(rows, columns) px (at least 4) for
// more than 40 tokens, so the grid stays about 800 px; where cells are smaller than a line of
// text only every 2nd (3rd, ...) token is labelled. Source labels are centred above their
// columns, reading across when each fits its column and turned to read upwards otherwise;
// target labels are right-aligned left of their rows. Labels are set larger when every one is
// a single character and cells are at least 16 px. A space is drawn as an open box (U+2423),
// a control character or invalid UTF-8 as '?', and labels longer than 8 (source) or 12
// (target) characters are cut, ending in an ellipsis. The title is centred on top and a colour bar
// with ticks 0, 0.5 and 1 stands right of the grid; the image size follows from the token counts
// and label lengths. Written atomically like writeLossCurvePng. Throws std::invalid_argument if
// there are no rows or no columns, if rowLabels.size() differs from the number of rows or a
// row's length from columnLabels.size(), and std::runtime_error ("PATH: error: ...") if the
// file cannot be written.
void writeHeatmapPng(const std::string &path, const std::vector<std::vector<float>> &weights,
                     const std::vector<std::string> &columnLabels,
                     const std::vector<std::string> &rowLabels, const std::string &title);

// One heatmap per source, DIR/attention-<i>.png (DIR is created), of the attention weights
// `decoder` gives while producing outputs[i] (Seq2SeqDecoder::alignments): source tokens of
// lines[i] across, output tokens and the final <eos> down. Returns the paths written.
std::vector<std::string> writeAlignmentPlots(const task::Seq2SeqDecoder &decoder,
                                             const std::string &dir,
                                             const std::vector<std::string> &lines,
                                             const std::vector<task::Encoded> &sources,
                                             const std::vector<decode::Hypothesis> &outputs);

// dir/loss.png from dir/metrics.jsonl (the training loss and, where validated, the validation
// loss against the step), titled `title`: what TrainOptions::plotLoss is given by attnc.
void writeLossPlot(const std::string &dir, const std::string &title);

// The PNG file bytes (libpng) of an 8-bit RGB image; `rgb` holds height rows of width * 3 bytes, top row
// first. Throws std::invalid_argument if the sizes disagree or width/height is 0.
std::vector<uint8_t> encodePng(uint32_t width, uint32_t height, const std::vector<uint8_t> &rgb);

} // namespace attn::plot

#endif // ATTN_PLOT_PLOT_H
