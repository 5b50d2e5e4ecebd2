// Field editors.
#include "form/field_editors.hpp"

#include <QComboBox>
#include <QDoubleSpinBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QRegularExpression>
#include <QRegularExpressionValidator>
#include <QSignalBlocker>
#include <QSlider>
#include <QSpinBox>

#include <climits>
#include <cmath>

namespace partsim::gui {

namespace {
QHBoxLayout* row_layout(QWidget* w) {
  auto* l = new QHBoxLayout(w);
  l->setContentsMargins(0, 0, 0, 0);
  return l;
}

/** RAII: set_value must not report edits. */
class Loading {
 public:
  explicit Loading(bool& flag) : flag_(flag) { flag_ = true; }
  ~Loading() { flag_ = false; }
  Loading(const Loading&) = delete;
  Loading& operator=(const Loading&) = delete;

 private:
  bool& flag_;
};
} // namespace

FieldEditor::FieldEditor(const FieldSpec& spec, QWidget* parent) : QWidget(parent), spec_(spec) {
  setObjectName(QString::fromStdString(spec.pointer));
  if (!spec.tooltip.isEmpty()) setToolTip(spec.tooltip);
}

void FieldEditor::report_edit() {
  if (loading_ || !on_edit) return;
  on_edit(current_value());
}

FieldEditor* make_field_editor(const FieldSpec& spec, QWidget* parent) {
  switch (spec.kind) {
  case FieldKind::Integer:
    return new IntegerEditor(spec, parent);
  case FieldKind::Number:
    return new NumberEditor(spec, parent);
  case FieldKind::Quantity:
    return new QuantityEditor(spec, parent);
  case FieldKind::Choice:
    return new ChoiceEditor(spec, parent);
  case FieldKind::Text:
    return new TextEditor(spec, parent);
  case FieldKind::Json:
    return new JsonEditor(spec, parent);
  case FieldKind::Shares:
    return new SharesEditor(spec, parent);
  }
  return new JsonEditor(spec, parent);
}

// ---------------------------------------------------------------------------------------------------------------

IntegerEditor::IntegerEditor(const FieldSpec& spec, QWidget* parent) : FieldEditor(spec, parent) {
  auto* layout = row_layout(this);
  if (spec.max <= INT_MAX) {
    spin_ = new QSpinBox(this);
    spin_->setRange(static_cast<int>(spec.min), static_cast<int>(spec.max));
    spin_->setAccelerated(true);
    layout->addWidget(spin_, 1);
    connect(spin_, &QSpinBox::valueChanged, this, [this](int v) {
      if (slider_ != nullptr) {
        const QSignalBlocker block(slider_);
        slider_->setValue(std::min(v, slider_->maximum()));
      }
      report_edit();
    });
    if (spec.slider_max > 0) {
      slider_ = new QSlider(Qt::Horizontal, this);
      slider_->setRange(static_cast<int>(spec.min), spec.slider_max);
      layout->addWidget(slider_, 2);
      connect(slider_, &QSlider::valueChanged, spin_, &QSpinBox::setValue);
    }
  } else {
    line_ = new QLineEdit(this);
    line_->setValidator(new QRegularExpressionValidator(QRegularExpression(QStringLiteral("[0-9]{1,19}")), line_));
    layout->addWidget(line_, 1);
    connect(line_, &QLineEdit::textEdited, this, [this] { report_edit(); });
  }
}

void IntegerEditor::set_value(const nlohmann::json* value) {
  Loading loading(loading_);
  const nlohmann::json v = value != nullptr && value->is_number() ? *value : spec().default_value;
  if (spin_ != nullptr) {
    spin_->setValue(v.is_number() ? static_cast<int>(v.get<double>()) : static_cast<int>(spec().min));
    if (slider_ != nullptr) slider_->setValue(std::min(spin_->value(), slider_->maximum()));
  } else {
    line_->setText(v.is_number_integer() ? QString::number(v.get<std::int64_t>())
                   : v.is_number()       ? QString::number(v.get<double>(), 'f', 0)
                                         : QString());
  }
}

nlohmann::json IntegerEditor::current_value() const {
  if (spin_ != nullptr) return spin_->value();
  bool ok = false;
  const qulonglong v = line_->text().toULongLong(&ok);
  return ok ? nlohmann::json(static_cast<std::uint64_t>(v)) : nlohmann::json(line_->text().toStdString());
}

// ---------------------------------------------------------------------------------------------------------------

NumberEditor::NumberEditor(const FieldSpec& spec, QWidget* parent) : FieldEditor(spec, parent) {
  auto* layout = row_layout(this);
  spin_ = new QDoubleSpinBox(this);
  spin_->setDecimals(6);
  spin_->setRange(spec.min, spec.max);
  spin_->setSingleStep((spec.max - spec.min) / 100.0);
  layout->addWidget(spin_, 1);
  if (spec.slider_max > 0) {
    slider_ = new QSlider(Qt::Horizontal, this);
    slider_->setRange(0, spec.slider_max);
    layout->addWidget(slider_, 2);
    connect(slider_, &QSlider::valueChanged, this, [this](int s) {
      const FieldSpec& f = this->spec();
      spin_->setValue(f.min + (f.max - f.min) * s / slider_->maximum());
    });
  }
  connect(spin_, &QDoubleSpinBox::valueChanged, this, [this](double v) {
    if (slider_ != nullptr) {
      const QSignalBlocker block(slider_);
      const FieldSpec& f = this->spec();
      slider_->setValue(static_cast<int>(std::lround((v - f.min) / (f.max - f.min) * slider_->maximum())));
    }
    report_edit();
  });
}

void NumberEditor::set_value(const nlohmann::json* value) {
  Loading loading(loading_);
  const nlohmann::json v = value != nullptr && value->is_number() ? *value : spec().default_value;
  spin_->setValue(v.is_number() ? v.get<double>() : spec().min);
}

nlohmann::json NumberEditor::current_value() const {
  return spin_->value();
}

// ---------------------------------------------------------------------------------------------------------------

QuantityEditor::QuantityEditor(const FieldSpec& spec, QWidget* parent) : FieldEditor(spec, parent) {
  auto* layout = row_layout(this);
  spin_ = new QDoubleSpinBox(this);
  spin_->setDecimals(4);
  spin_->setRange(0, 1e12);
  spin_->setKeyboardTracking(true);
  unit_ = new QComboBox(this);
  unit_->addItems(units_of(spec.dimension));
  layout->addWidget(spin_, 2);
  layout->addWidget(unit_, 1);
  connect(spin_, &QDoubleSpinBox::valueChanged, this, [this] { report_edit(); });
  connect(unit_, &QComboBox::currentIndexChanged, this, [this] { report_edit(); });
}

void QuantityEditor::set_value(const nlohmann::json* value) {
  Loading loading(loading_);
  const nlohmann::json v = value != nullptr ? *value : spec().default_value;
  double number = 0;
  QString unit = unit_->itemText(0);
  if (v.is_number()) {
    number = v.get<double>();
  } else if (v.is_string()) {
    static const QRegularExpression pattern(QStringLiteral(R"(^\s*([-+0-9.eE]+)\s*(\S*)\s*$)"));
    const QRegularExpressionMatch m = pattern.match(QString::fromStdString(v.get<std::string>()));
    if (m.hasMatch()) {
      number = m.captured(1).toDouble();
      if (!m.captured(2).isEmpty()) unit = m.captured(2);
    }
  }
  if (unit_->findText(unit) < 0) unit_->addItem(unit); // a unit spelled differently (GB/s, µs): keep it
  unit_->setCurrentText(unit);
  spin_->setValue(number);
}

nlohmann::json QuantityEditor::current_value() const {
  return (QString::number(spin_->value(), 'g', 10) + unit_->currentText()).toStdString();
}

// ---------------------------------------------------------------------------------------------------------------

ChoiceEditor::ChoiceEditor(const FieldSpec& spec, QWidget* parent) : FieldEditor(spec, parent) {
  auto* layout = row_layout(this);
  combo_ = new QComboBox(this);
  for (const QString& c : spec.choices)
    combo_->addItem(c, QString::fromStdString(nlohmann::json(c.toStdString()).dump()));
  layout->addWidget(combo_, 1);
  connect(combo_, &QComboBox::currentIndexChanged, this, [this] { report_edit(); });
}

void ChoiceEditor::set_value(const nlohmann::json* value) {
  Loading loading(loading_);
  const nlohmann::json v = value != nullptr ? *value : spec().default_value;
  const QString data = QString::fromStdString(v.dump());
  int index = combo_->findData(data);
  if (index < 0) {
    // A value the catalog does not list (an inline GPU profile, a profile with replaced figures, a new profile):
    // keep it as an extra entry.
    const QString shown = v.is_string() ? QString::fromStdString(v.get<std::string>())
                          : v.is_object() && v.contains("base") && v["base"].is_string()
                              ? tr("%1, figures replaced").arg(QString::fromStdString(v["base"].get<std::string>()))
                          : v.is_object() && v.contains("name") && v["name"].is_string()
                              ? tr("inline: %1").arg(QString::fromStdString(v["name"].get<std::string>()))
                              : QString::fromStdString(v.dump()).left(48);
    combo_->addItem(shown, data);
    index = combo_->count() - 1;
  }
  combo_->setCurrentIndex(index);
}

nlohmann::json ChoiceEditor::current_value() const {
  const QByteArray text = combo_->currentData().toString().toUtf8();
  const nlohmann::json v = nlohmann::json::parse(text.constData(), text.constData() + text.size(), nullptr, false);
  return v.is_discarded() ? nlohmann::json(combo_->currentText().toStdString()) : v;
}

// ---------------------------------------------------------------------------------------------------------------

TextEditor::TextEditor(const FieldSpec& spec, QWidget* parent) : FieldEditor(spec, parent) {
  auto* layout = row_layout(this);
  line_ = new QLineEdit(this);
  layout->addWidget(line_, 1);
  connect(line_, &QLineEdit::textEdited, this, [this] { report_edit(); });
}

void TextEditor::set_value(const nlohmann::json* value) {
  Loading loading(loading_);
  const nlohmann::json v = value != nullptr ? *value : spec().default_value;
  line_->setText(v.is_string() ? QString::fromStdString(v.get<std::string>()) : QString::fromStdString(v.dump()));
}

nlohmann::json TextEditor::current_value() const {
  return line_->text().toStdString();
}

// ---------------------------------------------------------------------------------------------------------------

JsonEditor::JsonEditor(const FieldSpec& spec, QWidget* parent) : FieldEditor(spec, parent) {
  auto* layout = row_layout(this);
  line_ = new QLineEdit(this);
  line_->setPlaceholderText(spec.tooltip);
  layout->addWidget(line_, 1);
  connect(line_, &QLineEdit::editingFinished, this, [this] {
    const QByteArray text = line_->text().toUtf8();
    const nlohmann::json v = nlohmann::json::parse(text.constData(), text.constData() + text.size(), nullptr, false);
    if (v.is_discarded()) {
      if (on_local_error) on_local_error(tr("not valid JSON: %1").arg(line_->text()));
      return;
    }
    report_edit();
  });
}

void JsonEditor::set_value(const nlohmann::json* value) {
  Loading loading(loading_);
  const nlohmann::json v = value != nullptr ? *value : spec().default_value;
  line_->setText(QString::fromStdString(v.dump()));
  line_->setCursorPosition(0);
}

nlohmann::json JsonEditor::current_value() const {
  const QByteArray text = line_->text().toUtf8();
  const nlohmann::json v = nlohmann::json::parse(text.constData(), text.constData() + text.size(), nullptr, false);
  return v.is_discarded() ? spec().default_value : v;
}

// ---------------------------------------------------------------------------------------------------------------

SharesEditor::SharesEditor(const FieldSpec& spec, QWidget* parent) : FieldEditor(spec, parent) {
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  mode_ = new QComboBox(this);
  mode_->addItem(tr("balanced"), QStringLiteral("balanced"));
  mode_->addItem(tr("by node speed"), QStringLiteral("by_speed"));
  mode_->addItem(tr("skewed"), QStringLiteral("skewed"));
  mode_->addItem(tr("explicit list"), QStringLiteral("explicit"));
  layout->addWidget(mode_);
  skew_row_ = new QWidget(this);
  auto* skew_layout = row_layout(skew_row_);
  skew_ = new QDoubleSpinBox(skew_row_);
  skew_->setRange(0, 1);
  skew_->setDecimals(3);
  skew_->setSingleStep(0.05);
  skew_->setToolTip(tr("share of the largest partition"));
  slider_ = new QSlider(Qt::Horizontal, skew_row_);
  slider_->setRange(0, 1000);
  largest_ = new QSpinBox(skew_row_);
  largest_->setRange(0, 10000000);
  largest_->setPrefix(tr("partition "));
  largest_->setToolTip(tr("which partition is the large one"));
  skew_layout->addWidget(skew_, 1);
  skew_layout->addWidget(slider_, 2);
  skew_layout->addWidget(largest_, 1);
  layout->addWidget(skew_row_);
  explicit_ = new QLineEdit(this);
  explicit_->setPlaceholderText(QStringLiteral("[0.4, 0.2, 0.2, 0.2]"));
  layout->addWidget(explicit_);
  connect(mode_, &QComboBox::currentIndexChanged, this, [this] {
    update_visibility();
    report_edit();
  });
  connect(slider_, &QSlider::valueChanged, this, [this](int v) { skew_->setValue(v / 1000.0); });
  connect(skew_, &QDoubleSpinBox::valueChanged, this, [this](double v) {
    const QSignalBlocker block(slider_);
    slider_->setValue(static_cast<int>(std::lround(v * 1000)));
    report_edit();
  });
  connect(largest_, &QSpinBox::valueChanged, this, [this] { report_edit(); });
  connect(explicit_, &QLineEdit::editingFinished, this, [this] {
    const QByteArray text = explicit_->text().toUtf8();
    const nlohmann::json v = nlohmann::json::parse(text.constData(), text.constData() + text.size(), nullptr, false);
    if (v.is_discarded()) {
      if (on_local_error) on_local_error(tr("not valid JSON: %1").arg(explicit_->text()));
      return;
    }
    report_edit();
  });
  update_visibility();
}

void SharesEditor::update_visibility() {
  const QString mode = mode_->currentData().toString();
  skew_row_->setVisible(mode == QLatin1String("skewed"));
  explicit_->setVisible(mode == QLatin1String("explicit"));
}

void SharesEditor::set_value(const nlohmann::json* value) {
  Loading loading(loading_);
  const nlohmann::json v = value != nullptr ? *value : spec().default_value;
  QString mode = QStringLiteral("balanced");
  if (v.is_string()) {
    mode = QString::fromStdString(v.get<std::string>());
  } else if (v.is_object()) {
    mode = QStringLiteral("skewed");
    if (v.contains("skewed") && v["skewed"].is_number()) skew_->setValue(v["skewed"].get<double>());
    largest_->setValue(v.contains("largest_partition") && v["largest_partition"].is_number_integer()
                           ? v["largest_partition"].get<int>()
                           : 0);
  } else if (v.is_array()) {
    mode = QStringLiteral("explicit");
    explicit_->setText(QString::fromStdString(v.dump()));
  }
  const int index = mode_->findData(mode);
  mode_->setCurrentIndex(index < 0 ? 0 : index);
  slider_->setValue(static_cast<int>(std::lround(skew_->value() * 1000)));
  update_visibility();
}

nlohmann::json SharesEditor::current_value() const {
  const QString mode = mode_->currentData().toString();
  if (mode == QLatin1String("skewed")) {
    nlohmann::json v = {{"skewed", skew_->value()}};
    if (largest_->value() != 0) v["largest_partition"] = largest_->value();
    return v;
  }
  if (mode == QLatin1String("explicit")) {
    const QByteArray text = explicit_->text().toUtf8();
    const nlohmann::json v = nlohmann::json::parse(text.constData(), text.constData() + text.size(), nullptr, false);
    return v.is_discarded() ? nlohmann::json::array() : v;
  }
  return mode.toStdString();
}

} // namespace partsim::gui
