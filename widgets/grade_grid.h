// GradeGrid: a layer × head × plane array of doubles — the graded-attention grades q_h or the
// seed-001 query scale exp(q_τ) — with the two views the heatmaps show (one head, head average).
#pragma once
#include <QString>
#include <cstdint>
#include <vector>

#include "widgets/heatmap_widget.h"

namespace gllm::gui {

struct GradeGrid {
  int layers = 0, heads = 0, planes = 0;
  std::vector<double> values;  // (layers, heads, planes), row-major

  bool empty() const { return values.empty(); }
  bool sameShape(const GradeGrid& o) const {
    return layers == o.layers && heads == o.heads && planes == o.planes;
  }
  double at(int l, int h, int p) const {
    return values[(static_cast<size_t>(l) * heads + h) * planes + p];
  }
  double& at(int l, int h, int p) {
    return values[(static_cast<size_t>(l) * heads + h) * planes + p];
  }
  static GradeGrid zeros(int layers, int heads, int planes) {
    GradeGrid g;
    g.layers = layers;
    g.heads = heads;
    g.planes = planes;
    g.values.assign(static_cast<size_t>(layers) * heads * planes, 0.0);
    return g;
  }
};

// Layer × plane heatmap of one head (head ≥ 0) or of the mean over heads (head = −1).
HeatmapData layerPlaneView(const GradeGrid& g, int head, const QString& valueTitle);
// A checkpoint tensor of shape (layers, heads, planes) as a grid, each value exp()'d when
// `exponentiate` (q_τ → the query scale); an empty grid for any other rank.
GradeGrid gridFromTensor(const std::vector<int64_t>& shape, const std::vector<float>& values,
                         bool exponentiate);
// Element-wise a − b; shapes must match (callers check sameShape first).
GradeGrid difference(const GradeGrid& a, const GradeGrid& b);

}  // namespace gllm::gui
