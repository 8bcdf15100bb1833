// The workbench's settings file (QSettings, INI format): where it lies, and opening it only when it
// is a regular file or absent — a FIFO or device there would block QSettings' first read.
#pragma once
#include <QString>
#include <memory>

class QSettings;

namespace gllm::gui {

// $GLLM_WORKBENCH_SETTINGS when set, else <user config folder>/gllm/gllm-workbench.conf (where
// Qt's native format keeps it on Linux).
QString settingsFilePath();

// The settings, or nullptr with *problem saying what the file is and what to do (a FIFO, device,
// socket or folder; an unreadable file). Settings are off (nullptr, no problem) when
// GLLM_WORKBENCH_NO_SETTINGS is set (tests).
std::unique_ptr<QSettings> openSettings(QString* problem);

}  // namespace gllm::gui
