// ScenarioForm: the scenario as a form grouped by cluster / workload / strategy / run, errors shown at the field.
#pragma once

#include "form/field_catalog.hpp"
#include "run/validator.hpp"

#include <QWidget>

#include <string>
#include <vector>

class QCheckBox;
class QFormLayout;
class QGroupBox;
class QLabel;
class QVBoxLayout;

namespace partsim::gui {

class FieldEditor;
class ScenarioDocument;

class ScenarioForm : public QWidget {
  Q_OBJECT
 public:
  ScenarioForm(ScenarioDocument* document, const QString& data_dir, QWidget* parent = nullptr);

  /** The editor of a field, or null. */
  FieldEditor* editor(const std::string& pointer) const;
  /** The check box that adds or removes an optional field or section, or null. */
  QCheckBox* enable_box(const std::string& pointer) const;
  QGroupBox* section_box(const std::string& pointer) const;
  /** The error shown at a field (or at a section), empty when none. */
  QString error_at(const std::string& pointer) const;
  /** The line above the form: the whole error message, or the plan when the scenario is valid. */
  QString banner_text() const;

  /** Marks the field an error names (the deepest field whose pointer prefixes the error's), or the section. */
  void show_error(const ErrorLine& error);
  void show_valid(const Validation& validation);
  void clear_errors();

 private:
  struct Row {
    FieldSpec spec;
    FieldEditor* editor = nullptr;
    QCheckBox* enable = nullptr;
    QLabel* error = nullptr;
    QFormLayout* layout = nullptr;
    QWidget* cell = nullptr;
  };
  struct Section {
    SectionSpec spec;
    QGroupBox* box = nullptr;
    QLabel* error = nullptr;
  };
  void rebuild();
  void refresh_values();
  void add_row(Section& section, QFormLayout* layout, const FieldSpec& spec);
  bool covered(const std::string& pointer) const;

  ScenarioDocument* document_;
  std::vector<SectionSpec> catalog_;
  std::vector<Row> rows_;
  std::vector<Section> sections_;
  QLabel* banner_ = nullptr;
  QWidget* content_ = nullptr;
  QVBoxLayout* layout_ = nullptr;
  bool refreshing_ = false;
};

} // namespace partsim::gui
