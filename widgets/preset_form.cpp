// PresetForm implementation: widgets are generated from the schema's field list; a commit goes
// through set_config_value, so the engine's own validation decides and its message is shown.
#include "widgets/preset_form.h"

#include <QCheckBox>
#include <QComboBox>
#include <QFormLayout>
#include <QGroupBox>
#include <QLabel>
#include <QLineEdit>
#include <QScrollArea>
#include <QStyle>
#include <QVBoxLayout>

#include "widgets/widget_util.h"

namespace gllm::gui {

namespace {
QString prettyKey(const std::string& path) {
  QString key = qs(path.substr(path.rfind('.') == std::string::npos ? 0 : path.rfind('.') + 1));
  key.replace('_', ' ');
  return key;
}
QString rangeText(const FieldInfo& f) {
  auto num = [](double v) {
    return std::fabs(v) >= 1e6 ? QString::number(v, 'g', 3) : QString::number(v, 'g', 8);
  };
  const bool lo = std::isfinite(f.min), hi = std::isfinite(f.max);
  if (lo && hi) return QStringLiteral("range [%1, %2]").arg(num(f.min), num(f.max));
  if (lo) return QStringLiteral("≥ %1").arg(num(f.min));
  if (hi) return QStringLiteral("≤ %1").arg(num(f.max));
  return {};
}
}  // namespace

PresetForm::PresetForm(QWidget* parent, QStringList sectionFilter) : QWidget(parent) {
  build(sectionFilter);
  refreshEditors();
}

void PresetForm::build(const QStringList& sectionFilter) {
  auto* outer = new QVBoxLayout(this);
  outer->setContentsMargins(0, 0, 0, 0);
  auto* scroll = new QScrollArea(this);
  scroll->setWidgetResizable(true);
  scroll->setFrameShape(QFrame::NoFrame);
  auto* inner = new QWidget(scroll);
  auto* layout = new QVBoxLayout(inner);
  layout->setContentsMargins(6, 6, 6, 6);
  layout->setSpacing(8);
  scroll->setWidget(inner);
  outer->addWidget(scroll);

  QMap<QString, QFormLayout*> sections;
  for (const FieldInfo& info : run_config_fields()) {
    if (info.kind == FieldKind::Section) continue;
    const QString path = qs(info.path);
    const QString section = path.contains('.') ? path.section('.', 0, 0) : QStringLiteral("run");
    if (!sectionFilter.isEmpty() && !sectionFilter.contains(section)) continue;
    QFormLayout* form = sections.value(section, nullptr);
    if (!form) {
      auto* box = new QGroupBox(section.left(1).toUpper() + section.mid(1), inner);
      box->setObjectName(QStringLiteral("formSection_") + section);
      form = new QFormLayout(box);
      form->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
      form->setLabelAlignment(Qt::AlignRight | Qt::AlignVCenter);
      form->setHorizontalSpacing(10);
      form->setVerticalSpacing(3);
      layout->addWidget(box);
      sections.insert(section, form);
    }
    Field f;
    f.info = info;
    QString tip = qs(info.help);
    const QString range = rangeText(info);
    if (!range.isEmpty() && info.kind != FieldKind::Bool && info.kind != FieldKind::Choice)
      tip += QStringLiteral(" (") + range + ')';
    tip = QStringLiteral("<b>%1</b><br>%2").arg(path.toHtmlEscaped(), tip.toHtmlEscaped());
    switch (info.kind) {
      case FieldKind::Bool: {
        auto* cb = new QCheckBox(inner);
        connect(cb, &QCheckBox::toggled, this, [this, path] {
          if (!m_refreshing) commit(path);
        });
        f.editor = cb;
        break;
      }
      case FieldKind::Choice: {
        auto* combo = new QComboBox(inner);
        for (const auto& c : info.choices)
          combo->addItem(c.empty() ? QStringLiteral("(none)") : qs(c), qs(c));
        connect(combo, qOverload<int>(&QComboBox::activated), this, [this, path] { commit(path); });
        f.editor = combo;
        break;
      }
      default: {
        auto* edit = new QLineEdit(inner);
        if (info.kind == FieldKind::IntList || info.kind == FieldKind::RealList)
          edit->setPlaceholderText(QStringLiteral("comma-separated; empty = default"));
        else if (!range.isEmpty())
          edit->setPlaceholderText(range);
        connect(edit, &QLineEdit::editingFinished, this, [this, path] { commit(path); });
        f.editor = edit;
        break;
      }
    }
    f.editor->setObjectName(QStringLiteral("field_") + path);
    f.editor->setToolTip(tip);
    f.error = new QLabel(inner);
    f.error->setObjectName(QStringLiteral("fieldError"));
    f.error->setWordWrap(true);
    f.error->setVisible(false);
    auto* cell = new QWidget(inner);
    auto* v = new QVBoxLayout(cell);
    v->setContentsMargins(0, 0, 0, 0);
    v->setSpacing(1);
    v->addWidget(f.editor);
    v->addWidget(f.error);
    auto* label = new QLabel(prettyKey(info.path), inner);
    label->setToolTip(tip);
    form->addRow(label, cell);
    m_fields.insert(path, f);
  }
  layout->addStretch(1);
}

QString PresetForm::displayValue(const FieldInfo& info) const {
  nlohmann::json v;
  try {
    v = get_config_value(m_config, info.path);
  } catch (const Error&) {
    return {};
  }
  if (v.is_string()) return qs(v.get<std::string>());
  if (v.is_array()) {
    QStringList parts;
    for (const auto& e : v)
      parts << (e.is_number_integer() ? QString::number(e.get<long long>())
                                      : QString::number(e.get<double>(), 'g', 10));
    return parts.join(QStringLiteral(", "));
  }
  if (v.is_number_integer()) return QString::number(v.get<long long>());
  if (v.is_number()) return QString::number(v.get<double>(), 'g', 10);
  if (v.is_boolean()) return v.get<bool>() ? QStringLiteral("true") : QStringLiteral("false");
  return qs(v.dump());
}

void PresetForm::refreshEditors() {
  m_refreshing = true;
  for (auto it = m_fields.begin(); it != m_fields.end(); ++it) {
    const Field& f = it.value();
    const QString text = displayValue(f.info);
    if (auto* cb = qobject_cast<QCheckBox*>(f.editor)) {
      cb->setChecked(text == QLatin1String("true"));
    } else if (auto* combo = qobject_cast<QComboBox*>(f.editor)) {
      int i = combo->findData(text);
      combo->setCurrentIndex(i < 0 ? 0 : i);
    } else if (auto* edit = qobject_cast<QLineEdit*>(f.editor)) {
      if (!edit->hasFocus() || f.error->isHidden()) edit->setText(text);
    }
  }
  m_refreshing = false;
}

void PresetForm::setConfig(const RunConfig& config) {
  m_config = config;
  for (auto it = m_fields.begin(); it != m_fields.end(); ++it) setError(it.key(), {});
  refreshEditors();
  Q_EMIT configChanged();
}

nlohmann::json PresetForm::parseEditor(const Field& f, bool* ok, QString* why) const {
  *ok = true;
  if (auto* cb = qobject_cast<QCheckBox*>(f.editor)) return cb->isChecked();
  if (auto* combo = qobject_cast<QComboBox*>(f.editor)) return ss(combo->currentData().toString());
  auto* edit = qobject_cast<QLineEdit*>(f.editor);
  const QString text = edit->text().trimmed();
  switch (f.info.kind) {
    case FieldKind::Int: {
      bool good = false;
      const qlonglong v = text.toLongLong(&good);
      if (!good) {
        // Let the engine refuse non-integers with its own message (e.g. "expected an integer").
        bool isReal = false;
        const double d = text.toDouble(&isReal);
        if (isReal) return d;
        *ok = false;
        *why = text.isEmpty()
                   ? QStringLiteral("needs a whole number") +
                         (rangeText(f.info).isEmpty() ? QString() : " in " + rangeText(f.info))
                   : QStringLiteral("'%1' is not a whole number; %2").arg(text, rangeText(f.info));
        return {};
      }
      return static_cast<long long>(v);
    }
    case FieldKind::Real: {
      bool good = false;
      const double v = text.toDouble(&good);
      if (!good) {
        *ok = false;
        *why = QStringLiteral("'%1' is not a number; %2").arg(text, rangeText(f.info));
        return {};
      }
      return v;
    }
    case FieldKind::IntList:
    case FieldKind::RealList: {
      std::vector<double> values;
      if (!parseNumberList(text, &values, why)) {
        *ok = false;
        return {};
      }
      nlohmann::json arr = nlohmann::json::array();
      for (double v : values) {
        if (f.info.kind == FieldKind::IntList && v == std::floor(v))
          arr.push_back(static_cast<long long>(v));
        else
          arr.push_back(v);
      }
      return arr;
    }
    default:
      return ss(text);
  }
}

bool PresetForm::commit(const QString& path) {
  auto it = m_fields.find(path);
  if (it == m_fields.end()) return false;
  bool ok = false;
  QString why;
  const nlohmann::json value = parseEditor(it.value(), &ok, &why);
  if (!ok) {
    setError(path, why);
    Q_EMIT valueRefused(path, why);
    return false;
  }
  RunConfig next = m_config;
  try {
    set_config_value(next, ss(path), value);
  } catch (const ConfigError& e) {
    const QString where = qs(e.key_path);
    QString message = qs(e.what());
    // The engine prefixes its key path; show the reason at the field the user edited, and
    // also at the field the engine blamed when a cross-field rule refused the value.
    if (message.startsWith(where + QStringLiteral(": "))) message = message.mid(where.size() + 2);
    setError(path,
             where == path || where.isEmpty() ? message : where + QStringLiteral(": ") + message);
    if (!where.isEmpty() && where != path && m_fields.contains(where)) setError(where, message);
    Q_EMIT valueRefused(where.isEmpty() ? path : where, message);
    return false;
  } catch (const Error& e) {
    setError(path, qs(e.what()));
    Q_EMIT valueRefused(path, qs(e.what()));
    return false;
  }
  m_config = next;
  for (auto f = m_fields.begin(); f != m_fields.end(); ++f) setError(f.key(), {});
  refreshEditors();
  Q_EMIT configChanged();
  return true;
}

void PresetForm::setError(const QString& path, const QString& message) {
  auto it = m_fields.find(path);
  if (it == m_fields.end()) return;
  it->error->setText(message);
  it->error->setVisible(!message.isEmpty());
  it->editor->setProperty("invalid", !message.isEmpty());
  it->editor->style()->unpolish(it->editor);
  it->editor->style()->polish(it->editor);
}

bool PresetForm::editField(const QString& path, const QString& text) {
  auto it = m_fields.find(path);
  if (it == m_fields.end()) return false;
  QWidget* editor = it->editor;
  if (auto* cb = qobject_cast<QCheckBox*>(editor)) {
    m_refreshing = true;
    cb->setChecked(text == QLatin1String("true") || text == QLatin1String("1"));
    m_refreshing = false;
  } else if (auto* combo = qobject_cast<QComboBox*>(editor)) {
    int i = combo->findData(text);
    if (i < 0) {
      const QString why = QStringLiteral("'%1' is not one of the choices").arg(text);
      setError(path, why);
      Q_EMIT valueRefused(path, why);
      return false;
    }
    combo->setCurrentIndex(i);
  } else if (auto* edit = qobject_cast<QLineEdit*>(editor)) {
    edit->setText(text);
  }
  return commit(path);
}

QString PresetForm::fieldError(const QString& path) const {
  auto it = m_fields.find(path);
  return it == m_fields.end() || it->error->isHidden() ? QString() : it->error->text();
}

QStringList PresetForm::invalidFields() {
  auto shown = [this] {
    QStringList out;
    for (auto it = m_fields.begin(); it != m_fields.end(); ++it)
      if (!it->error->isHidden()) out << it.key() + QStringLiteral(": ") + it->error->text();
    return out;
  };
  // A refusal already shown stays as it is (an accepted commit would clear it and put the old
  // value back in the field behind the user's back).
  if (const QStringList bad = shown(); !bad.isEmpty()) return bad;
  for (auto it = m_fields.begin(); it != m_fields.end(); ++it)
    if (auto* edit = qobject_cast<QLineEdit*>(it->editor);
        edit && edit->text() != displayValue(it->info) && !commit(it.key()))
      break;
  return shown();
}

QString PresetForm::fieldText(const QString& path) const {
  auto it = m_fields.find(path);
  if (it == m_fields.end()) return {};
  if (auto* cb = qobject_cast<QCheckBox*>(it->editor)) return cb->isChecked() ? "true" : "false";
  if (auto* combo = qobject_cast<QComboBox*>(it->editor)) return combo->currentData().toString();
  if (auto* edit = qobject_cast<QLineEdit*>(it->editor)) return edit->text();
  return {};
}

QWidget* PresetForm::fieldEditor(const QString& path) const {
  auto it = m_fields.find(path);
  return it == m_fields.end() ? nullptr : it->editor;
}

}  // namespace gllm::gui
