#include "report/report_doc.h"

#include <fmt/format.h>

#include <cctype>
#include <functional>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "report/report_schema.h"

namespace sightline {
namespace {

std::string Quoted(std::string_view s) { return fmt::format("`{}`", s); }

template <class E>
std::string EnumDoc(bool without_default) {
  std::string out = "string: ";
  const auto names = EnumNames<E>::Names();
  for (size_t i = without_default ? 1 : 0; i < names.size(); ++i) {
    if (out.back() != ' ') out += ", ";
    out += Quoted(names[i]);
  }
  return out;
}

// The JSON type of a scalar (or Value).
template <class T>
std::string ScalarDoc() {
  if constexpr (std::is_same_v<T, std::string> || std::is_same_v<T, std::string_view> ||
                std::is_same_v<std::decay_t<T>, const char*>) {
    return "string";
  } else if constexpr (std::is_same_v<T, bool>) {
    return "boolean";
  } else if constexpr (std::is_integral_v<T>) {
    return "integer";
  } else if constexpr (std::is_floating_point_v<T>) {
    return "number";
  } else if constexpr (std::is_same_v<T, Value>) {
    return "integer, number, string or null";
  } else {
    return "";
  }
}

// The names of a struct's JSON fields (a tuple's items), or the type of its one non-key field (a
// keyed value).
class FieldNames {
 public:
  template <class T>
  void Field(const char* name, const T&, const FieldOptions& o = {}) {
    if (o.json == InJson::kNever || o.shape == JsonShape::kKey) return;
    names.push_back(name);
    type = ScalarDoc<T>();
  }
  template <class F>
  void Computed(const char* name, F&&, const FieldOptions& = {}) {
    names.push_back(name);
  }
  template <class F>
  void Object(const char* name, F&&, const FieldOptions& = {}) {
    names.push_back(name);
  }
  std::vector<std::string> names;
  std::string type;
};

// One markdown table per JSON object, headed by its path ("sections[].series{}"); the objects
// nested in it follow, depth first.
class DocTable {
 public:
  explicit DocTable(std::string path) : path_(std::move(path)) {}

  template <class T>
  void Field(const char* name, const T&, const FieldOptions& o = {}) {
    if (o.json == InJson::kNever || o.shape == JsonShape::kKey) return;
    Row(name, TypeDoc<T>(name, o), Presence<T>(o), o.doc);
  }
  template <class F>
  void Computed(const char* name, F&&, const FieldOptions& o = {}) {
    using R = std::decay_t<std::invoke_result_t<F>>;
    Row(name, ScalarDoc<R>(), Presence<R>(o), o.doc);
  }
  template <class F>
  void Object(const char* name, F&& describe, const FieldOptions& o = {}) {
    // Drawn inline, as `name.field` rows (its fields live in the struct described here).
    const std::string outer = prefix_;
    prefix_ += std::string(name) + ".";
    describe(*this);
    prefix_ = outer;
    (void)o;
  }

  std::string Render() const {
    std::string out =
        fmt::format("#### {}\n\n| key | JSON | present | meaning |\n|---|---|---|---|\n",
                    path_.empty() ? std::string("The report") : Quoted(path_));
    out += rows_;
    for (const auto& child : children_) out += "\n" + child();
    return out;
  }

 private:
  void Row(std::string_view name, const std::string& type, const std::string& presence,
           std::string_view doc) {
    rows_ += fmt::format("| `{}{}` | {} | {} | {} |\n", prefix_, name, type, presence, doc);
  }

  template <class T>
  static std::string Presence(const FieldOptions& o) {
    switch (o.json) {
      case InJson::kOmitEmpty:
        if constexpr (std::is_same_v<T, bool>) return "when true";
        if constexpr (std::is_enum_v<T>) {
          return fmt::format("when not {}", Quoted(EnumNames<T>::Names()[0]));
        }
        return "when not empty";
      case InJson::kNullIfNegative:
      case InJson::kNullIfEmpty:
        return "always (null: none)";
      case InJson::kWhen:
        return o.when_doc;
      default:
        return "always";
    }
  }

  // Describes the object(s) of a struct field or list in their own table, after this one.
  template <class S>
  std::string Child(std::string path) {
    children_.push_back([path] {
      S s{};
      DocTable t(path);
      Describe(t, s);
      return t.Render();
    });
    return fmt::format("[`{}`](#{})", path, Anchor(path));
  }

  // GitHub's heading anchors: lower case, punctuation other than - and _ dropped.
  static std::string Anchor(std::string_view heading) {
    std::string a;
    for (char c : heading) {
      if (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-') a += c;
    }
    return a;
  }

  template <class T>
  std::string TypeDoc(const char* name, const FieldOptions& o) {
    const std::string path = (path_.empty() ? "" : path_ + ".") + prefix_ + name;
    if constexpr (std::is_enum_v<T>) {
      return EnumDoc<T>(o.json == InJson::kOmitEmpty);
    } else if constexpr (ListType<T>) {
      using E = typename ListTraits<T>::Element;
      switch (o.shape) {
        case JsonShape::kKeyedObjects:
          if constexpr (Described<E>) {
            return "object: key → object, " + Child<E>(path + "{}");
          }
          break;
        case JsonShape::kKeyedValues:
          if constexpr (Described<E>) {
            FieldNames f;
            E e{};
            Describe(f, e);
            return "object: key → " + f.type;
          }
          break;
        case JsonShape::kTuples:
          if constexpr (Described<E>) {
            FieldNames f;
            E e{};
            Describe(f, e);
            std::string items;
            for (const std::string& n : f.names) items += (items.empty() ? "" : ", ") + n;
            return fmt::format("array of `[{}]`", items);
          }
          break;
        case JsonShape::kRowObjects:
          return "array of objects: column key → integer, number, string or null";
        default:
          break;
      }
      if constexpr (Described<E>) {
        return "array of " + Child<E>(path + "[]");
      } else if constexpr (std::is_enum_v<E>) {
        return "array of " + EnumDoc<E>(false);
      } else {
        return "array of " + ScalarDoc<E>() + "s";
      }
    } else if constexpr (Described<T>) {
      return "object, " + Child<T>(path);
    } else {
      return ScalarDoc<T>();
    }
  }

  std::string path_;
  std::string prefix_;
  std::string rows_;
  std::vector<std::function<std::string()>> children_;
};

}  // namespace

std::string RenderReportFieldsDoc() {
  Report report;
  DocTable top("");
  Describe(top, report);
  return top.Render();
}

}  // namespace sightline
