// CheckpointTimeline implementation: list_checkpoints runs on a worker with a generation counter
// (a stale listing is dropped); slider moves are coalesced so a drag opens one checkpoint.
#include "widgets/checkpoint_timeline.h"

#include <QDir>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QLabel>
#include <QRegularExpression>
#include <QSlider>
#include <QTimer>
#include <QtConcurrent/QtConcurrentRun>

#include "engine/train/run_store.h"
#include "widgets/widget_util.h"

namespace gllm::gui {

namespace {
CheckpointList listCheckpoints(int generation, const QString& runDir) {
  CheckpointList out;
  out.generation = generation;
  out.runDir = runDir;
  try {
    for (const CheckpointInfo& c : list_checkpoints(ss(runDir))) {
      out.steps << qint64(c.step);
      out.weights << qs(c.weights_path);
    }
  } catch (const std::exception&) {
    // Not a run folder (a bare checkpoint file): no timeline.
  }
  return out;
}
}  // namespace

CheckpointTimeline::CheckpointTimeline(QWidget* parent) : QWidget(parent) {
  auto* row = new QHBoxLayout(this);
  row->setContentsMargins(0, 0, 0, 0);
  auto* title = new QLabel(tr("Checkpoint"), this);
  m_slider = new QSlider(Qt::Horizontal, this);
  m_slider->setObjectName(QStringLiteral("checkpointSlider"));
  m_slider->setToolTip(tr("Follow the run through its checkpoints (one tick per checkpoint)."));
  m_slider->setTickPosition(QSlider::TicksBelow);
  m_slider->setPageStep(1);
  m_label = new QLabel(this);
  m_label->setObjectName(QStringLiteral("hint"));
  m_label->setMinimumWidth(m_label->fontMetrics().horizontalAdvance(tr("step 0000000 (10 of 10)")));
  row->addWidget(title);
  row->addWidget(m_slider, 1);
  row->addWidget(m_label);
  m_settle = new QTimer(this);
  m_settle->setSingleShot(true);
  m_settle->setInterval(120);
  m_watcher = new QFutureWatcher<CheckpointList>(this);
  connect(m_watcher, &QFutureWatcher<CheckpointList>::finished, this,
          [this] { applyList(m_watcher->result()); });
  connect(m_slider, &QSlider::valueChanged, this, [this] {
    updateLabel();
    if (!m_updating) m_settle->start();
  });
  connect(m_settle, &QTimer::timeout, this, [this] {
    const int i = m_slider->value();
    if (i >= 0 && i < m_list.weights.size())
      Q_EMIT checkpointChosen(m_list.weights[i], m_list.steps[i]);
  });
  applyList({});
}

QString CheckpointTimeline::runOf(const QString& path) {
  const QFileInfo f(path);
  if (f.isDir()) return f.absoluteFilePath();
  if (f.dir().dirName() == QLatin1String("checkpoints"))
    return QFileInfo(f.dir().absolutePath()).dir().absolutePath();
  return {};
}

qint64 CheckpointTimeline::stepOf(const QString& weightsPath) {
  static const QRegularExpression re(QStringLiteral("^step_(\\d+)$"));
  const auto m = re.match(QFileInfo(weightsPath).completeBaseName());
  return m.hasMatch() ? m.captured(1).toLongLong() : -1;
}

void CheckpointTimeline::setRun(const QString& runOrCheckpoint, qint64 step) {
  const QString run = runOf(runOrCheckpoint);
  m_wantStep = step;
  ++m_generation;
  if (run.isEmpty()) {
    CheckpointList none;
    none.generation = m_generation;
    applyList(none);
    return;
  }
  m_watcher->setFuture(QtConcurrent::run(listCheckpoints, m_generation, run));
}

void CheckpointTimeline::applyList(const CheckpointList& list) {
  if (list.generation != m_generation) return;  // a newer run was asked for meanwhile
  m_list = list;
  m_updating = true;
  m_slider->setRange(0, std::max(0, int(list.steps.size()) - 1));
  int index = int(list.steps.size()) - 1;
  if (m_wantStep >= 0)
    for (int i = 0; i < list.steps.size(); ++i)
      if (list.steps[i] <= m_wantStep) index = i;
  m_slider->setValue(std::max(0, index));
  m_slider->setEnabled(list.steps.size() > 1);
  m_updating = false;
  updateLabel();
}

qint64 CheckpointTimeline::currentStep() const {
  const int i = m_slider->value();
  return i >= 0 && i < m_list.steps.size() ? m_list.steps[i] : -1;
}

void CheckpointTimeline::chooseStep(qint64 step) {
  int index = 0;
  for (int i = 0; i < m_list.steps.size(); ++i)
    if (m_list.steps[i] <= step) index = i;
  if (m_slider->value() == index) {
    m_settle->start();  // the same checkpoint chosen again: say so anyway
    return;
  }
  m_slider->setValue(index);
}

void CheckpointTimeline::updateLabel() {
  if (m_list.steps.isEmpty()) {
    m_label->setText(tr("no checkpoints"));
    return;
  }
  const int i = m_slider->value();
  m_label->setText(
      tr("step %1 (%2 of %3)").arg(m_list.steps[i]).arg(i + 1).arg(m_list.steps.size()));
}

}  // namespace gllm::gui
