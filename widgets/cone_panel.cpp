// ConePanel implementation: inputs are snapshotted into a job run by QtConcurrent; a generation
// counter drops stale results and a dirty flag reruns once with the newest inputs.
#include "widgets/cone_panel.h"

#include <QBarCategoryAxis>
#include <QBarSeries>
#include <QBarSet>
#include <QButtonGroup>
#include <QChart>
#include <QChartView>
#include <QFileDialog>
#include <QGridLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLegend>
#include <QLineEdit>
#include <QPushButton>
#include <QRadioButton>
#include <QSlider>
#include <QStyle>
#include <QVBoxLayout>
#include <QValueAxis>
#include <QtConcurrent/QtConcurrentRun>

#include "engine/grading/bootstrap.h"
#include "engine/io/error.h"
#include "engine/train/model_grades.h"
#include "widgets/widget_util.h"

namespace gllm::gui {

namespace {
struct ConeJob {
  int generation = 0;
  grading::Profiles profiles;
  std::vector<grading::Profiles> resamples;
  std::vector<double> grades;
  double lambda = 0, clip = 0;
  // Certifying the model's own grades (profiles file given): the settings and both profiles.
  std::shared_ptr<const RunConfig> config;
  std::string label;
  std::shared_ptr<grading::ProfilesFile> file;
  std::string filePath;
  std::shared_ptr<grading::HeadProfiles> heads;
  std::string headsPath;
};

// The model the settings build, its grade tensors read back and certified against the profiles.
void certifyModel(const ConeJob& job, ConeResult& r) {
  if (!job.config || !job.file) return;
  const grading::ModelGrades m = model_grades_from_config(*job.config, job.label);
  std::vector<grading::AnyProfiles> profiles(1);
  profiles[0].kind = "embedding";
  profiles[0].path = job.filePath;
  profiles[0].embedding = *job.file;
  if (job.heads) {
    grading::AnyProfiles h;
    h.kind = "heads";
    h.path = job.headsPath;
    h.heads = *job.heads;
    profiles.push_back(std::move(h));
  }
  r.components = grading::certify(m, profiles);
  for (const auto& c : r.components)
    if (c.component == "mlge.level_grades" && c.certified) {
      r.fromModel = true;
      r.model = c;
    }
  r.gradesSource =
      r.fromModel ? QObject::tr("mlge.level_grades of the model built from %1, read back (d = %2)")
                        .arg(qs(job.label))
                        .arg(r.model.d)
                  : QObject::tr(
                        "the editor's level grades (explorer): the model built from %1 holds no "
                        "MLGE grades to certify (grading.mlge is off)")
                        .arg(qs(job.label));
}

ConeResult computeCone(const ConeJob& job) {
  ConeResult r;
  r.generation = job.generation;
  try {
    const grading::Profiles& p = job.profiles;
    if (!p.has_levels())
      throw Error("the profiles have no level structure; re-run `gllm profiles` with --levels");
    if (static_cast<int>(job.grades.size()) != p.levels())
      throw Error("the grading has " + std::to_string(job.grades.size()) +
                  " level grades but the profiles have " + std::to_string(p.levels()) +
                  " levels; set grading.levels to match");
    r.report = grading::evaluate_cone_levels(p, job.grades, job.lambda, job.clip);
    r.levelAlpha = p.level_alpha();
    r.levelTau = p.level_tau();
    grading::SelectOptions opt;
    opt.lambda = job.lambda;
    opt.clip = job.clip;
    r.educated = grading::select_levels(p, opt);
    const grading::Deletion del = grading::delete_degenerate(p);
    if (del.any()) r.deletion = qs(del.summary());
    if (!job.resamples.empty()) {
      std::vector<double> q(static_cast<size_t>(p.d()));
      const auto level = p.level_of_coordinate();
      for (size_t j = 0; j < q.size(); ++j) q[j] = job.grades[static_cast<size_t>(level[j])];
      const auto b = grading::bootstrap_from_resamples(p, job.resamples, q);
      r.hasBootstrap = true;
      r.bootstrapSignFraction = b.sign_fraction;
      r.bootstrapResamples = b.resamples;
    }
    certifyModel(job, r);
  } catch (const std::exception& e) {
    r.error = qs(e.what());
  }
  return r;
}

QSlider* makeSlider(QWidget* parent, int value) {
  auto* s = new QSlider(Qt::Horizontal, parent);
  s->setRange(5, 100);  // ν, μ ∈ [0.05, 1.00] in steps of 0.01
  s->setValue(value);
  return s;
}
}  // namespace

ConePanel::ConePanel(QWidget* parent) : QWidget(parent) {
  m_grades.assign(4, 0.0);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(6, 6, 6, 6);

  auto* src = new QGroupBox(tr("Profiles αˆ (target energy) and τˆ (data variance)"), this);
  auto* sg = new QGridLayout(src);
  m_geoButton = new QRadioButton(tr("geometric (ν, μ) — Cor. 3"), src);
  m_fileButton = new QRadioButton(tr("file from `gllm profiles`"), src);
  m_geoButton->setChecked(true);
  auto* group = new QButtonGroup(this);
  group->addButton(m_geoButton);
  group->addButton(m_fileButton);
  m_nu = makeSlider(src, 60);
  m_mu = makeSlider(src, 30);
  m_nu->setObjectName(QStringLiteral("nu"));
  m_mu->setObjectName(QStringLiteral("mu"));
  m_nuLabel = new QLabel(src);
  m_muLabel = new QLabel(src);
  m_nuLabel->setMinimumWidth(70);
  m_filePathEdit = new QLineEdit(src);
  m_filePathEdit->setPlaceholderText(tr("profiles.json"));
  auto* open = new QPushButton(QIcon(QStringLiteral(":/icons/open.svg")), tr("Open…"), src);
  m_sourceError = new QLabel(src);
  m_sourceError->setObjectName(QStringLiteral("fieldError"));
  m_sourceError->setWordWrap(true);
  m_sourceError->setVisible(false);
  sg->addWidget(m_geoButton, 0, 0, 1, 3);
  sg->addWidget(new QLabel(tr("ν (energy toward deep levels)"), src), 1, 0);
  sg->addWidget(m_nu, 1, 1);
  sg->addWidget(m_nuLabel, 1, 2);
  sg->addWidget(new QLabel(tr("μ (variance decay)"), src), 2, 0);
  sg->addWidget(m_mu, 2, 1);
  sg->addWidget(m_muLabel, 2, 2);
  sg->addWidget(m_fileButton, 3, 0, 1, 3);
  auto* frow = new QHBoxLayout;
  frow->addWidget(m_filePathEdit, 1);
  frow->addWidget(open);
  sg->addLayout(frow, 4, 0, 1, 3);
  sg->addWidget(m_sourceError, 5, 0, 1, 3);
  sg->setColumnStretch(1, 1);
  layout->addWidget(src);

  auto* res = new QGroupBox(tr("Certificate for the current grades"), this);
  auto* rg = new QGridLayout(res);
  rg->setVerticalSpacing(3);
  m_badge = new QLabel(res);
  m_badgeReason = new QLabel(res);
  m_badgeReason->setObjectName(QStringLiteral("hint"));
  m_badgeReason->setWordWrap(true);
  // A pill that keeps its padding beside a long reason (style sheet padding is not in a QLabel's
  // size hint).
  m_badge->setContentsMargins(10, 3, 10, 3);
  m_badge->setSizePolicy(QSizePolicy::Fixed, QSizePolicy::Fixed);
  auto* brow = new QHBoxLayout;
  brow->setSpacing(8);
  brow->addWidget(m_badge);
  brow->addWidget(m_badgeReason, 1);
  rg->addLayout(brow, 0, 0, 1, 4);
  m_source = new QLabel(res);
  m_source->setObjectName(QStringLiteral("hint"));
  m_source->setWordWrap(true);
  rg->addWidget(m_source, 1, 0, 1, 4);
  struct Row {
    const char* key;
    QString name;
    QString tip;
  };
  const Row rows[] = {
      {"certificate", tr("⟨q, αˆ−τˆ⟩"),
       tr("First-order test of the cone (Eq. 15): > 0 points into Q₊ at q = 0; the cone itself "
          "is Λ(q) < 1")},
      {"bootstrap", tr("sign stability"),
       tr("Fraction of bootstrap resamples keeping the sign (§7.2)")},
      {"lambda_q", tr("Λ(q)"),
       tr("Sample-complexity ratio; < 1 means fewer tokens than uniform grades")},
      {"gain", tr("predicted token gain"),
       tr("1/Λ(q): tokens of the uniform arm per token of this grading")},
      {"heldout", tr("held-out"),
       tr("The same grades scored on profiles re-estimated on held-out sentences (the honest "
          "prediction: the grades were fitted on the other profiles)")},
      {"bc", tr("BC(αˆ, τˆ)"), tr("Bhattacharyya affinity Σ √(α_j τ_j)")},
      {"lambda_star", tr("Λ* = BC²"), tr("Unclipped minimum of Λ")},
      {"clip_bound", tr("C⁻²"), tr("Floor of Λ on the clip box (Prop. 10(iii))")},
      {"lambda_c", tr("Λ*_C (per level)"),
       tr("Minimum of Λ over level-constant grades on the clip box, at q*_C of the "
          "L-level program (Prop. 11)")},
      {"gain_c", tr("gain at q*_C"), tr("1/Λ*_C")},
      {"g_c", tr("g*_C = λ^{q*_C}"), tr("Per-level multipliers of the educated grading (g_0 = 1)")},
  };
  int i = 0;
  for (const Row& r : rows) {
    auto* name = new QLabel(r.name, res);
    name->setObjectName(QStringLiteral("metricName"));
    name->setToolTip(r.tip);
    auto* value = new QLabel(QStringLiteral("—"), res);
    value->setObjectName(QStringLiteral("metricValue"));
    value->setTextInteractionFlags(Qt::TextSelectableByMouse);
    value->setToolTip(r.tip);
    // One figure a row, values wrapping: the panel fits a 500 px dock without scrolling sideways.
    value->setWordWrap(true);
    rg->addWidget(name, 2 + i, 0);
    rg->addWidget(value, 2 + i, 1, 1, 3);
    m_values.insert(QString::fromLatin1(r.key), value);
    ++i;
  }
  rg->setColumnStretch(1, 1);
  m_educated = new QPushButton(QIcon(QStringLiteral(":/icons/cone.svg")),
                               tr("Set to the educated q*_C"), res);
  m_educated->setObjectName(QStringLiteral("primary"));
  m_educated->setToolTip(
      tr("The level grades of the L-level program (Prop. 11); `gllm ladder` also offers the "
         "d-variable program (Prop. 10)"));
  rg->addWidget(m_educated, 3 + i, 0, 1, 4);
  m_headsLabel = new QLabel(res);
  m_headsLabel->setObjectName(QStringLiteral("hint"));
  m_headsLabel->setWordWrap(true);
  auto* headsOpen = new QPushButton(tr("Head profiles…"), res);
  headsOpen->setToolTip(tr(
      "A `gllm profiles --checkpoint CKPT` file: profiles of every head in its own coordinates"));
  auto* hrow = new QHBoxLayout;
  hrow->addWidget(m_headsLabel, 1);
  hrow->addWidget(headsOpen);
  rg->addLayout(hrow, 4 + i, 0, 1, 4);
  connect(headsOpen, &QPushButton::clicked, this, [this] {
    const QString f = QFileDialog::getOpenFileName(this, tr("Open head profiles"), QString(),
                                                   tr("JSON (*.json)"));
    if (!f.isEmpty()) loadHeadProfilesFile(f);
  });
  layout->addWidget(res);

  m_chart = new QChart;
  m_chart->setTitle(tr("αˆ (target energy) vs τˆ (data variance) per level"));
  QFont tf = m_chart->titleFont();
  tf.setBold(true);
  tf.setPointSizeF(9);
  m_chart->setTitleFont(tf);
  m_chart->setMargins(QMargins(2, 2, 2, 2));
  m_chart->legend()->setAlignment(Qt::AlignBottom);
  auto* view = new QChartView(m_chart, this);
  view->setRenderHint(QPainter::Antialiasing);
  view->setMinimumHeight(190);
  layout->addWidget(view, 1);
  m_status = new QLabel(this);
  m_status->setObjectName(QStringLiteral("hint"));
  m_status->setWordWrap(true);
  layout->addWidget(m_status);

  m_watcher = new QFutureWatcher<ConeResult>(this);
  connect(m_watcher, &QFutureWatcher<ConeResult>::finished, this, [this] {
    applyResult(m_watcher->result());
    if (m_dirty) startCompute();
  });
  connect(m_nu, &QSlider::valueChanged, this, [this] {
    updateSliderLabels();
    if (!m_fromFile) schedule();
  });
  connect(m_mu, &QSlider::valueChanged, this, [this] {
    updateSliderLabels();
    if (!m_fromFile) schedule();
  });
  connect(m_geoButton, &QRadioButton::toggled, this, [this](bool on) {
    if (on) useGeometric();
  });
  connect(m_fileButton, &QRadioButton::toggled, this, [this](bool on) {
    if (on && !m_filePathEdit->text().isEmpty()) loadProfilesFile(m_filePathEdit->text());
  });
  connect(open, &QPushButton::clicked, this, [this] {
    const QString f =
        QFileDialog::getOpenFileName(this, tr("Open profiles"), QString(), tr("JSON (*.json)"));
    if (!f.isEmpty()) loadProfilesFile(f);
  });
  connect(m_filePathEdit, &QLineEdit::editingFinished, this, [this] {
    if (!m_filePathEdit->text().isEmpty() && m_filePathEdit->text() != m_filePath)
      loadProfilesFile(m_filePathEdit->text());
  });
  connect(m_educated, &QPushButton::clicked, this, [this] {
    if (m_result.error.isEmpty() && !m_result.educated.level_grades.empty())
      Q_EMIT educatedRequested(m_result.educated.level_grades);
  });
  updateSliderLabels();
  schedule();
}

double ConePanel::nu() const {
  return m_nu->value() / 100.0;
}
double ConePanel::mu() const {
  return m_mu->value() / 100.0;
}

void ConePanel::updateSliderLabels() {
  m_nuLabel->setText(QStringLiteral("ν = %1").arg(nu(), 0, 'f', 2));
  m_muLabel->setText(QStringLiteral("μ = %1").arg(mu(), 0, 'f', 2));
}

void ConePanel::setGrades(const std::vector<double>& levelGrades, double lambda, double clip) {
  m_grades = levelGrades;
  m_lambda = lambda;
  m_clip = clip;
  if (!m_fromFile) m_levels = static_cast<int>(levelGrades.size());
  schedule();
}

void ConePanel::setConfig(const RunConfig& config, const QString& label) {
  m_config = std::make_shared<const RunConfig>(config);
  m_configLabel = label;
  schedule();
}

QString ConePanel::loadHeadProfilesFile(const QString& path) {
  try {
    auto any = grading::load_any_profiles(ss(path));
    if (any.kind != "heads")
      throw Error(
          ss(path) +
          " holds embedding profiles; head profiles come from `gllm profiles --checkpoint CKPT`");
    m_heads = std::make_shared<grading::HeadProfiles>(std::move(any.heads));
    m_headsPath = path;
    schedule();
    return {};
  } catch (const std::exception& e) {
    return showSourceError(qs(e.what()));
  }
}

QString ConePanel::showSourceError(const QString& message) {
  m_sourceError->setText(message);
  m_sourceError->setVisible(true);
  return message;
}

void ConePanel::setGeometric(double nu, double mu) {
  m_nu->setValue(int(std::lround(nu * 100)));
  m_mu->setValue(int(std::lround(mu * 100)));
  useGeometric();
}

void ConePanel::useGeometric() {
  m_fromFile = false;
  if (!m_geoButton->isChecked()) m_geoButton->setChecked(true);
  m_sourceError->setVisible(false);
  schedule();
}

QString ConePanel::loadProfilesFile(const QString& path) {
  try {
    auto f = std::make_shared<grading::ProfilesFile>(grading::load_profiles_file(ss(path)));
    m_file = f;
    m_filePath = path;
    m_filePathEdit->setText(path);
    m_fromFile = true;
    if (!m_fileButton->isChecked()) {
      m_fileButton->blockSignals(true);
      m_fileButton->setChecked(true);
      m_fileButton->blockSignals(false);
    }
    m_sourceError->setVisible(false);
    schedule();
    return {};
  } catch (const std::exception& e) {
    return showSourceError(qs(e.what()));
  }
}

grading::Profiles ConePanel::currentProfiles() const {
  if (m_fromFile && m_file) return m_file->profiles;
  return grading::geometric_profiles(nu(), mu(), std::max(1, static_cast<int>(m_grades.size())));
}

bool ConePanel::busy() const {
  return m_watcher->isRunning() || m_dirty;
}

void ConePanel::schedule() {
  ++m_generation;
  if (m_watcher->isRunning()) {
    m_dirty = true;  // rerun with the newest inputs when the running job ends
    return;
  }
  startCompute();
}

void ConePanel::startCompute() {
  m_dirty = false;
  ConeJob job;
  job.generation = m_generation;
  try {
    job.profiles = currentProfiles();
  } catch (const std::exception& e) {
    ConeResult r;
    r.generation = m_generation;
    r.error = qs(e.what());
    applyResult(r);
    return;
  }
  if (m_fromFile && m_file) {
    job.resamples = m_file->bootstrap;
    job.config = m_config;
    job.label = ss(m_configLabel);
    job.file = m_file;
    job.filePath = ss(m_filePath);
    job.heads = m_heads;
    job.headsPath = ss(m_headsPath);
  }
  job.grades = m_grades;
  job.lambda = m_lambda;
  job.clip = m_clip;
  m_watcher->setFuture(QtConcurrent::run(computeCone, job));
}

bool ConePanel::waitForResult(int ms) {
  return runEventsUntil([this] { return !busy() && m_result.generation == m_generation; }, ms);
}

QString ConePanel::badgeText() const {
  return m_badge->text();
}
QString ConePanel::headsText() const {
  return m_headsLabel->text();
}
QString ConePanel::sourceText() const {
  return m_source->text();
}
QString ConePanel::valueText(const QString& key) const {
  auto* l = m_values.value(key, nullptr);
  return l ? l->text() : QString();
}

void ConePanel::applyResult(const ConeResult& r) {
  if (r.generation != m_generation) return;  // a newer edit is pending
  m_result = r;
  auto set = [this](const char* key, const QString& text) {
    m_values[QString::fromLatin1(key)]->setText(text);
  };
  if (!r.error.isEmpty()) {
    m_badge->setObjectName(QStringLiteral("badgeNotCertified"));
    m_badge->setText(tr("no certificate"));
    m_badgeReason->setText(r.error);
    for (QLabel* l : m_values) l->setText(QStringLiteral("—"));
    m_educated->setEnabled(false);
    m_educated->setText(tr("Set to q*_C (no certificate: nothing to set)"));
  } else {
    const auto& c = r.report;
    // The numbers of the model's own grades when they were certified, else the explorer's.
    const double certificate = r.fromModel ? r.model.certificate : c.certificate;
    const int sign = r.fromModel ? r.model.sign : c.certificate_sign;
    const double lambda_q = r.fromModel ? r.model.lambda_q : c.lambda_q;
    const double gain = r.fromModel ? r.model.gain : c.gain;
    const bool boot = r.fromModel ? r.model.sign_fraction >= 0 : r.hasBootstrap;
    const double fraction = r.fromModel ? r.model.sign_fraction : r.bootstrapSignFraction;
    const int resamples = r.fromModel ? r.model.resamples : r.bootstrapResamples;
    // The cone Q₊ = {Λ(q) < 1} (Prop. 8) and its first-order test, Eq. 15's sign: both shown.
    const grading::ConeVerdict verdict = grading::cone_verdict(lambda_q, certificate);
    const bool inCone = verdict == grading::ConeVerdict::InCone && c.within_clip;
    m_badge->setObjectName(inCone ? QStringLiteral("badgeCertified")
                                  : QStringLiteral("badgeNotCertified"));
    m_badge->setText(!c.within_clip ? tr("✘ outside the clip box")
                                    : (inCone                                        ? tr("✔ ")
                                       : std::abs(lambda_q - 1) <= 1e-9 && sign == 0 ? tr("○ ")
                                                                                     : tr("✘ ")) +
                                          qs(grading::cone_verdict_text(lambda_q, certificate)));
    const QString kept = boot ? tr("; the first-order sign holds in %1 % of %2 bootstrap resamples")
                                    .arg(100 * fraction, 0, 'f', 1)
                                    .arg(resamples)
                              : QString();
    const QString order = sign > 0 ? tr("⟨q, αˆ−τˆ⟩ > 0: positive to first order (Eq. 15)")
                          : sign < 0 ? tr("⟨q, αˆ−τˆ⟩ < 0: negative to first order (Eq. 15)")
                                     : tr("⟨q, αˆ−τˆ⟩ = 0");
    const QString cone =
        verdict == grading::ConeVerdict::InCone
            ? tr("Λ(q) = %1 < 1: in the cone Q₊ (Prop. 8)").arg(formatNumber(lambda_q, 4))
            : tr("Λ(q) = %1 ≥ 1: outside the cone Q₊ (Prop. 8)").arg(formatNumber(lambda_q, 4));
    if (!c.within_clip)
      m_badgeReason->setText(tr("a grade lies outside [0, q_max = %1]").arg(c.q_max, 0, 'g', 4));
    else if (sign == 0 && std::abs(lambda_q - 1) < 1e-12)
      m_badgeReason->setText(tr("q = 0: uniform grades sit on the cone's boundary (Prop. 8(iii))"));
    else
      m_badgeReason->setText(cone + QStringLiteral("; ") + order + kept);
    const QString sgn = sign > 0   ? tr("(+, enters Q₊)")
                        : sign < 0 ? tr("(−, leaves Q₊)")
                                   : tr("(0)");
    set("certificate", formatNumber(certificate, 5) + QStringLiteral("  ") + sgn);
    set("bootstrap", boot ? tr("%1 % of %2").arg(100 * fraction, 0, 'f', 1).arg(resamples)
                          : tr("n/a (no resamples)"));
    set("lambda_q",
        formatNumber(lambda_q, 5) +
            (verdict == grading::ConeVerdict::InCone ? tr("  (< 1: in Q₊)") : QString()));
    set("gain", formatNumber(gain, 4) + QStringLiteral("×"));
    // BC and Λ* of the program the shown grades belong to: per coordinate for the model's d
    // grades, per level for the explorer's level-constant grades (the L-level program).
    const double bc = r.fromModel ? r.model.bc : c.bc;
    const QString per = r.fromModel ? tr("  (per coordinate, d = %1)").arg(r.model.d)
                                    : tr("  (per level, L = %1)").arg(r.levelAlpha.size());
    set("bc", formatNumber(bc, 5) + per);
    set("lambda_star", formatNumber(bc * bc, 4) + per);
    if (r.fromModel && r.model.has_heldout)
      set("heldout", tr("⟨q,αˆ−τˆ⟩ %1, Λ %2, gain %3× — %4")
                         .arg(formatNumber(r.model.certificate_heldout, 4),
                              formatNumber(r.model.lambda_q_heldout, 4),
                              formatNumber(r.model.gain_heldout, 3), qs(r.model.verdict_heldout)));
    else
      set("heldout", r.fromModel ? tr("n/a (the profiles file has no held-out profiles)")
                                 : tr("n/a (explorer: no model certified)"));
    set("clip_bound", formatNumber(c.clip_bound, 4));
    set("lambda_c", formatNumber(r.educated.lambda_c, 4));
    set("gain_c", formatNumber(r.educated.gain, 4) + QStringLiteral("×"));
    QStringList g;
    for (double v : r.educated.level_grades) g << QString::number(std::pow(c.lambda, v), 'f', 2);
    set("g_c", QStringLiteral("(") + g.join(QStringLiteral(", ")) + QStringLiteral(")"));
    const bool selected = !r.educated.level_grades.empty();
    m_educated->setEnabled(selected);
    m_educated->setText(selected ? tr("Set to q*_C, L-level  (Λ*_C = %1, gain %2×)")
                                       .arg(r.educated.lambda_c, 0, 'f', 3)
                                       .arg(r.educated.gain, 0, 'f', 2)
                                 : tr("Set to q*_C (no selection for these profiles)"));
  }
  // Where the certified grades come from, and what the head grades get.
  if (!m_fromFile) {
    m_source->setText(
        tr("Table 3 explorer: geometric profiles and the editor's level grades (level-constant, "
           "Rem. 9); "
           "no model is certified here — load a `gllm profiles` file for that."));
  } else {
    m_source->setText((r.gradesSource.isEmpty() ? tr("the editor's level grades (explorer)")
                                                : tr("Grades: ") + r.gradesSource) +
                      (r.fromModel && !r.model.coordinates.empty()
                           ? tr(". Coordinates: ") + qs(r.model.coordinates) + QStringLiteral(".")
                           : QString()));
  }
  int heads = 0, inCone = 0, positive = 0, uncertified = 0;
  double minFraction = 1;
  QString headReason, tip;
  for (const auto& comp : r.components) {
    if (comp.component.rfind("attn_grades", 0) != 0) continue;
    ++heads;
    if (!comp.certified) {
      ++uncertified;
      headReason = qs(comp.reason);
      continue;
    }
    inCone += grading::cone_verdict(comp.lambda_q, comp.certificate) == grading::ConeVerdict::InCone
                  ? 1
                  : 0;
    positive += comp.admissible ? 1 : 0;
    if (comp.sign_fraction >= 0) minFraction = std::min(minFraction, comp.sign_fraction);
    tip += tr("%1: ⟨q, αˆ−τˆ⟩ = %2, Λ = %3\n")
               .arg(qs(comp.component), formatNumber(comp.certificate, 4),
                    formatNumber(comp.lambda_q, 4));
  }
  if (!m_fromFile || heads == 0) {
    m_headsLabel->setText(
        m_fromFile ? tr("Head grades: the model has no graded attention.")
                   : tr("Head grades: certified only against head profiles and a profiles file."));
  } else if (uncertified > 0) {
    m_headsLabel->setText(
        tr("Head grades (%1 heads): not certified — %2").arg(heads).arg(headReason));
  } else {
    m_headsLabel->setText(
        tr("Head grades: %1 of %2 heads in the cone (Λ < 1), %3 positive to first order, against "
           "%4; the first-order sign holds in at least %5 % of resamples")
            .arg(inCone)
            .arg(heads)
            .arg(positive)
            .arg(m_headsPath)
            .arg(100 * minFraction, 0, 'f', 1));
  }
  m_headsLabel->setToolTip(tip.trimmed());
  m_badge->style()->unpolish(m_badge);
  m_badge->style()->polish(m_badge);

  // αˆ vs τˆ bars.
  m_chart->removeAllSeries();
  for (QAbstractAxis* a : m_chart->axes()) {
    m_chart->removeAxis(a);
    delete a;
  }
  if (!r.levelAlpha.empty()) {
    auto* a = new QBarSet(tr("αˆ (a_l)"));
    auto* s = new QBarSet(tr("τˆ (s_l)"));
    a->setColor(QColor(0x2f, 0x6f, 0xb2));
    s->setColor(QColor(0xf2, 0x8e, 0x2b));
    QStringList cats;
    double top = 0;
    for (size_t l = 0; l < r.levelAlpha.size(); ++l) {
      *a << r.levelAlpha[l];
      *s << r.levelTau[l];
      top = std::max({top, r.levelAlpha[l], r.levelTau[l]});
      cats << tr("level %1").arg(l);
    }
    auto* series = new QBarSeries;
    series->append(a);
    series->append(s);
    m_chart->addSeries(series);
    auto* ax = new QBarCategoryAxis;
    ax->append(cats);
    auto* ay = new QValueAxis;
    applyNiceTicks(ay, 0, top > 0 ? top * 1.1 : 1);
    m_chart->addAxis(ax, Qt::AlignBottom);
    m_chart->addAxis(ay, Qt::AlignLeft);
    series->attachAxis(ax);
    series->attachAxis(ay);
  }
  QString status =
      m_fromFile
          ? tr("Profiles: %1 (d = %2)").arg(m_filePath).arg(m_file ? m_file->profiles.d() : 0)
          : tr("Profiles: geometric ν = %1, μ = %2, L = %3")
                .arg(nu(), 0, 'f', 2)
                .arg(mu(), 0, 'f', 2)
                .arg(m_grades.size());
  status += tr(" · λ = %1, C = %2").arg(m_lambda, 0, 'g', 6).arg(m_clip, 0, 'g', 6);
  if (!r.deletion.isEmpty()) status += QStringLiteral(" · ") + r.deletion;
  m_status->setText(status);
  Q_EMIT resultReady();
}

}  // namespace gllm::gui
