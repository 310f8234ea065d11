// The codec is two visitors of the Report's description (report_schema.h): every Field in the
// order described, Computed and JSON-only nesting skipped. Scalars as they are (doubles bit for
// bit), strings and lists with a 64-bit count, enums as their index (checked on reading), a Value
// as its alternative's index and then its payload.
#include "report/report_codec.h"

#include <type_traits>

#include "report/report_schema.h"

namespace sightline {
namespace {

class Encoder : public FieldsOnly<Encoder> {
 public:
  explicit Encoder(ByteWriter& w) : w_(w) {}

  template <class T>
  void Field(const char*, const T& x, const FieldOptions& = {}) {
    Put(x);
  }

  template <class T>
  void Put(const T& x) {
    if constexpr (std::is_same_v<T, std::string>) {
      w_.PutString(x);
    } else if constexpr (std::is_same_v<T, bool>) {
      w_.Put<uint8_t>(x);
    } else if constexpr (std::is_enum_v<T>) {
      w_.Put<uint32_t>(static_cast<uint32_t>(x));
    } else if constexpr (std::is_arithmetic_v<T>) {
      w_.Put(x);
    } else if constexpr (std::is_same_v<T, Value>) {
      w_.Put<uint8_t>(static_cast<uint8_t>(x.index()));
      if (const auto* i = std::get_if<int64_t>(&x)) w_.Put(*i);
      if (const auto* d = std::get_if<double>(&x)) w_.Put(*d);
      if (const auto* s = std::get_if<std::string>(&x)) w_.PutString(*s);
    } else if constexpr (ListType<T>) {
      const auto& items = ListTraits<T>::Items(x);
      w_.Put<uint64_t>(items.size());
      for (const auto& e : items) Put(e);
    } else {
      static_assert(Described<T>, "a report type without a Describe() (report_schema.h)");
      Describe(*this, x);
    }
  }

 private:
  ByteWriter& w_;
};

// The fewest bytes one T takes encoded: a count read from a blob is refused when the rest of the
// blob cannot hold that many (ByteReader::GetCount), so a corrupt count never allocates.
class MinBytes : public FieldsOnly<MinBytes> {
 public:
  template <class T>
  void Field(const char*, const T& x, const FieldOptions& = {}) {
    n += Of(x);
  }

  template <class T>
  static size_t Of(const T& x) {
    if constexpr (std::is_same_v<T, std::string> || ListType<T>) {
      return sizeof(uint64_t);
    } else if constexpr (std::is_same_v<T, bool>) {
      return 1;
    } else if constexpr (std::is_enum_v<T>) {
      return sizeof(uint32_t);
    } else if constexpr (std::is_arithmetic_v<T>) {
      return sizeof(T);
    } else if constexpr (std::is_same_v<T, Value>) {
      return 1;
    } else {
      MinBytes m;
      Describe(m, x);
      return m.n;
    }
  }

  size_t n = 0;
};

template <class T>
size_t MinBytesOf() {
  static const size_t n = MinBytes::Of(T{});
  return n;
}

class Decoder : public FieldsOnly<Decoder> {
 public:
  explicit Decoder(ByteReader& r) : r_(r) {}

  template <class T>
  void Field(const char*, T& x, const FieldOptions& = {}) {
    Get(x);
  }

  template <class T>
  void Get(T& x) {
    if constexpr (std::is_same_v<T, std::string>) {
      x = r_.GetString();
    } else if constexpr (std::is_same_v<T, bool>) {
      x = r_.Get<uint8_t>() != 0;
    } else if constexpr (std::is_enum_v<T>) {
      static_assert(NamedEnum<T>, "an enum without EnumNames (report_schema.h)");
      const uint32_t i = r_.Get<uint32_t>();
      if (i >= EnumNames<T>::Names().size()) r_.Fail();  // a value this build does not know
      x = r_.ok() ? static_cast<T>(i) : T{};
    } else if constexpr (std::is_arithmetic_v<T>) {
      x = r_.Get<T>();
    } else if constexpr (std::is_same_v<T, Value>) {
      switch (r_.Get<uint8_t>()) {
        case 0:
          x = Value();
          break;
        case 1:
          x = r_.Get<int64_t>();
          break;
        case 2:
          x = r_.Get<double>();
          break;
        case 3:
          x = r_.GetString();
          break;
        default:
          r_.Fail();
          x = Value();
      }
    } else if constexpr (ListType<T>) {
      using Element = typename ListTraits<T>::Element;
      x = T();
      const uint64_t n = r_.GetCount(MinBytesOf<Element>());
      for (uint64_t i = 0; i < n && r_.ok(); ++i) {
        Element e{};
        Get(e);
        if (r_.ok()) ListTraits<T>::Append(x, std::move(e));
      }
    } else {
      static_assert(Described<T>, "a report type without a Describe() (report_schema.h)");
      Describe(*this, x);
    }
  }

 private:
  ByteReader& r_;
};

template <class T>
T DecodeOne(ByteReader& r) {
  T x{};
  Decoder(r).Get(x);
  return x;
}

}  // namespace

void EncodeReportInput(const ReportInput& in, ByteWriter& w) { Encoder(w).Put(in); }
void EncodeSection(const Section& s, ByteWriter& w) { Encoder(w).Put(s); }
void EncodeFinding(const Finding& f, ByteWriter& w) { Encoder(w).Put(f); }
void EncodeReport(const Report& report, ByteWriter& w) { Encoder(w).Put(report); }

ReportInput DecodeReportInput(ByteReader& r) { return DecodeOne<ReportInput>(r); }
Section DecodeSection(ByteReader& r) { return DecodeOne<Section>(r); }
Finding DecodeFinding(ByteReader& r) { return DecodeOne<Finding>(r); }
Report DecodeReport(ByteReader& r) { return DecodeOne<Report>(r); }

}  // namespace sightline
