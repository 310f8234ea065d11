// JSON reporter: the Report as documented in docs/formats/report-json.md, written by walking the
// Report's description of itself (report/report_schema.h): each field under its name, present as
// its options say. Values keep full precision (durations as integer ns); tables carry their
// column list so consumers can find units.
#include <string_view>
#include <type_traits>

#include "base/json_writer.h"
#include "report/report_schema.h"
#include "report/value_format.h"
#include "reporters/reporter.h"

namespace sightline {
namespace {

template <class T>
bool IsEmpty(const T& x) {
  if constexpr (std::is_same_v<T, std::string>) {
    return x.empty();
  } else if constexpr (ListType<T>) {
    return ListTraits<T>::Items(x).empty();
  } else if constexpr (std::is_enum_v<T>) {
    return x == T{};
  } else if constexpr (std::is_arithmetic_v<T>) {
    return x == T{};
  } else {
    return false;  // a struct is never left out as empty (kWhen says when it is)
  }
}

template <class T>
bool InJsonHere(const T& x, const FieldOptions& o) {
  switch (o.json) {
    case InJson::kNever:
      return false;
    case InJson::kWhen:
      return o.when;
    case InJson::kOmitEmpty:
      return !IsEmpty(x);
    default:
      return true;
  }
}

// The string of a kKey field.
class KeyOf {
 public:
  template <class T>
  void Field(const char*, const T& x, const FieldOptions& o = {}) {
    if constexpr (std::is_same_v<T, std::string>) {
      if (o.shape == JsonShape::kKey) key = x;
    }
  }
  template <class F>
  void Computed(const char*, F&&, const FieldOptions& = {}) {}
  template <class F>
  void Object(const char*, F&&, const FieldOptions& = {}) {}

  std::string_view key;
};

template <class T>
std::string_view KeyOfElement(const T& e) {
  KeyOf k;
  Describe(k, e);
  return k.key;
}

// Writes one value of any described type; FieldOptions give its shape and null rule.
template <class T>
void Write(JsonWriter& w, const T& x, const FieldOptions& o);

// The fields of a struct as `"name": value` pairs (an object's members). kKey fields are the
// object's own key in its parent and are not repeated.
class Members {
 public:
  explicit Members(JsonWriter& w) : w_(w) {}
  template <class T>
  void Field(const char* name, const T& x, const FieldOptions& o = {}) {
    if (o.shape == JsonShape::kKey || !InJsonHere(x, o)) return;
    w_.Key(name);
    Write(w_, x, o);
  }
  template <class F>
  void Computed(const char* name, F&& value, const FieldOptions& o = {}) {
    if (o.json == InJson::kNever || (o.json == InJson::kWhen && !o.when)) return;
    w_.Key(name);
    Write(w_, value(), o);
  }
  template <class F>
  void Object(const char* name, F&& describe, const FieldOptions& = {}) {
    w_.Key(name).BeginObject();
    describe(*this);
    w_.EndObject();
  }

 private:
  JsonWriter& w_;
};

// The fields of a struct as bare values: a tuple's items, or the value of a keyed value.
class Values {
 public:
  explicit Values(JsonWriter& w) : w_(w) {}
  template <class T>
  void Field(const char*, const T& x, const FieldOptions& o = {}) {
    if (o.shape == JsonShape::kKey || !InJsonHere(x, o)) return;
    Write(w_, x, o);
  }
  template <class F>
  void Computed(const char*, F&& value, const FieldOptions& o = {}) {
    if (o.json != InJson::kNever) Write(w_, value(), o);
  }
  template <class F>
  void Object(const char*, F&& describe, const FieldOptions& = {}) {
    describe(*this);
  }

 private:
  JsonWriter& w_;
};

template <class T>
void WriteList(JsonWriter& w, const T& list, const FieldOptions& o) {
  using Element = typename ListTraits<T>::Element;
  const auto& items = ListTraits<T>::Items(list);
  if constexpr (Described<Element>) {
    switch (o.shape) {
      case JsonShape::kKeyedObjects:
        w.BeginObject();
        for (const auto& e : items) {
          w.Key(KeyOfElement(e));
          Write(w, e, {});
        }
        w.EndObject();
        return;
      case JsonShape::kKeyedValues:
        w.BeginObject();
        for (const auto& e : items) {
          w.Key(KeyOfElement(e));
          Values values(w);
          Describe(values, e);
        }
        w.EndObject();
        return;
      case JsonShape::kTuples:
        w.BeginArray();
        for (const auto& e : items) {
          w.BeginArray();
          Values values(w);
          Describe(values, e);
          w.EndArray();
        }
        w.EndArray();
        return;
      default:
        break;
    }
  }
  if constexpr (std::is_same_v<Element, std::vector<Value>>) {
    if (o.shape == JsonShape::kRowObjects && o.row_keys != nullptr) {
      const std::vector<Column>& columns = *o.row_keys;
      w.BeginArray();
      for (const std::vector<Value>& row : items) {
        w.BeginObject();
        for (size_t i = 0; i < columns.size() && i < row.size(); ++i) {
          w.Key(columns[i].key);
          WriteJsonValue(w, row[i]);
        }
        w.EndObject();
      }
      w.EndArray();
      return;
    }
  }
  w.BeginArray();
  for (const auto& e : items) Write(w, e, {});
  w.EndArray();
}

template <class T>
void Write(JsonWriter& w, const T& x, const FieldOptions& o) {
  if constexpr (std::is_same_v<T, std::string> || std::is_same_v<T, std::string_view>) {
    if (o.json == InJson::kNullIfEmpty && x.empty()) {
      w.Null();
    } else {
      w.String(x);
    }
  } else if constexpr (std::is_same_v<std::decay_t<T>, const char*>) {
    w.String(x);
  } else if constexpr (std::is_same_v<T, bool>) {
    w.Bool(x);
  } else if constexpr (std::is_enum_v<T>) {
    static_assert(NamedEnum<T>, "an enum without EnumNames (report_schema.h)");
    const auto names = EnumNames<T>::Names();
    const auto i = static_cast<size_t>(x);
    w.String(i < names.size() ? names[i] : std::string_view());
  } else if constexpr (std::is_integral_v<T>) {
    if (o.json == InJson::kNullIfNegative && x < 0) {
      w.Null();
    } else {
      w.Int(x);
    }
  } else if constexpr (std::is_floating_point_v<T>) {
    w.Double(x);
  } else if constexpr (std::is_same_v<T, Value>) {
    WriteJsonValue(w, x);
  } else if constexpr (ListType<T>) {
    WriteList(w, x, o);
  } else {
    static_assert(Described<T>, "a report type without a Describe() (report_schema.h)");
    w.BeginObject();
    Members members(w);
    Describe(members, x);
    w.EndObject();
  }
}

}  // namespace

std::string RenderJsonReport(const Report& report) {
  JsonWriter w(1);
  Write(w, report, {});
  std::string out = w.Take();
  out.push_back('\n');
  return out;
}

}  // namespace sightline
