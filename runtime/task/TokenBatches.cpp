#include "attn/task/TokenBatches.h"

#include "attn/Random.h"

#include <algorithm>
#include <limits>
#include <map>
#include <sstream>
#include <stdexcept>

namespace attn::task {
namespace {

// The pairs of one (source, target) length, and how many there are.
struct Point {
  int64_t source, target, count;
};
// A batch shape's lengths.
struct Shape {
  int64_t source, target;
  bool fits(const Point &p) const { return p.source <= source && p.target <= target; }
  int64_t width() const { return source + target; }
};

// The shape of `shapes` whose batches hold the fewest positions for `p` (-1: none fits).
int cheapest(const std::vector<Shape> &shapes, const Point &p) {
  int best = -1;
  for (size_t k = 0; k < shapes.size(); ++k)
    if (shapes[k].fits(p) && (best < 0 || shapes[k].width() < shapes[best].width()))
      best = (int)k;
  return best;
}

// The positions (source + target) the points take, each in its cheapest shape.
double positionsOf(const std::vector<Point> &points, const std::vector<Shape> &shapes) {
  double total = 0;
  for (const Point &p : points)
    total += (double)p.count * (double)shapes[cheapest(shapes, p)].width();
  return total;
}

// Along one axis: the pairs ordered by their longer side, cut into at most k consecutive
// groups, each as long as its longest source and target, in the fewest positions (an exact
// dynamic programme: cost[a][b] for the group of lengths a..b, best[j][b] the best j + 1 groups
// of lengths 0..b).
std::vector<Shape> bestGroupsByLength(const std::vector<Point> &points, size_t k) {
  std::vector<int64_t> lengths;
  for (const Point &p : points)
    lengths.push_back(std::max(p.source, p.target));
  std::sort(lengths.begin(), lengths.end());
  lengths.erase(std::unique(lengths.begin(), lengths.end()), lengths.end());
  size_t m = lengths.size();
  k = std::min(k, m);
  std::vector<int64_t> count(m, 0), maxSource(m, 0), maxTarget(m, 0);
  for (const Point &p : points) {
    size_t v = std::lower_bound(lengths.begin(), lengths.end(), std::max(p.source, p.target)) -
               lengths.begin();
    count[v] += p.count;
    maxSource[v] = std::max(maxSource[v], p.source);
    maxTarget[v] = std::max(maxTarget[v], p.target);
  }
  auto shapeOf = [&](size_t a, size_t b) {
    Shape s{0, 0};
    for (size_t v = a; v <= b; ++v)
      s = {std::max(s.source, maxSource[v]), std::max(s.target, maxTarget[v])};
    return s;
  };
  std::vector<std::vector<double>> cost(m, std::vector<double>(m, 0.0));
  for (size_t a = 0; a < m; ++a) {
    int64_t n = 0;
    Shape s{0, 0};
    for (size_t b = a; b < m; ++b) {
      n += count[b];
      s = {std::max(s.source, maxSource[b]), std::max(s.target, maxTarget[b])};
      cost[a][b] = (double)n * (double)s.width();
    }
  }
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<std::vector<double>> best(k, std::vector<double>(m, inf));
  std::vector<std::vector<size_t>> from(k, std::vector<size_t>(m, 0)); // the last group's start
  for (size_t b = 0; b < m; ++b)
    best[0][b] = cost[0][b];
  for (size_t j = 1; j < k; ++j)
    for (size_t b = 0; b < m; ++b)
      for (size_t a = 1; a <= b; ++a)
        if (double c = best[j - 1][a - 1] + cost[a][b]; c < best[j][b]) {
          best[j][b] = c;
          from[j][b] = a;
        }
  size_t j = 0;
  for (size_t i = 1; i < k; ++i)
    if (best[i][m - 1] < best[j][m - 1])
      j = i;
  std::vector<Shape> shapes;
  for (size_t b = m - 1;; --j) {
    size_t a = j == 0 ? 0 : from[j][b];
    shapes.push_back(shapeOf(a, b));
    if (j == 0)
      break;
    b = a - 1;
  }
  return shapes;
}

// Over both axes (a source and a target of different lengths, as translations have): from
// the shape that holds every pair, k - 1 times the shape (of the points' own lengths) that
// saves the most positions.
std::vector<Shape> greedyShapes(const std::vector<Point> &points, size_t k) {
  // Candidates: the most frequent lengths, so that long max_len corpora (tens of thousands of
  // distinct length pairs) still plan in a moment: k * candidates * points steps.
  std::vector<Point> candidates = points;
  if (candidates.size() > 2048) {
    std::nth_element(candidates.begin(), candidates.begin() + 2048, candidates.end(),
                     [](const Point &a, const Point &b) { return a.count > b.count; });
    candidates.resize(2048);
  }
  Shape all{0, 0};
  for (const Point &p : points)
    all = {std::max(all.source, p.source), std::max(all.target, p.target)};
  std::vector<Shape> shapes{all};
  std::vector<int64_t> width(points.size(), all.width()); // each point's cheapest now
  while (shapes.size() < k) {
    double bestGain = 0;
    Shape best{};
    for (const Point &c : candidates) {
      Shape candidate{c.source, c.target};
      double gain = 0;
      for (size_t i = 0; i < points.size(); ++i)
        if (candidate.fits(points[i]) && candidate.width() < width[i])
          gain += (double)points[i].count * (double)(width[i] - candidate.width());
      if (gain > bestGain) {
        bestGain = gain;
        best = candidate;
      }
    }
    if (bestGain == 0)
      break;
    shapes.push_back(best);
    for (size_t i = 0; i < points.size(); ++i)
      if (best.fits(points[i]))
        width[i] = std::min(width[i], best.width());
  }
  return shapes;
}

// planTokenBatches' batches (see TokenBatches.h for the order).
class TokenSource : public train::BatchSource {
public:
  TokenSource(Task task, const train::Split &split, const TokenPlan &plan, uint64_t seed)
      : split(split), plan(plan), seed(seed) {
    for (auto [source, target] : splitLengths(task, split))
      bucketOf.push_back(plan.bucketOf(source, target));
    perEpoch = plan.batchesPerEpoch();
  }

