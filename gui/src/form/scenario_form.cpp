// ScenarioForm.
#include "form/scenario_form.hpp"

#include "partsim/input/json_reader.hpp"

#include "form/field_editors.hpp"
#include "scenario_document.hpp"

#include <QCheckBox>
#include <QFormLayout>
#include <QGroupBox>
#include <QLabel>
#include <QSignalBlocker>
#include <QVBoxLayout>

namespace partsim::gui {

namespace {
bool prefixes(const std::string& prefix, const std::string& pointer) {
  return pointer == prefix ||
         (pointer.size() > prefix.size() && pointer.starts_with(prefix) && pointer[prefix.size()] == '/');
}

const char* const kErrorStyle = "color: #b00020;";
} // namespace

ScenarioForm::ScenarioForm(ScenarioDocument* document, const QString& data_dir, QWidget* parent)
    : QWidget(parent), document_(document), catalog_(scenario_catalog(data_dir)) {
  layout_ = new QVBoxLayout(this);
  banner_ = new QLabel(this);
  banner_->setWordWrap(true);
  banner_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  layout_->addWidget(banner_);
  connect(document_, &ScenarioDocument::loaded, this, &ScenarioForm::rebuild);
  connect(document_, &ScenarioDocument::edited, this, [this] {
    if (!refreshing_) refresh_values();
  });
  rebuild();
}

void ScenarioForm::rebuild() {
  if (content_ != nullptr) {
    content_->hide();
    content_->deleteLater();
  }
  rows_.clear();
  sections_.clear();
  content_ = new QWidget(this);
  auto* content_layout = new QVBoxLayout(content_);
  content_layout->setContentsMargins(0, 0, 0, 0);
  for (const SectionSpec& spec : catalog_) {
    Section section;
    section.spec = spec;
    section.box = new QGroupBox(spec.title, content_);
    section.box->setObjectName(QString::fromStdString(spec.pointer));
    auto* form = new QFormLayout(section.box);
    form->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
    section.error = new QLabel(section.box);
    section.error->setStyleSheet(QLatin1String(kErrorStyle));
    section.error->setWordWrap(true);
    section.error->hide();
    form->addRow(section.error);
    sections_.push_back(section);
    for (const FieldSpec& f : spec.fields) add_row(sections_.back(), form, f);
    content_layout->addWidget(section.box);
  }
  // Keys the catalog does not know (new scenario fields): editable as JSON in their section.
  for (Section& section : sections_) {
    if (section.spec.pointer.empty()) continue;
    const nlohmann::json* object = document_->value(section.spec.pointer);
    if (object == nullptr || !object->is_object()) continue;
    for (const auto& [key, value] : object->items()) {
      const std::string pointer = section.spec.pointer + "/" + escape_pointer_token(key);
      if (covered(pointer)) continue;
      FieldSpec f;
      f.pointer = pointer;
      f.label = QString::fromStdString(key);
      f.kind = FieldKind::Json;
      f.optional = true;
      f.default_value = value;
      add_row(section, qobject_cast<QFormLayout*>(section.box->layout()), f);
    }
  }
  for (Section& section : sections_) {
    if (!section.spec.optional) continue;
    section.box->setCheckable(true);
    const std::string pointer = section.spec.pointer;
    const nlohmann::json def = section.spec.default_object;
    connect(section.box, &QGroupBox::toggled, this, [this, pointer, def](bool on) {
      if (refreshing_) return;
      if (on)
        document_->set_value(pointer, document_->value(pointer) != nullptr ? *document_->value(pointer) : def);
      else
        document_->remove_value(pointer);
    });
  }
  content_layout->addStretch(1);
  layout_->addWidget(content_, 1);
  refresh_values();
}

bool ScenarioForm::covered(const std::string& pointer) const {
  for (const SectionSpec& s : catalog_) {
    if (!s.pointer.empty() && prefixes(pointer, s.pointer)) return true;
    for (const FieldSpec& f : s.fields)
      if (prefixes(pointer, f.pointer)) return true;
  }
  return pointer == "/schema_version";
}

void ScenarioForm::add_row(Section& section, QFormLayout* layout, const FieldSpec& spec) {
  Row row;
  row.spec = spec;
  auto* cell = new QWidget(section.box);
  auto* cell_layout = new QVBoxLayout(cell);
  cell_layout->setContentsMargins(0, 0, 0, 0);
  cell_layout->setSpacing(1);
  row.editor = make_field_editor(spec, cell);
  row.layout = layout;
  row.cell = cell;
  row.error = new QLabel(cell);
  row.error->setStyleSheet(QLatin1String(kErrorStyle));
  row.error->setWordWrap(true);
  row.error->hide();
  cell_layout->addWidget(row.editor);
  cell_layout->addWidget(row.error);
  const std::string pointer = spec.pointer;
  if (spec.optional) {
    row.enable = new QCheckBox(spec.label, section.box);
    row.enable->setObjectName(QString::fromStdString(pointer) + QStringLiteral("#enabled"));
    row.enable->setToolTip(tr("Unchecked: %1 is left out and takes its default").arg(QString::fromStdString(pointer)));
    layout->addRow(row.enable, cell);
    FieldEditor* editor = row.editor;
    connect(row.enable, &QCheckBox::toggled, this, [this, pointer, editor](bool on) {
      editor->setEnabled(on);
      if (refreshing_) return;
      if (on)
        document_->set_value(pointer, editor->current_value());
      else
        document_->remove_value(pointer);
    });
  } else {
    auto* label = new QLabel(spec.label, section.box);
    label->setToolTip(QString::fromStdString(pointer));
    layout->addRow(label, cell);
  }
  row.editor->on_edit = [this, pointer](const nlohmann::json& value) { document_->set_value(pointer, value); };
  QLabel* error = row.error;
  row.editor->on_local_error = [error](const QString& message) {
    error->setText(message);
    error->show();
  };
  rows_.push_back(row);
}

void ScenarioForm::refresh_values() {
  refreshing_ = true;
  for (Section& section : sections_) {
    if (!section.spec.optional) continue;
    const bool present = document_->value(section.spec.pointer) != nullptr;
    const QSignalBlocker block(section.box);
    section.box->setChecked(present);
    // QGroupBox disables its children when unchecked; with signals blocked it still does.
  }
  // Fields of other workload kinds are hidden (a data job has no model, a training run no samples).
  const nlohmann::json* kind = document_->value("/workload/kind");
  const QString workload_kind =
      kind != nullptr && kind->is_string() ? QString::fromStdString(kind->get<std::string>()) : QString();
  // Likewise for the strategy: a model-parallel split has no partitions, a data-parallel one no tensor degree.
  const nlohmann::json* strategy = document_->value("/strategy/kind");
  const QString strategy_kind = strategy != nullptr && strategy->is_string()
                                    ? QString::fromStdString(strategy->get<std::string>())
                                    : QStringLiteral("data_parallel");
  for (Row& row : rows_) {
    const nlohmann::json* value = document_->value(row.spec.pointer);
    const bool present = value != nullptr;
    const bool workload_fits = row.spec.workload_kinds.isEmpty() || row.spec.workload_kinds.contains(workload_kind);
    const bool strategy_fits = row.spec.strategy_kinds.isEmpty() || row.spec.strategy_kinds.contains(strategy_kind);
    if (!row.spec.workload_kinds.isEmpty() || !row.spec.strategy_kinds.isEmpty())
      row.layout->setRowVisible(row.cell, (workload_fits && strategy_fits) || present);
    if (value == nullptr || row.editor->current_value() != *value) row.editor->set_value(value);
    if (row.enable != nullptr) {
      row.enable->setChecked(value != nullptr);
      row.editor->setEnabled(value != nullptr);
    }
  }
  refreshing_ = false;
}

FieldEditor* ScenarioForm::editor(const std::string& pointer) const {
  for (const Row& row : rows_)
    if (row.spec.pointer == pointer) return row.editor;
  return nullptr;
}

QCheckBox* ScenarioForm::enable_box(const std::string& pointer) const {
  for (const Row& row : rows_)
    if (row.spec.pointer == pointer) return row.enable;
  return nullptr;
}

QGroupBox* ScenarioForm::section_box(const std::string& pointer) const {
  for (const Section& s : sections_)
    if (s.spec.pointer == pointer) return s.box;
  return nullptr;
}

QString ScenarioForm::error_at(const std::string& pointer) const {
  for (const Row& row : rows_)
    if (row.spec.pointer == pointer) return row.error->isHidden() ? QString() : row.error->text();
  for (const Section& s : sections_)
    if (s.spec.pointer == pointer) return s.error->isHidden() ? QString() : s.error->text();
  return {};
}

QString ScenarioForm::banner_text() const {
  return banner_->text();
}

void ScenarioForm::clear_errors() {
  for (Row& row : rows_) {
    row.error->clear();
    row.error->hide();
  }
  for (Section& s : sections_) {
    s.error->clear();
    s.error->hide();
  }
}

void ScenarioForm::show_error(const ErrorLine& error) {
  clear_errors();
  banner_->setStyleSheet(QLatin1String(kErrorStyle));
  banner_->setText(error.message);
  const std::string pointer = error.pointer.toStdString();
  if (pointer.empty()) return;
  // The text after the pointer: "SOURCE: /pointer: detail" -> "detail".
  const qsizetype at = error.message.indexOf(error.pointer + QStringLiteral(": "));
  const QString detail = at >= 0 ? error.message.mid(at + error.pointer.size() + 2) : error.message;
  Row* best = nullptr;
  for (Row& row : rows_)
    if (prefixes(row.spec.pointer, pointer) && (best == nullptr || row.spec.pointer.size() > best->spec.pointer.size()))
      best = &row;
  if (best != nullptr) {
    best->error->setText(best->spec.pointer == pointer ? detail : QStringLiteral("%1: %2").arg(error.pointer, detail));
    best->error->show();
    return;
  }
  Section* section = nullptr;
  for (Section& s : sections_)
    if (!s.spec.pointer.empty() && prefixes(s.spec.pointer, pointer) &&
        (section == nullptr || s.spec.pointer.size() > section->spec.pointer.size()))
      section = &s;
  if (section == nullptr) {
    // An error at a missing object (/cluster/network): its parent section, if any.
    for (Section& s : sections_)
      if (!s.spec.pointer.empty() && prefixes(s.spec.pointer, pointer.substr(0, pointer.rfind('/')))) section = &s;
  }
  if (section != nullptr) {
    section->error->setText(QStringLiteral("%1: %2").arg(error.pointer, detail));
    section->error->show();
  }
}

void ScenarioForm::show_valid(const Validation& validation) {
  clear_errors();
  banner_->setStyleSheet(QString());
  banner_->setText(tr("ok: %1; %2 events planned").arg(validation.plan_summary).arg(validation.planned_events));
}

} // namespace partsim::gui
