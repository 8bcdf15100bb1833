// Reading a checkpoint's embedding as a token reference (embedding_reference.h): W_e, and W_e·G
// with the MLGE basis and grades the checkpoint holds.
#include "engine/train/embedding_reference.h"

#include <cmath>

#include "engine/config/run_config.h"
#include "engine/grading/grade_sources.h"
#include "engine/io/error.h"
#include "engine/io/json_read.h"
#include "engine/io/safetensors.h"
#include "engine/train/run_store.h"

namespace gllm {

namespace {

Eigen::MatrixXd matrix_of(const SafetensorsFile& f, const std::string& name, int64_t rows,
                          int64_t cols) {
  const auto& info = f.info(name);
  if (info.shape.size() != 2 || info.shape[0] != rows || info.shape[1] != cols)
    throw Error(f.label() + ": tensor " + name + " should be " + std::to_string(rows) + " × " +
                std::to_string(cols) + "; the checkpoint is damaged or of another model");
  const auto v = f.to_float(name);
  Eigen::MatrixXd m(rows, cols);
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) {
      const float x = v[static_cast<size_t>(i * cols + j)];
      if (!std::isfinite(x))
        throw Error(f.label() + ": tensor " + name + " holds a non-finite value (row " +
                    std::to_string(i) +
                    "); profiles of a diverged model mean nothing — use an "
                    "earlier checkpoint");
      m(i, j) = x;
    }
  return m;
}

}  // namespace

grading::TokenReference checkpoint_reference(const std::string& path, const std::string& wte_name) {
  const std::string weights = resolve_weights_path(path);
  const auto file = SafetensorsFile::open(weights);
  std::string name = wte_name;
  if (name.empty())
    for (const char* c : {"transformer.wte.weight", "wte", "wte.weight"})
      if (file.has(c)) {
        name = c;
        break;
      }
  if (name.empty() || !file.has(name))
    throw Error(weights +
                " has no token embedding (transformer.wte.weight, wte or wte.weight); "
                "name it with --wte-name");
  const auto& info = file.info(name);
  if (info.shape.size() != 2 || info.shape[0] < 1 || info.shape[1] < 1)
    throw Error(weights + ": tensor " + name +
                " is not a (V, d) matrix; pass the embedding "
                "with --wte-name");
  const int64_t V = info.shape[0], d = info.shape[1];
  grading::TokenReference r;
  r.kind = "wte";
  r.vectors = matrix_of(file, name, V, d);  // (V, d)
  bool graded = false;
  int64_t step = -1;
  const auto& meta = file.metadata();
  if (meta.count("step")) step = std::atoll(meta.at("step").c_str());
  bool all_zero = true;  // G = P Pᵀ = I exactly when every grade is 0: W_e is read as stored
  if (file.has("mlge.level_grades"))
    for (float q : file.to_float("mlge.level_grades")) all_zero = all_zero && q == 0.0f;
  if (file.has("mlge.proj") && file.has("mlge.level_grades") && !all_zero) {
    if (!meta.count("config"))
      throw Error(weights +
                  " has MLGE grades but no config (its λ); use a checkpoint written by "
                  "gllm train");
    const RunConfig c =
        RunConfig::from_json(parse_json(meta.at("config"), weights + " (stored config)", ""));
    const double lambda = grading::grade_bounds(c).lambda;
    const Eigen::MatrixXd P = matrix_of(file, "mlge.proj", d, d);  // (d, d), column j = direction
    const auto q = file.to_float("mlge.level_grades");
    if (static_cast<int64_t>(q.size()) != d)
      throw Error(weights + ": mlge.level_grades has " + std::to_string(q.size()) +
                  " values for width " + std::to_string(d));
    Eigen::VectorXd w(d);
    for (int64_t j = 0; j < d; ++j) {
      if (!std::isfinite(q[j]))
        throw Error(weights +
                    ": mlge.level_grades holds a non-finite grade; use an earlier "
                    "checkpoint");
      w[j] = std::pow(lambda, q[j]);
    }
    const Eigen::MatrixXd G = P * w.asDiagonal() * P.transpose();  // (d, d)
    r.vectors = (r.vectors * G).cast<float>().cast<double>();      // E' = W_e G, (V, d)
    graded = true;
  }
  int64_t kept = 0;
  for (int64_t i = 0; i < V; ++i) kept += r.vectors.row(i).squaredNorm() > 0;
  r.kept_tokens = kept;
  r.meta = {{"checkpoint", weights},
            {"tensor", name},
            {"step", step},
            {"graded", graded},
            {"rule", graded ? "W_e·G, G = P diag(λ^q) Pᵀ from the checkpoint's MLGE tensors"
                            : "W_e as the checkpoint holds it (no MLGE grades, or all 0: G = I)"}};
  return r;
}

}  // namespace gllm
