// ScenarioDocument: loading, editing and diffing the scenario JSON.
#include "scenario_document.hpp"

#include "partsim/common/error.hpp"
#include "partsim/input/json_file.hpp"
#include "partsim/input/json_reader.hpp"
#include "partsim/input/scenario.hpp"

#include <QFile>
#include <QFileInfo>

namespace partsim::gui {

namespace {
void diff_into(const nlohmann::json& a, const nlohmann::json& b, const std::string& pointer,
               std::vector<FieldOverride>& out) {
  if (a == b) return;
  const bool root = pointer.empty();
  if (a.is_object() && b.is_object()) {
    bool removed = false;
    for (const auto& [key, value] : a.items()) removed = removed || !b.contains(key);
    if (removed && !root) {
      out.push_back({pointer, b});
      return;
    }
    for (const auto& [key, value] : b.items()) {
      const std::string child = pointer + "/" + escape_pointer_token(key);
      if (!a.contains(key))
        out.push_back({child, value});
      else
        diff_into(a.at(key), value, child, out);
    }
    return;
  }
  if (!root) out.push_back({pointer, b});
}
} // namespace

std::vector<FieldOverride> diff_overrides(const nlohmann::json& original, const nlohmann::json& edited) {
  std::vector<FieldOverride> out;
  diff_into(original, edited, "", out);
  return out;
}

ScenarioDocument::ScenarioDocument(QObject* parent) : QObject(parent) {
  load_default();
}

QString ScenarioDocument::load_file(const QString& path) {
  // The core's reader: bounded (a device such as /dev/zero is refused), strict (nesting, duplicate keys).
  try {
    const std::string text = partsim::read_text_file(path.toStdString(), partsim::kMaxJsonFileBytes, "a JSON file");
    return load_text(QByteArray::fromStdString(text), path);
  } catch (const partsim::InputError& e) {
    return QString::fromStdString(e.what());
  }
}

void ScenarioDocument::load_default() {
  load_text(QByteArray::fromStdString(partsim::default_scenario_text()), QString());
}

QString ScenarioDocument::load_text(const QByteArray& text, const QString& path) {
  const QString source = path.isEmpty() ? QStringLiteral("<built-in default>") : path;
  nlohmann::json doc;
  try {
    doc = partsim::parse_json_text(text.toStdString(), source.toStdString());
  } catch (const partsim::InputError& e) {
    return QString::fromStdString(e.what());
  }
  if (!doc.is_object()) return source + ": /: expected a JSON object at the top level";
  path_ = path;
  original_ = doc;
  edited_ = std::move(doc);
  emit loaded();
  return {};
}

std::string ScenarioDocument::source() const {
  return path_.isEmpty() ? std::string("<built-in default>") : path_.toStdString();
}

QString ScenarioDocument::title() const {
  return path_.isEmpty() ? QStringLiteral("built-in default") : QFileInfo(path_).fileName();
}

const nlohmann::json* ScenarioDocument::value(const std::string& pointer) const {
  const nlohmann::json::json_pointer ptr(pointer);
  if (!edited_.contains(ptr)) return nullptr;
  return &edited_.at(ptr);
}

void ScenarioDocument::set_value(const std::string& pointer, const nlohmann::json& value) {
  const nlohmann::json::json_pointer ptr(pointer);
  if (edited_.contains(ptr) && edited_.at(ptr) == value) return;
  edited_[ptr] = value;
  emit edited(QString::fromStdString(pointer));
}

void ScenarioDocument::remove_value(const std::string& pointer) {
  const nlohmann::json::json_pointer ptr(pointer);
  if (!edited_.contains(ptr)) return;
  nlohmann::json& parent = edited_.at(ptr.parent_pointer());
  if (parent.is_object())
    parent.erase(ptr.back());
  else if (parent.is_array())
    parent.erase(static_cast<std::size_t>(std::stoul(ptr.back())));
  emit edited(QString::fromStdString(pointer));
}

QStringList ScenarioDocument::scenario_arguments() const {
  QStringList args;
  if (!path_.isEmpty()) args << path_;
  for (const FieldOverride& o : overrides())
    args << QStringLiteral("--set") << QString::fromStdString(o.pointer + "=" + o.value.dump());
  return args;
}

QByteArray ScenarioDocument::text() const {
  return QByteArray::fromStdString(edited_.dump(2) + "\n");
}

} // namespace partsim::gui
