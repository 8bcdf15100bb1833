// GradeEditor implementation: every edit goes through the RunConfig schema (set on a JSON copy and
// re-read), plus the clip-box rule 0 ≤ q ≤ q_max; a refused value is put back and the reason shown.
#include "widgets/grade_editor.h"

#include <QComboBox>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QScrollArea>
#include <QStyle>
#include <QTabWidget>
#include <QTableWidget>
#include <QVBoxLayout>
#include <cmath>

#include "engine/grading/ladder.h"
#include "engine/io/atomic_file.h"
#include "engine/io/json_read.h"
#include "widgets/heatmap_widget.h"
#include "widgets/widget_util.h"

namespace gllm::gui {

namespace {
QLabel* errorLabel(QWidget* parent) {
  auto* l = new QLabel(parent);
  l->setObjectName(QStringLiteral("fieldError"));
  l->setWordWrap(true);
  l->setVisible(false);
  return l;
}
QString labelText(const QLabel* l) {
  return l->isHidden() ? QString() : l->text();
}
}  // namespace

GradeEditor::GradeEditor(QWidget* parent) : QWidget(parent) {
  build();
  setConfig(RunConfig{});
}

void GradeEditor::build() {
  auto* outer = new QVBoxLayout(this);
  outer->setContentsMargins(0, 0, 0, 0);
  auto* scroll = new QScrollArea(this);
  scroll->setWidgetResizable(true);
  scroll->setFrameShape(QFrame::NoFrame);
  auto* inner = new QWidget(scroll);
  auto* layout = new QVBoxLayout(inner);
  layout->setContentsMargins(6, 6, 6, 6);
  scroll->setWidget(inner);
  outer->addWidget(scroll);

  // Base and clip.
  auto* baseBox = new QGroupBox(tr("Base λ and clip C"), inner);
  auto* form = new QFormLayout(baseBox);
  m_lambda = new QLineEdit(baseBox);
  m_lambda->setObjectName(QStringLiteral("lambda"));
  m_lambda->setToolTip(tr("Grading base λ > 1; empty or 0 = e^{1/d_k}"));
  m_lambda->setPlaceholderText(tr("automatic: e^{1/d_k}"));
  m_clip = new QLineEdit(baseBox);
  m_clip->setObjectName(QStringLiteral("clip"));
  m_clip->setToolTip(tr("Clip C > 1: grades stay in [0, q_max], q_max = log C / log λ"));
  m_lambdaError = errorLabel(baseBox);
  m_clipError = errorLabel(baseBox);
  m_qmaxLabel = new QLabel(baseBox);
  m_qmaxLabel->setObjectName(QStringLiteral("hint"));
  auto cell = [&](QWidget* a, QWidget* b) {
    auto* w = new QWidget(baseBox);
    auto* v = new QVBoxLayout(w);
    v->setContentsMargins(0, 0, 0, 0);
    v->setSpacing(1);
    v->addWidget(a);
    v->addWidget(b);
    return w;
  };
  form->addRow(tr("λ"), cell(m_lambda, m_lambdaError));
  form->addRow(tr("C"), cell(m_clip, m_clipError));
  form->addRow(QString(), m_qmaxLabel);
  layout->addWidget(baseBox);
  connect(m_lambda, &QLineEdit::editingFinished, this, [this] { setLambdaText(m_lambda->text()); });
  connect(m_clip, &QLineEdit::editingFinished, this, [this] { setClipText(m_clip->text()); });

  // Level grades.
  auto* levelBox = new QGroupBox(tr("Level grades q_l (MLGE)"), inner);
  auto* lv = new QVBoxLayout(levelBox);
  m_levels = new QTableWidget(0, 4, levelBox);
  m_levels->setObjectName(QStringLiteral("levelGrades"));
  m_levels->setHorizontalHeaderLabels({tr("level"), tr("dims"), tr("grade q_l"), tr("λ^{q_l}")});
  m_levels->verticalHeader()->setVisible(false);
  m_levels->horizontalHeader()->setStretchLastSection(true);
  m_levels->verticalHeader()->setDefaultSectionSize(22);
  m_levels->setMaximumHeight(150);
  m_levelError = errorLabel(levelBox);
  lv->addWidget(m_levels);
  lv->addWidget(m_levelError);
  layout->addWidget(levelBox);
  connect(m_levels, &QTableWidget::itemChanged, this, [this](QTableWidgetItem* it) {
    if (m_refreshing || it->column() != 2) return;
    setLevelGradeText(it->row(), it->text());
  });

  // Head grades.
  auto* headBox = new QGroupBox(tr("Head grades q_h (layer × head × plane)"), inner);
  auto* hv = new QVBoxLayout(headBox);
  auto* hrow = new QHBoxLayout;
  m_headSource = new QComboBox(headBox);
  for (const char* s : {"uniform", "random", "ladder", "file"})
    m_headSource->addItem(QString::fromLatin1(s));
  auto* saveHeads = new QPushButton(QIcon(QStringLiteral(":/icons/save.svg")),
                                    tr("Save as grades file…"), headBox);
  hrow->addWidget(new QLabel(tr("source"), headBox));
  hrow->addWidget(m_headSource, 1);
  hrow->addWidget(saveHeads);
  hv->addLayout(hrow);
  auto* tabs = new QTabWidget(headBox);
  m_heads = new QTableWidget(headBox);
  m_heads->setObjectName(QStringLiteral("headGrades"));
  m_heads->verticalHeader()->setDefaultSectionSize(20);
  m_heads->horizontalHeader()->setDefaultSectionSize(44);
  auto* heatPage = new QWidget(headBox);
  auto* hp = new QVBoxLayout(heatPage);
  hp->setContentsMargins(2, 2, 2, 2);
  m_headView = new QComboBox(heatPage);
  m_headHeatmap = new HeatmapWidget(heatPage);
  m_headHeatmap->setMinimumHeight(170);
  hp->addWidget(m_headView);
  hp->addWidget(m_headHeatmap, 1);
  tabs->addTab(heatPage, QIcon(QStringLiteral(":/icons/heatmap.svg")), tr("Heatmap"));
  tabs->addTab(m_heads, tr("Table"));
  tabs->setMinimumHeight(240);
  hv->addWidget(tabs, 1);
  m_headError = errorLabel(headBox);
  hv->addWidget(m_headError);
  layout->addWidget(headBox, 1);
  connect(m_heads, &QTableWidget::itemChanged, this, [this](QTableWidgetItem* it) {
    if (m_refreshing || m_headGrades.heads == 0) return;
    setHeadGradeText(it->row() / m_headGrades.heads, it->row() % m_headGrades.heads, it->column(),
                     it->text());
  });
  connect(m_headView, qOverload<int>(&QComboBox::currentIndexChanged), this, [this] {
    if (!m_refreshing) refreshHeadHeatmap();
  });
  connect(m_headSource, &QComboBox::activated, this, [this] {
    const std::string src = ss(m_headSource->currentText());
    applyGrading([&](nlohmann::json& g) { g["head_grades"] = src; }, m_headError);
  });
  connect(saveHeads, &QPushButton::clicked, this, [this] {
    const QString f = QFileDialog::getSaveFileName(
        this, tr("Save head grades"), QStringLiteral("grades.json"), tr("JSON (*.json)"));
    if (!f.isEmpty()) saveHeadGradesFile(f);
  });

  // Output grades.
  auto* outBox = new QGroupBox(tr("Output grades q_out (graded loss)"), inner);
  auto* ov = new QHBoxLayout(outBox);
  m_outputSource = new QComboBox(outBox);
  m_outputSource->setObjectName(QStringLiteral("outputSource"));
  m_outputSource->addItem(tr("uniform"), QStringLiteral("uniform"));
  m_outputSource->addItem(tr("part-of-speech statistics"), QStringLiteral("pos"));
  m_outputSource->addItem(tr("file"), QStringLiteral("file"));
  m_outputFile = new QLineEdit(outBox);
  m_outputFile->setPlaceholderText(tr("output_grades[V] JSON (source = file)"));
  m_outputError = errorLabel(outBox);
  ov->addWidget(m_outputSource);
  ov->addWidget(m_outputFile, 1);
  auto* ovw = new QVBoxLayout;
  ovw->addWidget(m_outputError);
  layout->addWidget(outBox);
  layout->addWidget(m_outputError);
  connect(m_outputSource, &QComboBox::activated, this, [this] {
    setOutputSource(m_outputSource->currentData().toString(), m_outputFile->text());
  });
  connect(m_outputFile, &QLineEdit::editingFinished, this, [this] {
    setOutputSource(m_outputSource->currentData().toString(), m_outputFile->text());
  });

  // Ladder.
  auto* ladderBox = new QGroupBox(tr("Selection ladder arm (Table 2)"), inner);
  auto* lg = new QVBoxLayout(ladderBox);
  auto* lrow = new QHBoxLayout;
  m_ladderFile = new QLineEdit(ladderBox);
  m_ladderFile->setPlaceholderText(tr("ladder JSON from `gllm ladder`"));
  auto* browse = new QPushButton(QIcon(QStringLiteral(":/icons/open.svg")), tr("Open…"), ladderBox);
  m_ladderArm = new QComboBox(ladderBox);
  m_ladderArm->setObjectName(QStringLiteral("ladderArm"));
  lrow->addWidget(m_ladderFile, 1);
  lrow->addWidget(browse);
  lrow->addWidget(m_ladderArm);
  lg->addLayout(lrow);
  m_ladderInfo = new QLabel(ladderBox);
  m_ladderInfo->setObjectName(QStringLiteral("hint"));
  m_ladderInfo->setWordWrap(true);
  m_ladderError = errorLabel(ladderBox);
  lg->addWidget(m_ladderInfo);
  lg->addWidget(m_ladderError);
  layout->addWidget(ladderBox);
  connect(browse, &QPushButton::clicked, this, [this] {
    const QString f =
        QFileDialog::getOpenFileName(this, tr("Open ladder"), QString(), tr("JSON (*.json)"));
    if (!f.isEmpty()) loadLadder(f);
  });
  connect(m_ladderFile, &QLineEdit::editingFinished, this, [this] {
    if (!m_ladderFile->text().isEmpty()) loadLadder(m_ladderFile->text());
  });
  connect(m_ladderArm, &QComboBox::activated, this,
          [this] { chooseLadderArm(m_ladderArm->currentData().toString()); });

  // Load / save.
  auto* io = new QHBoxLayout;
  auto* load =
      new QPushButton(QIcon(QStringLiteral(":/icons/open.svg")), tr("Load grading…"), inner);
  auto* save =
      new QPushButton(QIcon(QStringLiteral(":/icons/save.svg")), tr("Save grading…"), inner);
  io->addWidget(load);
  io->addWidget(save);
  io->addStretch(1);
  layout->addLayout(io);
  connect(load, &QPushButton::clicked, this, [this] {
    const QString f = QFileDialog::getOpenFileName(this, tr("Load grading from a preset"),
                                                   qs(presets_dir()), tr("JSON (*.json)"));
    if (!f.isEmpty()) loadGradingFile(f);
  });
  connect(save, &QPushButton::clicked, this, [this] {
    const QString f = QFileDialog::getSaveFileName(
        this, tr("Save the grading part"), QStringLiteral("grading.json"), tr("JSON (*.json)"));
    if (!f.isEmpty()) saveGradingFile(f);
  });
}

double GradeEditor::lambda() const {
  return m_config.grading.base_for(m_config.model.head_dim());
}
double GradeEditor::qMax() const {
  return m_config.grading.q_max(m_config.model.head_dim());
}

std::vector<double> GradeEditor::levelGrades() const {
  std::vector<double> v = m_config.grading.level_grades;
  if (v.empty()) v.assign(static_cast<size_t>(m_config.grading.levels), 0.0);
  return v;
}

void GradeEditor::setConfig(const RunConfig& config) {
  const bool shapeChanged = config.model.layers() != m_headGrades.layers ||
                            config.model.heads() != m_headGrades.heads ||
                            config.model.head_dim() / 2 != m_headGrades.planes;
  m_config = config;
  if (shapeChanged) resetHeadGrades();
  for (QLabel* l :
       {m_lambdaError, m_clipError, m_levelError, m_headError, m_outputError, m_ladderError})
    l->setVisible(false);
  refresh();
  Q_EMIT gradingChanged();
}

void GradeEditor::resetHeadGrades() {
  m_headGrades = GradeGrid::zeros(m_config.model.layers(), m_config.model.heads(),
                                  m_config.model.head_dim() / 2);
  const auto& g = m_config.grading;
  if (g.head_grades == "file" && !g.grades_file.empty()) {
    try {
      const auto j = read_json_file(g.grades_file, "", large_json_limits());
      const auto& a = j.at("attn_grades");
      for (int l = 0; l < m_headGrades.layers && l < int(a.size()); ++l)
        for (int h = 0; h < m_headGrades.heads && h < int(a[l].size()); ++h)
          for (int p = 0; p < m_headGrades.planes && p < int(a[l][h].size()); ++p)
            m_headGrades.at(l, h, p) = a[l][h][p].get<double>();
    } catch (const std::exception& e) {
      showError(m_headError, m_heads, tr("could not read %1: %2").arg(qs(g.grades_file), e.what()));
    }
  }
}

void GradeEditor::showError(QLabel* label, QWidget* field, const QString& message) {
  label->setText(message);
  label->setVisible(!message.isEmpty());
  if (field) {
    field->setProperty("invalid", !message.isEmpty());
    field->style()->unpolish(field);
    field->style()->polish(field);
  }
}

QString GradeEditor::applyGrading(const std::function<void(nlohmann::json&)>& edit,
                                  QLabel* errorLabelWidget) {
  nlohmann::json j = m_config.to_json();
  edit(j["grading"]);
  try {
    RunConfig next = RunConfig::from_json(j);
    m_config = next;
  } catch (const ConfigError& e) {
    QString msg = qs(e.what());
    showError(errorLabelWidget, nullptr, msg);
    refresh();
    return msg;
  }
  showError(errorLabelWidget, nullptr, {});
  refresh();
  Q_EMIT gradingChanged();
  return {};
}

QString GradeEditor::setLambdaText(const QString& text) {
  bool ok = false;
  // An empty field is the automatic base, stored as 0.
  const double v = text.trimmed().isEmpty() ? (ok = true, 0.0) : text.trimmed().toDouble(&ok);
  if (!ok) {
    const QString why = tr("'%1' is not a number; λ must be > 1 (or 0 for e^{1/d_k})").arg(text);
    showError(m_lambdaError, m_lambda, why);
    return why;
  }
  // The clip box must keep holding the grades under the new base.
  const double base = v > 0 ? v : std::exp(1.0 / m_config.model.head_dim());
  if (v == 0 || v > 1) {
    const double qmax = std::log(m_config.grading.clip) / std::log(base);
    for (double q : levelGrades())
      if (q > qmax + 1e-12) {
        const QString why = tr("with λ = %1 the clip allows q ≤ %2, but a level grade is %3; lower "
                               "the grades or raise C first")
                                .arg(base, 0, 'g', 6)
                                .arg(qmax, 0, 'g', 6)
                                .arg(q, 0, 'g', 6);
        showError(m_lambdaError, m_lambda, why);
        return why;
      }
  }
  const QString err = applyGrading([&](nlohmann::json& g) { g["lambda"] = v; }, m_lambdaError);
  showError(m_lambdaError, m_lambda, err);
  return err;
}

QString GradeEditor::setClipText(const QString& text) {
  bool ok = false;
  const double v = text.trimmed().toDouble(&ok);
  if (!ok) {
    const QString why = tr("'%1' is not a number; the clip C must be > 1").arg(text);
    showError(m_clipError, m_clip, why);
    return why;
  }
  if (v > 1) {
    const double qmax = std::log(v) / std::log(lambda());
    const auto grades = levelGrades();
    for (size_t l = 0; l < grades.size(); ++l)
      if (grades[l] > qmax + 1e-12) {
        const QString why = tr("C = %1 allows q ≤ %2 but level %3 has q = %4; lower that grade "
                               "first or choose C ≥ %5")
                                .arg(v, 0, 'g', 6)
                                .arg(qmax, 0, 'g', 6)
                                .arg(l)
                                .arg(grades[l], 0, 'g', 6)
                                .arg(std::pow(lambda(), grades[l]), 0, 'g', 6);
        showError(m_clipError, m_clip, why);
        return why;
      }
  }
  const QString err = applyGrading([&](nlohmann::json& g) { g["clip"] = v; }, m_clipError);
  showError(m_clipError, m_clip, err);
  return err;
}

QString GradeEditor::setLevelGradeText(int level, const QString& text) {
  if (level < 0 || level >= m_config.grading.levels) return tr("no level %1").arg(level);
  bool ok = false;
  const double v = text.trimmed().toDouble(&ok);
  QString why;
  if (!ok || !std::isfinite(v))
    why = tr("level %1: '%2' is not a number").arg(level).arg(text);
  else if (v < 0)
    why = tr("level %1: grades are ≥ 0 (the gauge fixes min q = 0)").arg(level);
  else if (v > qMax() + 1e-12)
    why = tr("level %1: q = %2 exceeds q_max = log C / log λ = %3; lower it or raise the clip C")
              .arg(level)
              .arg(v, 0, 'g', 6)
              .arg(qMax(), 0, 'g', 6);
  if (!why.isEmpty()) {
    showError(m_levelError, m_levels, why);
    refresh();
    m_levelError->setVisible(true);
    return why;
  }
  std::vector<double> g = levelGrades();
  g[static_cast<size_t>(level)] = v;
  const QString err = applyGrading([&](nlohmann::json& j) { j["level_grades"] = g; }, m_levelError);
  showError(m_levelError, m_levels, err);
  return err;
}

QString GradeEditor::setLevelGrades(const std::vector<double>& v) {
  if (static_cast<int>(v.size()) != m_config.grading.levels) {
    const QString why =
        tr("%1 grades given but grading.levels = %2").arg(v.size()).arg(m_config.grading.levels);
    showError(m_levelError, m_levels, why);
    return why;
  }
  std::vector<double> c = v;
  for (double& x : c) x = std::clamp(x, 0.0, qMax());  // solver output may overshoot by rounding
  const QString err = applyGrading([&](nlohmann::json& j) { j["level_grades"] = c; }, m_levelError);
  showError(m_levelError, m_levels, err);
  return err;
}

QString GradeEditor::setHeadGradeText(int layer, int head, int plane, const QString& text) {
  bool ok = false;
  const double v = text.trimmed().toDouble(&ok);
  QString why;
  if (layer < 0 || layer >= m_headGrades.layers || head < 0 || head >= m_headGrades.heads ||
      plane < 0 || plane >= m_headGrades.planes)
    why = tr("no cell layer %1, head %2, plane %3").arg(layer).arg(head).arg(plane);
  else if (!ok || !std::isfinite(v))
    why = tr("layer %1 head %2 plane %3: '%4' is not a number")
              .arg(layer)
              .arg(head)
              .arg(plane)
              .arg(text);
  else if (v < 0)
    why = tr("layer %1 head %2 plane %3: grades are ≥ 0").arg(layer).arg(head).arg(plane);
  else if (v > qMax() + 1e-12)
    why = tr("layer %1 head %2 plane %3: q = %4 exceeds q_max = %5 (clip C = %6); lower it or "
             "raise C")
              .arg(layer)
              .arg(head)
              .arg(plane)
              .arg(v, 0, 'g', 6)
              .arg(qMax(), 0, 'g', 6)
              .arg(clip(), 0, 'g', 6);
  if (!why.isEmpty()) {
    showError(m_headError, m_heads, why);
    refreshHeadTable();
    return why;
  }
  m_headGrades.at(layer, head, plane) = v;
  showError(m_headError, m_heads, {});
  refreshHeadTable();
  refreshHeadHeatmap();
  Q_EMIT gradingChanged();
  return {};
}

QString GradeEditor::saveHeadGradesFile(const QString& path) {
  nlohmann::json a = nlohmann::json::array();
  for (int l = 0; l < m_headGrades.layers; ++l) {
    nlohmann::json hl = nlohmann::json::array();
    for (int h = 0; h < m_headGrades.heads; ++h) {
      nlohmann::json pl = nlohmann::json::array();
      for (int p = 0; p < m_headGrades.planes; ++p) pl.push_back(m_headGrades.at(l, h, p));
      hl.push_back(pl);
    }
    a.push_back(hl);
  }
  try {
    write_file_atomic(ss(path), nlohmann::json({{"attn_grades", a}}).dump(1) + "\n");
  } catch (const Error& e) {
    showError(m_headError, m_heads, qs(e.what()));
    return qs(e.what());
  }
  return applyGrading(
      [&](nlohmann::json& g) {
        g["head_grades"] = "file";
        g["grades_file"] = ss(path);
      },
      m_headError);
}

QString GradeEditor::setOutputSource(const QString& source, const QString& file) {
  const QString err = applyGrading(
      [&](nlohmann::json& g) {
        g["output_grades"] = ss(source);
        g["output_grades_file"] = ss(file);
      },
      m_outputError);
  showError(m_outputError, m_outputSource, err);
  return err;
}

QString GradeEditor::loadLadder(const QString& path) {
  try {
    const grading::Ladder ladder = grading::load_ladder_file(ss(path));
    m_ladder = grading::ladder_to_json(ladder);
  } catch (const std::exception& e) {
    m_ladder = nullptr;
    showError(m_ladderError, m_ladderFile, qs(e.what()));
    refresh();
    return qs(e.what());
  }
  m_ladderFile->setText(path);
  showError(m_ladderError, m_ladderFile, {});
  refresh();
  return {};
}

QStringList GradeEditor::ladderArms() const {
  QStringList arms;
  if (m_ladder.is_object())
    for (const auto& a : m_ladder["arms"])
      if (a.value("available", true)) arms << qs(a.value("name", ""));
  return arms;
}

QString GradeEditor::chooseLadderArm(const QString& arm) {
  if (!m_ladder.is_object()) {
    const QString why = tr("open a ladder file first (`gllm ladder --out FILE`)");
    showError(m_ladderError, m_ladderArm, why);
    return why;
  }
  for (const auto& a : m_ladder["arms"]) {
    if (qs(a.value("name", "")) != arm) continue;
    if (!a.value("available", true)) {
      const QString why = tr("arm %1 is not available: %2").arg(arm, qs(a.value("reason", "")));
      showError(m_ladderError, m_ladderArm, why);
      return why;
    }
    std::vector<double> lg = a.value("level_grades", std::vector<double>{});
    const std::string file = ss(m_ladderFile->text());
    // Ladder grades are MLGE per-coordinate grades, acting in the graded basis of the profiles
    // they were certified against: the model takes both, frozen.
    std::string profiles = m_ladder.value("profiles_file", std::string());
    if (!profiles.empty() && QFileInfo(qs(profiles)).isRelative())
      profiles = ss(QFileInfo(m_ladderFile->text()).dir().filePath(qs(profiles)));
    if (profiles.empty()) {
      const QString why =
          tr("this ladder does not name its profiles file; rebuild it with `gllm ladder --profiles "
             "FILE --out …`");
      showError(m_ladderError, m_ladderArm, why);
      return why;
    }
    const QString err = applyGrading(
        [&](nlohmann::json& g) {
          g["mlge"] = true;
          g["level_grades_source"] = "ladder";
          g["ladder_file"] = file;
          g["ladder_arm"] = ss(arm);
          g["profiles_file"] = profiles;
          g["basis_trainable"] = false;
          g["grades_trainable"] = false;
          if (static_cast<int>(lg.size()) == g.value("levels", 4)) {
            const double qmax = qMax();
            for (double& x : lg) x = std::clamp(x, 0.0, qmax);
            g["level_grades"] = lg;
          }
        },
        m_ladderError);
    showError(m_ladderError, m_ladderArm, err);
    return err;
  }
  const QString why = tr("the ladder has no arm '%1'; choose one of %2")
                          .arg(arm, ladderArms().join(QStringLiteral(", ")));
  showError(m_ladderError, m_ladderArm, why);
  return why;
}

QString GradeEditor::loadGradingFile(const QString& path) {
  try {
    const auto j = read_json_file(ss(path), "", large_json_limits());
    if (!j.is_object() || !j.contains("grading"))
      throw Error(ss(path) +
                  " has no \"grading\" section; pick a preset or a file saved by Save grading");
    nlohmann::json full = m_config.to_json();
    full["grading"] =
        RunConfig::from_json(nlohmann::json{{"grading", j["grading"]}}).to_json()["grading"];
    setConfig(RunConfig::from_json(full));
    return {};
  } catch (const std::exception& e) {
    showError(m_levelError, nullptr, qs(e.what()));
    return qs(e.what());
  }
}

QString GradeEditor::saveGradingFile(const QString& path) const {
  try {
    write_file_atomic(ss(path),
                      nlohmann::json({{"grading", m_config.to_json()["grading"]}}).dump(2) + "\n");
    return {};
  } catch (const Error& e) {
    return qs(e.what());
  }
}

QString GradeEditor::lambdaError() const {
  return labelText(m_lambdaError);
}
QString GradeEditor::clipError() const {
  return labelText(m_clipError);
}
QString GradeEditor::levelError() const {
  return labelText(m_levelError);
}
QString GradeEditor::headError() const {
  return labelText(m_headError);
}
QString GradeEditor::ladderError() const {
  return labelText(m_ladderError);
}

void GradeEditor::refresh() {
  m_refreshing = true;
  const auto& g = m_config.grading;
  if (!m_lambda->hasFocus())
    m_lambda->setText(g.lambda == 0 ? QString() : QString::number(g.lambda, 'g', 10));
  if (!m_clip->hasFocus()) m_clip->setText(QString::number(g.clip, 'g', 10));
  m_qmaxLabel->setText(tr("λ = %1 (d_k = %2) · q_max = log C / log λ = %3 · C⁻² = %4")
                           .arg(lambda(), 0, 'g', 6)
                           .arg(m_config.model.head_dim())
                           .arg(qMax(), 0, 'g', 6)
                           .arg(1.0 / (g.clip * g.clip), 0, 'g', 4));
  const auto grades = levelGrades();
  const int width = m_config.model.width();
  m_levels->setRowCount(g.levels);
  for (int l = 0; l < g.levels; ++l) {
    auto* a = new QTableWidgetItem(QString::number(l));
    a->setFlags(Qt::ItemIsEnabled);
    const int dims =
        g.level_dims.empty() ? (g.levels > 0 ? width / g.levels : 0) : g.level_dims[size_t(l)];
    auto* b = new QTableWidgetItem(QString::number(dims));
    b->setFlags(Qt::ItemIsEnabled);
    auto* c = new QTableWidgetItem(QString::number(grades[size_t(l)], 'g', 6));
    c->setToolTip(tr("0 ≤ q_l ≤ q_max = %1").arg(qMax(), 0, 'g', 6));
    auto* d = new QTableWidgetItem(QString::number(std::pow(lambda(), grades[size_t(l)]), 'f', 4));
    d->setFlags(Qt::ItemIsEnabled);
    m_levels->setItem(l, 0, a);
    m_levels->setItem(l, 1, b);
    m_levels->setItem(l, 2, c);
    m_levels->setItem(l, 3, d);
  }
  m_headSource->setCurrentText(qs(g.head_grades));
  m_outputSource->setCurrentIndex(std::max(0, m_outputSource->findData(qs(g.output_grades))));
  if (!m_outputFile->hasFocus()) m_outputFile->setText(qs(g.output_grades_file));
  if (m_ladderFile->text().isEmpty() && !g.ladder_file.empty())
    m_ladderFile->setText(qs(g.ladder_file));
  m_ladderArm->clear();
  if (m_ladder.is_object()) {
    for (const auto& a : m_ladder["arms"]) {
      const QString name = qs(a.value("name", ""));
      const bool avail = a.value("available", true);
      m_ladderArm->addItem(avail ? QStringLiteral("%1  (⟨q,α̂−τ̂⟩ = %2)")
                                       .arg(name)
                                       .arg(a.value("certificate", 0.0), 0, 'g', 4)
                                 : tr("%1 (unavailable)").arg(name),
                           name);
    }
    const int i = m_ladderArm->findData(qs(g.ladder_arm));
    m_ladderArm->setCurrentIndex(i);
    m_ladderInfo->setText(tr("ladder: d = %1, BC = %2, order %3")
                              .arg(m_ladder.value("d", 0))
                              .arg(m_ladder.value("bc", 0.0), 0, 'g', 5)
                              .arg(qs(m_ladder.value("order", nlohmann::json::array()).dump())));
  } else {
    m_ladderInfo->setText(g.ladder_arm.empty()
                              ? tr("No ladder loaded.")
                              : tr("arm %1 of %2").arg(qs(g.ladder_arm), qs(g.ladder_file)));
  }
  m_refreshing = false;
  refreshHeadTable();
  m_refreshing = true;
  const int view = m_headView->currentData().isValid() ? m_headView->currentData().toInt() : -1;
  m_headView->clear();
  m_headView->addItem(tr("mean over heads"), -1);
  for (int h = 0; h < m_headGrades.heads; ++h) m_headView->addItem(tr("head %1").arg(h), h);
  m_headView->setCurrentIndex(std::max(0, m_headView->findData(view)));
  m_refreshing = false;
  refreshHeadHeatmap();
}

void GradeEditor::refreshHeadTable() {
  m_refreshing = true;
  const GradeGrid& g = m_headGrades;
  m_heads->setRowCount(g.layers * g.heads);
  m_heads->setColumnCount(g.planes);
  QStringList rows, cols;
  for (int l = 0; l < g.layers; ++l)
    for (int h = 0; h < g.heads; ++h) rows << QStringLiteral("L%1 H%2").arg(l).arg(h);
  for (int p = 0; p < g.planes; ++p) cols << QString::number(p);
  m_heads->setVerticalHeaderLabels(rows);
  m_heads->setHorizontalHeaderLabels(cols);
  for (int l = 0; l < g.layers; ++l)
    for (int h = 0; h < g.heads; ++h)
      for (int p = 0; p < g.planes; ++p) {
        auto* it = m_heads->item(l * g.heads + h, p);
        if (!it) {
          it = new QTableWidgetItem;
          m_heads->setItem(l * g.heads + h, p, it);
        }
        it->setText(QString::number(g.at(l, h, p), 'g', 4));
      }
  m_refreshing = false;
}

void GradeEditor::refreshHeadHeatmap() {
  const int head = m_headView->currentData().isValid() ? m_headView->currentData().toInt() : -1;
  HeatmapData d = layerPlaneView(m_headGrades, head, QStringLiteral("q"));
  d.title = head < 0 ? tr("head grades, mean over heads") : tr("head grades, head %1").arg(head);
  m_headHeatmap->setData(d);
}

}  // namespace gllm::gui
