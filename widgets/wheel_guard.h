// WheelGuard: an application-wide event filter so the mouse wheel never changes a combo box, nor a
// spin box or slider the user has not clicked or tabbed into; the wheel scrolls the form instead.
#pragma once
#include <QObject>

namespace gllm::gui {

class WheelGuard : public QObject {
  Q_OBJECT
 public:
  // Installs one guard on the application (idempotent; needs a QApplication).
  static void install();
  // True when `w` is a value widget the guard protects (combo box, spin box, slider).
  static bool guards(const QObject* w);

 protected:
  bool eventFilter(QObject* watched, QEvent* event) override;

 private:
  explicit WheelGuard(QObject* parent) : QObject(parent) {}
};

}  // namespace gllm::gui
