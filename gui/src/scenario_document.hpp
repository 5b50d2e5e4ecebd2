// ScenarioDocument: the scenario being edited, as JSON, with where it came from and its edits as --set overrides.
#pragma once

#include <nlohmann/json.hpp>

#include <QObject>
#include <QString>
#include <QStringList>

#include <string>
#include <utility>
#include <vector>

namespace partsim::gui {

/** One `--set POINTER=VALUE` override: the edit of one field relative to the loaded file. */
struct FieldOverride {
  std::string pointer;
  nlohmann::json value;
};

/** The edits that turn `original` into `edited`, as overrides `partsim --set` can apply in order. A removed key
 * replaces its whole parent object (the CLI cannot delete a key); keys removed at the top level are not expressed. */
std::vector<FieldOverride> diff_overrides(const nlohmann::json& original, const nlohmann::json& edited);

/** The scenario being edited: the loaded document, the edited one, and the source the CLI would name. */
class ScenarioDocument : public QObject {
  Q_OBJECT
 public:
  explicit ScenarioDocument(QObject* parent = nullptr);

  /** Loads a scenario file. Returns an error line (`PATH: what went wrong`) or an empty string. */
  QString load_file(const QString& path);
  /** Loads the built-in default scenario (compiled into partsim_model). */
  void load_default();
  /** Loads JSON text as if it came from `path` (empty: the built-in default). Returns an error line or "". */
  QString load_text(const QByteArray& text, const QString& path);

  /** The file path, or empty for the built-in default. */
  const QString& path() const { return path_; }
  /** What error messages name: the path, or `<built-in default>`. */
  std::string source() const;
  /** A short title: the file name or "built-in default". */
  QString title() const;

  const nlohmann::json& document() const { return edited_; }
  const nlohmann::json& original() const { return original_; }
  /** The value at a JSON pointer, or nullptr when absent. */
  const nlohmann::json* value(const std::string& pointer) const;

  /** Sets the value at `pointer`, creating missing parent objects. Emits edited() when the value changed. */
  void set_value(const std::string& pointer, const nlohmann::json& value);
  /** Removes the key at `pointer` (nothing when absent). Emits edited(). */
  void remove_value(const std::string& pointer);

  std::vector<FieldOverride> overrides() const { return diff_overrides(original_, edited_); }
  /** `[PATH] --set P=V ...`: the scenario part of a `partsim run` or `partsim sweep` command line. */
  QStringList scenario_arguments() const;
  /** The edited scenario as indented JSON text. */
  QByteArray text() const;

 signals:
  /** A new document was loaded (the form rebuilds itself). */
  void loaded();
  /** One field changed through set_value/remove_value. */
  void edited(const QString& pointer);

 private:
  QString path_;
  nlohmann::json original_;
  nlohmann::json edited_;
};

} // namespace partsim::gui
