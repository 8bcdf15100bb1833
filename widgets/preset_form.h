// PresetForm: an editor for a whole RunConfig generated from run_config_fields(). Every key gets
// a widget by kind (check box, choice, number, list, text) and an inline message for refusals.
#pragma once
#include <QMap>
#include <QWidget>
#include <functional>

#include "engine/config/run_config.h"

class QLabel;
class QLineEdit;
class QComboBox;
class QCheckBox;
class QVBoxLayout;

namespace gllm::gui {

class PresetForm : public QWidget {
  Q_OBJECT
 public:
  // `sectionFilter` limits the form to keys below these top-level sections ("grading"); empty =
  // all.
  explicit PresetForm(QWidget* parent = nullptr, QStringList sectionFilter = {});

  void setConfig(const RunConfig& config);
  const RunConfig& config() const { return m_config; }

  // Drives one field as a user would: writes `text` into the field's editor (or picks the choice,
  // or toggles the box for "true"/"false") and commits it. Returns true when the value was
  // accepted.
  bool editField(const QString& path, const QString& text);
  // The refusal currently shown at a field ("" when the field is valid).
  QString fieldError(const QString& path) const;
  // The text the field shows now.
  QString fieldText(const QString& path) const;
  QStringList fieldPaths() const { return m_fields.keys(); }
  // Commits every text field whose text differs from the value it shows (typed but not yet left),
  // then lists the fields that show a refusal as "path: message" (empty when all are valid).
  QStringList invalidFields();
  QWidget* fieldEditor(const QString& path) const;

 Q_SIGNALS:
  void configChanged();
  // A value was refused: the key path named by the engine and its message.
  void valueRefused(const QString& path, const QString& message);

 private:
  struct Field {
    FieldInfo info;
    QWidget* editor = nullptr;
    QLabel* error = nullptr;
  };
  void build(const QStringList& sectionFilter);
  bool commit(const QString& path);
  void refreshEditors();
  void setError(const QString& path, const QString& message);
  nlohmann::json parseEditor(const Field& f, bool* ok, QString* why) const;
  QString displayValue(const FieldInfo& info) const;

  RunConfig m_config;
  QMap<QString, Field> m_fields;
  bool m_refreshing = false;
};

}  // namespace gllm::gui
