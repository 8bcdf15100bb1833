// WheelGuard implementation: guarded widgets take focus only by click or Tab (StrongFocus); a
// wheel event over a combo box, or over a spin box or slider without focus, scrolls the form.
#include "widgets/wheel_guard.h"

#include <QAbstractScrollArea>
#include <QAbstractSlider>
#include <QAbstractSpinBox>
#include <QApplication>
#include <QComboBox>
#include <QScrollBar>
#include <QWheelEvent>

namespace gllm::gui {

void WheelGuard::install() {
  if (!qApp || qApp->findChild<WheelGuard*>(QString(), Qt::FindDirectChildrenOnly)) return;
  qApp->installEventFilter(new WheelGuard(qApp));
}

bool WheelGuard::guards(const QObject* w) {
  if (qobject_cast<const QComboBox*>(w) || qobject_cast<const QAbstractSpinBox*>(w)) return true;
  // Sliders, not the scroll bars the wheel is meant for.
  return qobject_cast<const QAbstractSlider*>(w) && !qobject_cast<const QScrollBar*>(w);
}

bool WheelGuard::eventFilter(QObject* watched, QEvent* event) {
  if (event->type() == QEvent::Polish && guards(watched)) {
    // Qt gives combo boxes WheelFocus: a wheel notch would focus them before any filter runs.
    auto* w = static_cast<QWidget*>(watched);
    if (w->focusPolicy() == Qt::WheelFocus) w->setFocusPolicy(Qt::StrongFocus);
    return false;
  }
  if (event->type() != QEvent::Wheel || !watched->isWidgetType()) return false;
  // The wheel reaches the widget under the pointer (or a child of it, e.g. a spin box's line edit).
  QWidget* w = static_cast<QWidget*>(watched);
  QWidget* guarded = nullptr;
  for (QWidget* p = w; p && !p->isWindow(); p = p->parentWidget())
    if (guards(p)) {
      guarded = p;
      break;
    }
  if (!guarded) return false;
  // A combo box changes only by an explicit click and choice, focused or not; a focused spin box
  // or slider still takes the wheel (the user clicked into it to turn it).
  const bool focused = guarded->hasFocus() || guarded->isAncestorOf(QApplication::focusWidget());
  if (focused && !qobject_cast<QComboBox*>(guarded)) return false;
  // Scroll the nearest scroll area around it instead, as if the widget were not there.
  for (QWidget* p = guarded->parentWidget(); p; p = p->parentWidget())
    if (auto* area = qobject_cast<QAbstractScrollArea*>(p)) {
      auto* wheel = static_cast<QWheelEvent*>(event);
      QScrollBar* bar =
          wheel->angleDelta().y() != 0 ? area->verticalScrollBar() : area->horizontalScrollBar();
      if (bar && bar->isVisible()) {
        QWheelEvent copy(bar->mapFromGlobal(wheel->globalPosition()), wheel->globalPosition(),
                         wheel->pixelDelta(), wheel->angleDelta(), wheel->buttons(),
                         wheel->modifiers(), wheel->phase(), wheel->inverted());
        QCoreApplication::sendEvent(bar, &copy);
      }
      break;
    }
  event->accept();
  return true;  // the value stays as it is
}

}  // namespace gllm::gui
