// LauncherPanel's cluster side: the "Run on" choice (Launch submits to a cluster profile), and the
// cluster runs listed below the queue's own runs with the scheduler's state beside their progress.
#include <QComboBox>
#include <QLabel>
#include <QPushButton>
#include <QTableWidget>

#include "widgets/launcher_panel.h"
#include "widgets/widget_util.h"

namespace gllm::gui {

namespace {
constexpr int kClusterDirRole = Qt::UserRole + 2;  // a cluster row's run folder (queue rows: none)
}

QColor clusterStateColor(const QString& s) {
  if (s == QLatin1String("running")) return {0x2f, 0x6f, 0xb2};
  if (s == QLatin1String("completed")) return {0x2e, 0x9d, 0x57};
  if (s == QLatin1String("failed") || s == QLatin1String("lost") ||
      s == QLatin1String("never_submitted"))
    return {0xc9, 0x30, 0x2c};
  if (s == QLatin1String("cancelled") || s == QLatin1String("timeout") ||
      s == QLatin1String("preempted") || s == QLatin1String("requeued"))
    return {0xb9, 0x7a, 0x1c};
  if (s == QLatin1String("unknown")) return {0x7a, 0x5c, 0xa8};
  return {0x33, 0x47, 0x5b};  // pending, submitting
}

void LauncherPanel::setClusterProfiles(const QStringList& names) {
  const QString chosen = runTarget();
  QStringList now;
  for (int i = 1; i < m_target->count(); ++i) now << m_target->itemData(i).toString();
  if (now == names) return;
  const QSignalBlocker quiet(m_target);
  while (m_target->count() > 1) m_target->removeItem(1);
  for (const QString& n : names) m_target->addItem(tr("cluster: %1").arg(n), n);
  if (!setRunTarget(chosen)) m_target->setCurrentIndex(0);
  updateButtons();
}

QString LauncherPanel::runTarget() const {
  return m_target->currentData().toString();
}

bool LauncherPanel::setRunTarget(const QString& profile) {
  const int i = m_target->findData(profile);
  if (i < 0) return false;
  m_target->setCurrentIndex(i);
  updateButtons();
  return true;
}

QString LauncherPanel::submitToCluster(const QString& profile) {
  if (!m_clusterSubmit) return tr("no cluster panel to submit through");
  const QString why = m_clusterSubmit(profile);
  m_status->setText(why.isEmpty() ? tr("Submitting to cluster profile %1 — the runs appear below "
                                       "with the scheduler's state once sbatch answers")
                                        .arg(profile)
                                  : why);
  return why;
}

void LauncherPanel::showClusterStatus(const QString& text) {
  m_status->setText(text);
}

void LauncherPanel::setClusterRuns(const QVector<ClusterRunView>& runs) {
  m_clusterRuns = runs;
  refreshTable();
}

QString LauncherPanel::selectedClusterRun() const {
  const auto rows = m_table->selectionModel()->selectedRows();
  if (rows.isEmpty()) return {};
  return m_table->item(rows.first().row(), 0)->data(kClusterDirRole).toString();
}

bool LauncherPanel::selectClusterRun(const QString& dir) {
  for (int i = 0; i < m_table->rowCount(); ++i)
    if (m_table->item(i, 0) && m_table->item(i, 0)->data(kClusterDirRole).toString() == dir) {
      m_table->selectRow(i);
      return true;
    }
  return false;
}

// Rows from `firstRow` on (the table already has their count): one per cluster run, its state
// "cluster: running · on node" in the Status column, its own progress and results beside it.
void LauncherPanel::fillClusterRows(int firstRow) {
  for (int k = 0; k < m_clusterRuns.size(); ++k) {
    const ClusterRunView& r = m_clusterRuns[k];
    const int i = firstRow + k;
    auto* name = new QTableWidgetItem(r.label);
    name->setData(kClusterDirRole, r.dir);
    name->setToolTip(
        tr("cluster run in %1\n(Cluster tab: requeue, cancel the sweep, script)").arg(r.dir));
    m_table->setItem(i, 0, name);
    m_table->setItem(i, 1, new QTableWidgetItem(QString::number(r.seed)));
    auto* st = new QTableWidgetItem(tr("cluster: %1").arg(r.state));
    st->setForeground(clusterStateColor(r.state));
    st->setToolTip(r.detail);
    setRunCells(i, st, r.step, r.totalSteps, r.valBpb, r.valStep, r.heldoutBpb, r.dir, r.detail);
  }
}

}  // namespace gllm::gui
