// Opening the workbench's settings file safely: its kind is checked (stat, no open) before
// QSettings reads it, so a named pipe or device at that path gives a message instead of a frozen
// start.
#include "widgets/settings_file.h"

#include <sys/stat.h>

#include <QCoreApplication>
#include <QSettings>
#include <QStandardPaths>

#include "engine/io/regular_file.h"

namespace gllm::gui {

QString settingsFilePath() {
  const QString env = qEnvironmentVariable("GLLM_WORKBENCH_SETTINGS");
  if (!env.isEmpty()) return env;
  return QStandardPaths::writableLocation(QStandardPaths::GenericConfigLocation) +
         QStringLiteral("/gllm/gllm-workbench.conf");
}

std::unique_ptr<QSettings> openSettings(QString* problem) {
  if (problem) problem->clear();
  if (qEnvironmentVariableIsSet("GLLM_WORKBENCH_NO_SETTINGS")) return nullptr;
  const QString path = settingsFilePath();
  struct stat st {};
  if (::stat(path.toLocal8Bit().constData(), &st) == 0 && !S_ISREG(st.st_mode)) {
    if (problem)
      *problem = QCoreApplication::translate("gui",
                                             "%1 is %2, not a settings file; the workbench "
                                             "runs with default settings and saves none "
                                             "until it is removed")
                     .arg(path, QString::fromStdString(file_kind(st.st_mode)));
    return nullptr;
  }
  return std::make_unique<QSettings>(path, QSettings::IniFormat);
}

}  // namespace gllm::gui