  int64_t examples() const override { return (int64_t)bucketOf.size(); }

  size_t bucket(int64_t step) override { return (size_t)batchOf(step).bucket; }

  std::vector<Tensor> batch(int64_t step, int64_t global, const attn_entry_info &entry, int rank,
                            int ranks) override {
    Batch b = batchOf(step);
    int64_t rows = plan.buckets[b.bucket].rows;
    if (global != rows)
      throw std::logic_error("attn::task: step " + std::to_string(step) + " is a batch of " +
                             std::to_string(rows) + " pairs; its program takes " +
                             std::to_string(global));
    int64_t each = rows / ranks;
    auto first = order.begin() + b.start + rank * each;
    return train::gatherRows(split, std::vector<int64_t>(first, first + each), entry);
  }

private:
  struct Batch {
    int32_t bucket;
    int64_t start; // in `order`
  };

  Batch batchOf(int64_t step) {
    int64_t e = (step - 1) / perEpoch, index = (step - 1) % perEpoch;
    if (e != epoch)
      drawEpoch(e);
    return batches[index];
  }

  void drawEpoch(int64_t e) {
    epoch = e;
    int64_t n = examples();
    std::vector<int64_t> perm(n);
    for (int64_t i = 0; i < n; ++i)
      perm[i] = i;
    Rng rng(seed + (uint64_t)e);
    for (int64_t i = n - 1; i > 0; --i)
      std::swap(perm[i], perm[(int64_t)(rng.next() % (uint64_t)(i + 1))]);
    std::vector<std::vector<int64_t>> dealt(plan.buckets.size());
    for (int64_t i : perm)
      dealt[bucketOf[i]].push_back(i);
    order.clear();
    batches.clear();
    for (size_t k = 0; k < dealt.size(); ++k) {
      int64_t rows = plan.buckets[k].rows;
      for (int64_t at = 0; at + rows <= (int64_t)dealt[k].size(); at += rows) {
        batches.push_back({(int32_t)k, (int64_t)order.size()});
        order.insert(order.end(), dealt[k].begin() + at, dealt[k].begin() + at + rows);
      }
    }
    for (int64_t i = (int64_t)batches.size() - 1; i > 0; --i)
      std::swap(batches[i], batches[(int64_t)(rng.next() % (uint64_t)(i + 1))]);
  }

