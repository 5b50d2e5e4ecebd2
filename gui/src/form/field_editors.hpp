// Field editors: one widget per scenario field kind (spin boxes with units, combo boxes, sliders, JSON text).
#pragma once

#include "form/field_catalog.hpp"

#include <nlohmann/json.hpp>

#include <QWidget>

#include <functional>

class QComboBox;
class QDoubleSpinBox;
class QLineEdit;
class QSlider;
class QSpinBox;

namespace partsim::gui {

/** Shows one field's value and reports the user's edits as JSON values. set_value never reports an edit. */
class FieldEditor : public QWidget {
  Q_OBJECT
 public:
  explicit FieldEditor(const FieldSpec& spec, QWidget* parent = nullptr);
  const FieldSpec& spec() const { return spec_; }
  /** Shows `value` (nullptr: the field is absent; shows the default). */
  virtual void set_value(const nlohmann::json* value) = 0;
  /** The value shown, as the JSON the scenario would hold. */
  virtual nlohmann::json current_value() const = 0;

  std::function<void(const nlohmann::json&)> on_edit;
  /** A problem found before the scenario parser sees the value (text that is not JSON). */
  std::function<void(const QString&)> on_local_error;

 protected:
  void report_edit();
  bool loading_ = false;

 private:
  FieldSpec spec_;
};

/** Creates the editor a field's kind calls for. */
FieldEditor* make_field_editor(const FieldSpec& spec, QWidget* parent);

class IntegerEditor : public FieldEditor {
  Q_OBJECT
 public:
  explicit IntegerEditor(const FieldSpec& spec, QWidget* parent = nullptr);
  void set_value(const nlohmann::json* value) override;
  nlohmann::json current_value() const override;
  QSpinBox* spin_box() const { return spin_; } ///< null past 2^31: then line_edit()
  QLineEdit* line_edit() const { return line_; }
  QSlider* slider() const { return slider_; }

 private:
  QSpinBox* spin_ = nullptr;
  QLineEdit* line_ = nullptr;
  QSlider* slider_ = nullptr;
};

class NumberEditor : public FieldEditor {
  Q_OBJECT
 public:
  explicit NumberEditor(const FieldSpec& spec, QWidget* parent = nullptr);
  void set_value(const nlohmann::json* value) override;
  nlohmann::json current_value() const override;
  QDoubleSpinBox* spin_box() const { return spin_; }

 private:
  QDoubleSpinBox* spin_ = nullptr;
  QSlider* slider_ = nullptr;
};

/** A number with a unit: `"602kB"`, `"25GBps"`, `"2us"`. Units the editor does not list are kept as typed. */
class QuantityEditor : public FieldEditor {
  Q_OBJECT
 public:
  explicit QuantityEditor(const FieldSpec& spec, QWidget* parent = nullptr);
  void set_value(const nlohmann::json* value) override;
  nlohmann::json current_value() const override;
  QDoubleSpinBox* spin_box() const { return spin_; }
  QComboBox* unit_box() const { return unit_; }

 private:
  QDoubleSpinBox* spin_ = nullptr;
  QComboBox* unit_ = nullptr;
};

class ChoiceEditor : public FieldEditor {
  Q_OBJECT
 public:
  explicit ChoiceEditor(const FieldSpec& spec, QWidget* parent = nullptr);
  void set_value(const nlohmann::json* value) override;
  nlohmann::json current_value() const override;
  QComboBox* combo_box() const { return combo_; }

 private:
  QComboBox* combo_ = nullptr;
};

class TextEditor : public FieldEditor {
  Q_OBJECT
 public:
  explicit TextEditor(const FieldSpec& spec, QWidget* parent = nullptr);
  void set_value(const nlohmann::json* value) override;
  nlohmann::json current_value() const override;
  QLineEdit* line_edit() const { return line_; }

 private:
  QLineEdit* line_ = nullptr;
};

/** Any JSON value as compact text; applied when editing finishes. */
class JsonEditor : public FieldEditor {
  Q_OBJECT
 public:
  explicit JsonEditor(const FieldSpec& spec, QWidget* parent = nullptr);
  void set_value(const nlohmann::json* value) override;
  nlohmann::json current_value() const override;
  QLineEdit* line_edit() const { return line_; }

 private:
  QLineEdit* line_ = nullptr;
};

/** /strategy/shares: "balanced", "by_speed", {"skewed": S, "largest_partition": P} (a slider for S) or [s0, ...]. */
class SharesEditor : public FieldEditor {
  Q_OBJECT
 public:
  explicit SharesEditor(const FieldSpec& spec, QWidget* parent = nullptr);
  void set_value(const nlohmann::json* value) override;
  nlohmann::json current_value() const override;
  QComboBox* mode_box() const { return mode_; }
  QDoubleSpinBox* skew_box() const { return skew_; }
  QSlider* skew_slider() const { return slider_; }

 private:
  void update_visibility();
  QComboBox* mode_ = nullptr;
  QDoubleSpinBox* skew_ = nullptr;
  QSlider* slider_ = nullptr;
  QSpinBox* largest_ = nullptr;
  QLineEdit* explicit_ = nullptr;
  QWidget* skew_row_ = nullptr;
};

} // namespace partsim::gui
