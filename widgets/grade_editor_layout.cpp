// GradeEditor layout: the editor's group boxes (λ and C, level grades, head grades as table and
// heatmap, output grades, ladder arm, load / save) and the connections of their fields.
#include <QComboBox>
#include <QFileDialog>
#include <QFormLayout>
#include <QFrame>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QScrollArea>
#include <QTabWidget>
#include <QTableWidget>
#include <QVBoxLayout>

#include "widgets/grade_editor.h"
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

// "COMPONENT is off: these grades change nothing in the model [Turn it on]".
QWidget* offNotice(QWidget* parent, const QString& component, const QString& text,
                   const QString& button, QPushButton** buttonOut) {
  auto* w = new QFrame(parent);
  w->setObjectName(QStringLiteral("componentOff_") + component);
  w->setFrameShape(QFrame::StyledPanel);
  auto* h = new QHBoxLayout(w);
  h->setContentsMargins(6, 3, 6, 3);
  auto* l = new QLabel(text, w);
  l->setObjectName(QStringLiteral("hint"));
  l->setWordWrap(true);
  auto* b = new QPushButton(button, w);
  b->setObjectName(QStringLiteral("turnOn_") + component);
  h->addWidget(l, 1);
  h->addWidget(b);
  *buttonOut = b;
  return w;
}
}  // namespace

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
  QPushButton* mlgeOn = nullptr;
  m_mlgeOff = offNotice(levelBox, QStringLiteral("mlge"),
                        tr("MLGE is off in these settings (grading.mlge = false): level grades "
                           "change nothing in the model."),
                        tr("Turn MLGE on"), &mlgeOn);
  lv->addWidget(m_mlgeOff);
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
  m_headSource->setObjectName(QStringLiteral("headSource"));
  for (const char* s : {"uniform", "random", "file", "explicit"})
    m_headSource->addItem(QString::fromLatin1(s));
  auto* saveHeads = new QPushButton(QIcon(QStringLiteral(":/icons/save.svg")),
                                    tr("Save as grades file…"), headBox);
  hrow->addWidget(new QLabel(tr("source"), headBox));
  hrow->addWidget(m_headSource, 1);
  hrow->addWidget(saveHeads);
  hv->addLayout(hrow);
  QPushButton* attentionOn = nullptr;
  m_attentionOff = offNotice(headBox, QStringLiteral("attention"),
                             tr("Graded attention is off (grading.attention = false): head "
                                "grades change nothing in the model."),
                             tr("Turn graded attention on"), &attentionOn);
  hv->addWidget(m_attentionOff);
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
    // "explicit" keeps the grades shown; the other sources compute their own.
    const std::vector<double> shown = m_headGrades.values;
    applyGrading(
        [&](nlohmann::json& g) {
          g["head_grades"] = src;
          g["attn_grades"] = src == "explicit" ? nlohmann::json(shown) : nlohmann::json::array();
        },
        m_headError);
  });
  connect(saveHeads, &QPushButton::clicked, this, [this] {
    const QString f = QFileDialog::getSaveFileName(
        this, tr("Save head grades"), QStringLiteral("grades.json"), tr("JSON (*.json)"));
    if (!f.isEmpty()) saveHeadGradesFile(f);
  });

  // Output grades.
  auto* outBox = new QGroupBox(tr("Output grades q_out (graded loss)"), inner);
  auto* ov = new QVBoxLayout(outBox);
  m_outputSource = new QComboBox(outBox);
  m_outputSource->setObjectName(QStringLiteral("outputSource"));
  m_outputSource->addItem(tr("uniform"), QStringLiteral("uniform"));
  m_outputSource->addItem(tr("part-of-speech statistics"), QStringLiteral("pos"));
  m_outputSource->addItem(tr("file"), QStringLiteral("file"));
  m_outputFile = new QLineEdit(outBox);
  m_outputFile->setPlaceholderText(tr("output_grades[V] JSON (source = file)"));
  m_outputError = errorLabel(outBox);
  QPushButton* lossOn = nullptr;
  m_gradedLossOff = offNotice(outBox, QStringLiteral("graded_loss"),
                              tr("The graded loss is off (grading.graded_loss = false): output "
                                 "grades change nothing in the model."),
                              tr("Turn the graded loss on"), &lossOn);
  auto* orow = new QHBoxLayout;
  orow->addWidget(m_outputSource);
  orow->addWidget(m_outputFile, 1);
  ov->addWidget(m_gradedLossOff);
  ov->addLayout(orow);
  ov->addWidget(m_outputError);
  layout->addWidget(outBox);
  connect(m_outputSource, &QComboBox::activated, this, [this] {
    setOutputSource(m_outputSource->currentData().toString(), m_outputFile->text());
  });
  connect(m_outputFile, &QLineEdit::editingFinished, this, [this] {
    setOutputSource(m_outputSource->currentData().toString(), m_outputFile->text());
  });

  m_offNotices = {{QStringLiteral("mlge"), m_mlgeOff},
                  {QStringLiteral("attention"), m_attentionOff},
                  {QStringLiteral("graded_loss"), m_gradedLossOff}};
  connect(mlgeOn, &QPushButton::clicked, this, [this] { enableComponent(QStringLiteral("mlge")); });
  connect(attentionOn, &QPushButton::clicked, this,
          [this] { enableComponent(QStringLiteral("attention")); });
  connect(lossOn, &QPushButton::clicked, this,
          [this] { enableComponent(QStringLiteral("graded_loss")); });

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

}  // namespace gllm::gui