  const train::Split &split;
  const TokenPlan &plan;
  uint64_t seed;
  std::vector<int32_t> bucketOf; // per pair (row of the split)
  int64_t perEpoch = 0;
  int64_t epoch = -1;
  std::vector<int64_t> order; // the epoch's pairs, batch after batch
  std::vector<Batch> batches; // the epoch's batches in training order
};

} // namespace

std::string TokenPlan::describe() const {
  std::ostringstream os;
  os << buckets.size() << (buckets.size() == 1 ? " shape" : " shapes")
     << " (rows x source x target):";
  for (size_t k = 0; k < buckets.size(); ++k)
    os << (k ? ", " : " ") << buckets[k].rows << "x" << buckets[k].sourceLength << "x"
       << buckets[k].targetLength;
  return os.str();
}

int32_t TokenPlan::bucketOf(int64_t source, int64_t target) const {
  auto it = bucketOfLengths.find({source, target});
  if (it == bucketOfLengths.end())
    throw std::logic_error("attn::task: no token-count bucket was planned for a pair of " +
                           std::to_string(source) + " and " + std::to_string(target) + " tokens");
  return it->second;
}

int64_t TokenPlan::batchesPerEpoch() const {
  int64_t n = 0;
  for (const TokenBucket &b : buckets)
    n += b.pairs / b.rows;
  return n;
}

std::vector<std::pair<int64_t, int64_t>> splitLengths(Task task, const train::Split &split) {
  if (!usesPairs(task) || split.size() < 2)
    throw std::logic_error("attn::task: token-count batches are made of a pair task's split");
  // The source's tokens are src_mask's ones [N, S]; a seq2seq target's, tgt_out's tokens
  // before its padding (kPad = 0) [N, T], eos included.
  const Tensor &mask = split[1];
  int64_t n = mask.shape()[0], S = mask.shape()[1];
  std::vector<std::pair<int64_t, int64_t>> lengths(n, {0, 0});
  for (int64_t i = 0; i < n; ++i) {
    const float *m = mask.data<float>() + i * S;
    lengths[i].first = std::count(m, m + S, 1.0f);
  }
  if (task == Task::Seq2Seq) {
    int64_t T = split[3].shape()[1];
    for (int64_t i = 0; i < n; ++i) {
      const int32_t *t = split[3].data<int32_t>() + i * T;
      lengths[i].second = T - std::count(t, t + T, 0);
    }
  }
  return lengths;
}

TokenPlan planTokenBatches(Task task, const train::Split &split, int64_t batchTokens,
                           int64_t buckets, int ranks) {
  LengthCounts counts;
  for (auto lengths : splitLengths(task, split))
    ++counts[lengths];
  int64_t targetWidth = task == Task::Seq2Seq ? split[3].shape()[1] : 0;
  return planTokenBatches(counts, split[1].shape()[1], targetWidth, batchTokens, buckets, ranks);
}

TokenPlan planTokenBatches(const LengthCounts &counts, int64_t sourceWidth, int64_t targetWidth,
                           int64_t batchTokens, int64_t buckets, int ranks) {
  int64_t n = 0, real = 0;
  std::vector<Point> points;
  for (auto [lengths, count] : counts) {
    points.push_back({lengths.first, lengths.second, count});
    n += count;
    real += count * (lengths.first + lengths.second);
  }
  if (n == 0)
    throw std::runtime_error("attn: train.batch_tokens: there are no training pairs");

  // The better of the two searches.
  std::vector<Shape> shapes = bestGroupsByLength(points, (size_t)buckets);
  if (std::vector<Shape> greedy = greedyShapes(points, (size_t)buckets);
      positionsOf(points, greedy) < positionsOf(points, shapes))
    shapes = std::move(greedy);

  // Each pair in its cheapest shape, each shape cut to its pairs' longest; a shape whose pairs
  // fill none of its batches joins the shape that grows least by taking them, so that every
  // pair is trained on.
  TokenPlan plan;
  std::vector<int> shapeOf(points.size());
  auto rowsOf = [&](const Shape &s) {
    return batchTokens / std::max(s.source, s.target) / ranks * ranks;
  };
  for (;;) {
    std::vector<int64_t> pairs(shapes.size(), 0);
    std::vector<Shape> used(shapes.size(), Shape{0, 0});
    for (size_t i = 0; i < points.size(); ++i) {
      int k = shapeOf[i] = cheapest(shapes, points[i]);
      pairs[k] += points[i].count;
      used[k] = {std::max(used[k].source, points[i].source),
                 std::max(used[k].target, points[i].target)};
    }
    std::vector<Shape> kept;
    for (size_t k = 0; k < shapes.size(); ++k)
      if (pairs[k] > 0)
        kept.push_back(used[k]);
    bool same = kept.size() == shapes.size();
    for (size_t k = 0; same && k < kept.size(); ++k)
      same = kept[k].source == shapes[k].source && kept[k].target == shapes[k].target;
    shapes = std::move(kept);
    if (!same)
      continue; // assign again to the cut shapes
    int small = -1;
    for (size_t k = 0; k < shapes.size(); ++k)
      if (pairs[k] < rowsOf(shapes[k]) && (small < 0 || pairs[k] < pairs[small]))
        small = (int)k;
    if (small < 0 || shapes.size() == 1)
      break;
    size_t into = small == 0 ? 1 : 0;
    auto grown = [&](size_t k) {
      return Shape{std::max(shapes[k].source, shapes[small].source),
                   std::max(shapes[k].target, shapes[small].target)};
    };
    for (size_t k = 0; k < shapes.size(); ++k)
      if ((int)k != small && (double)pairs[k] * (grown(k).width() - shapes[k].width()) <
                                 (double)pairs[into] * (grown(into).width() - shapes[into].width()))
        into = k;
    shapes[into] = grown(into);
    shapes.erase(shapes.begin() + small);
  }

  // Shortest first.
  std::vector<size_t> order(shapes.size());
  for (size_t k = 0; k < order.size(); ++k)
    order[k] = k;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    auto key = [&](size_t k) {
      return std::make_pair(std::max(shapes[k].source, shapes[k].target), shapes[k].width());
    };
    return key(a) < key(b);
  });
  std::vector<int32_t> rank(shapes.size());
  for (size_t r = 0; r < order.size(); ++r) {
    rank[order[r]] = (int32_t)r;
    const Shape &s = shapes[order[r]];
    plan.buckets.push_back({rowsOf(s), s.source, s.target, 0});
  }
  const TokenBucket &longest = plan.buckets.back();
  if (longest.rows == 0) {
    int64_t length = 0;
    for (const Point &p : points)
      length = std::max({length, p.source, p.target});
    throw std::runtime_error(
        "attn: train.batch_tokens = " + std::to_string(batchTokens) + " does not hold " +
        std::to_string(ranks) + (ranks > 1 ? " pairs (one per rank)" : " pair") + " of " +
        std::to_string(length) + " tokens, the longest training pair; raise it to at least " +
        std::to_string(length * ranks));
  }
  for (size_t i = 0; i < points.size(); ++i) {
    int32_t k = plan.bucketOfLengths[{points[i].source, points[i].target}] = rank[shapeOf[i]];
    plan.buckets[k].pairs += points[i].count;
  }
  if (plan.buckets.size() == 1 && plan.buckets[0].pairs < plan.buckets[0].rows)
    throw std::runtime_error("attn: the " + std::to_string(n) +
                             " training pairs do not fill one batch of " +
                             std::to_string(plan.buckets[0].rows) +
                             " (train.batch_tokens = " + std::to_string(batchTokens) + ")");
  double positions = 0;
  for (const TokenBucket &b : plan.buckets)
    positions += (double)b.pairs * (double)(b.sourceLength + b.targetLength);
  plan.padding = 1.0 - (double)real / positions;
  plan.fullLengthPadding = 1.0 - (double)real / ((double)n * (double)(sourceWidth + targetWidth));
  return plan;
}

std::unique_ptr<train::BatchSource> tokenBatches(Task task, const train::Split &split,
                                                 const TokenPlan &plan, uint64_t seed) {
  return std::make_unique<TokenSource>(task, split, plan, seed);
}

} // namespace attn::task
