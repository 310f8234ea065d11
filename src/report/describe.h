// The vocabulary in which the Report describes its own types (report_schema.h): one function per
// struct, `template <class V, class T> void Describe(V& v, T& x)`, names each field once, in JSON
// order, with how it appears in JSON and what it means. Visitors read that one description: the
// JSON writer (reporters/json_reporter.cc), the MPI codec (report_codec.cc) and the generated
// field list of docs/formats/report-json.md (report_doc.cc), so that the three cannot drift.
//
// A visitor V offers:
//   v.Field(name, field, FieldOptions)    a member (scalar, string, enum, Value, list, struct);
//                                          the codec carries every Field, JSON as the options say
//   v.Computed(name, fn, FieldOptions)    a JSON-only value derived from fields (fn() gives it)
//   v.Object(name, fn, FieldOptions)      a JSON-only nesting: fn(v) describes the fields inside
// `field` is `const` for visitors that read (writer, encoder) and mutable for the decoder.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace sightline {

// Whether a field appears in JSON.
enum class InJson : uint8_t {
  kAlways,
  kOmitEmpty,       // left out when empty (string, list), false (bool) or the default (enum)
  kNullIfNegative,  // an index or rank: null when < 0
  kNullIfEmpty,     // a string: null when empty
  kWhen,            // present when FieldOptions::when holds (FieldOptions::when_doc says when)
  kNever,           // carried by the codec only (not in JSON)
};

// How a field is shaped in JSON, when not the plain one (a struct is an object, a list an array).
enum class JsonShape : uint8_t {
  kPlain,
  kKey,           // the element's key in a keyed object (kKeyedObjects, kKeyedValues): not repeated
  kKeyedObjects,  // a list of structs with a kKey field: an object from each key to the rest
  kKeyedValues,   // a list of structs with a kKey field and one other JSON field: key -> value
  kTuples,        // a list of structs: an array of arrays of the fields' values
  kRowObjects,    // table rows (lists of Values): objects keyed by FieldOptions::row_keys[i].key
};

struct Column;

struct FieldOptions {
  InJson json = InJson::kAlways;
  JsonShape shape = JsonShape::kPlain;
  bool when = true;           // InJson::kWhen: whether the field is in JSON for this value
  const char* when_doc = "";  // InJson::kWhen: when that is, for the docs
  const char* doc = "";       // what the field means (docs/formats/report-json.md)
  const std::vector<Column>* row_keys = nullptr;  // JsonShape::kRowObjects
};

// The base of a visitor that sees the Fields alone (the codec, the tests' counters and fillers):
// Computed values are skipped and JSON-only nestings walked through, so Derived offers Field only.
template <class Derived>
struct FieldsOnly {
  template <class F>
  void Computed(const char*, F&&, const FieldOptions& = {}) {}
  template <class F>
  void Object(const char*, F&& describe, const FieldOptions& = {}) {
    describe(static_cast<Derived&>(*this));
  }
};

// Enums name their values once (JSON writes the name, the codec the index, which it checks):
// a specialization gives `static std::span<const std::string_view> Names()`, index = value.
template <class E>
struct EnumNames;

template <class E>
concept NamedEnum = std::is_enum_v<E> && requires {
  EnumNames<E>::Names();
};

// Lists: std::vector and std::deque, and any type with a ListTraits specialization giving
// `using Element`, `static const auto& Items(const L&)` and `static void Append(L&, Element&&)`.
template <class L>
struct ListTraits;

template <class T>
struct ListTraits<std::vector<T>> {
  using Element = T;
  static const std::vector<T>& Items(const std::vector<T>& l) { return l; }
  static void Append(std::vector<T>& l, T&& e) { l.push_back(std::move(e)); }
};

template <class T>
struct ListTraits<std::deque<T>> {
  using Element = T;
  static const std::deque<T>& Items(const std::deque<T>& l) { return l; }
  static void Append(std::deque<T>& l, T&& e) { l.push_back(std::move(e)); }
};

template <class L>
concept ListType = requires {
  typename ListTraits<std::remove_const_t<L>>::Element;
};

// A described struct: one whose Describe() a visitor can call.
struct DescribeProbe {
  template <class... A>
  void Field(const char*, A&&...) {}
  template <class... A>
  void Computed(const char*, A&&...) {}
  template <class... A>
  void Object(const char*, A&&...) {}
};

template <class T>
concept Described = requires(DescribeProbe& p, T& t) {
  Describe(p, t);
};

// `T` is `S` or `const S` (a Describe overload serves reading and writing visitors alike).
template <class T, class S>
concept Is = std::is_same_v<std::remove_const_t<T>, S>;

}  // namespace sightline
