// GradeGrid views: slicing one head or averaging heads into a layer × plane heatmap, and the
// element-wise difference used by the A − B comparison of two checkpoints.
#include "widgets/grade_grid.h"

#include <cmath>

namespace gllm::gui {

HeatmapData layerPlaneView(const GradeGrid& g, int head, const QString& valueTitle) {
  HeatmapData d;
  d.rows = g.layers;
  d.cols = g.planes;
  d.rowTitle = QStringLiteral("layer");
  d.colTitle = QStringLiteral("RoPE plane");
  d.valueTitle = valueTitle;
  d.values.resize(static_cast<size_t>(g.layers) * g.planes);
  for (int l = 0; l < g.layers; ++l) {
    for (int p = 0; p < g.planes; ++p) {
      double v = 0;
      if (head >= 0) {
        v = g.at(l, head, p);
      } else {
        for (int h = 0; h < g.heads; ++h) v += g.at(l, h, p);
        v /= g.heads > 0 ? g.heads : 1;
      }
      d.values[static_cast<size_t>(l) * g.planes + p] = v;
    }
  }
  return d;
}

GradeGrid difference(const GradeGrid& a, const GradeGrid& b) {
  GradeGrid d = a;
  for (size_t i = 0; i < d.values.size() && i < b.values.size(); ++i)
    d.values[i] = a.values[i] - b.values[i];
  return d;
}

GradeGrid gridFromTensor(const std::vector<int64_t>& shape, const std::vector<float>& values,
                         bool exponentiate) {
  if (shape.size() != 3) return {};
  GradeGrid g = GradeGrid::zeros(int(shape[0]), int(shape[1]), int(shape[2]));
  for (size_t i = 0; i < values.size() && i < g.values.size(); ++i)
    g.values[i] = exponentiate ? std::exp(double(values[i])) : double(values[i]);
  return g;
}

}  // namespace gllm::gui
