#include "importers/torch_snapshot/pickle_reader.h"

#include <fmt/format.h>

#include <cstring>
#include <limits>
#include <unordered_map>

#include "base/input_limits.h"

namespace sightline {
namespace {

using Kind = PickleValue::Kind;

struct OpName {
  uint8_t op;
  const char* name;
};
// Every opcode of protocols 0 to 5, for messages; the decoder accepts only some.
constexpr OpName kOpNames[] = {
    {'(', "MARK"},
    {'.', "STOP"},
    {'0', "POP"},
    {'1', "POP_MARK"},
    {'2', "DUP"},
    {'F', "FLOAT"},
    {'I', "INT"},
    {'J', "BININT"},
    {'K', "BININT1"},
    {'L', "LONG"},
    {'M', "BININT2"},
    {'N', "NONE"},
    {'P', "PERSID"},
    {'Q', "BINPERSID"},
    {'R', "REDUCE"},
    {'S', "STRING"},
    {'T', "BINSTRING"},
    {'U', "SHORT_BINSTRING"},
    {'V', "UNICODE"},
    {'X', "BINUNICODE"},
    {'a', "APPEND"},
    {'b', "BUILD"},
    {'c', "GLOBAL"},
    {'d', "DICT"},
    {'}', "EMPTY_DICT"},
    {'e', "APPENDS"},
    {'g', "GET"},
    {'h', "BINGET"},
    {'i', "INST"},
    {'j', "LONG_BINGET"},
    {'l', "LIST"},
    {']', "EMPTY_LIST"},
    {'o', "OBJ"},
    {'p', "PUT"},
    {'q', "BINPUT"},
    {'r', "LONG_BINPUT"},
    {'s', "SETITEM"},
    {'t', "TUPLE"},
    {')', "EMPTY_TUPLE"},
    {'u', "SETITEMS"},
    {'G', "BINFLOAT"},
    {0x80, "PROTO"},
    {0x81, "NEWOBJ"},
    {0x82, "EXT1"},
    {0x83, "EXT2"},
    {0x84, "EXT4"},
    {0x85, "TUPLE1"},
    {0x86, "TUPLE2"},
    {0x87, "TUPLE3"},
    {0x88, "NEWTRUE"},
    {0x89, "NEWFALSE"},
    {0x8a, "LONG1"},
    {0x8b, "LONG4"},
    {'B', "BINBYTES"},
    {'C', "SHORT_BINBYTES"},
    {0x8c, "SHORT_BINUNICODE"},
    {0x8d, "BINUNICODE8"},
    {0x8e, "BINBYTES8"},
    {0x8f, "EMPTY_SET"},
    {0x90, "ADDITEMS"},
    {0x91, "FROZENSET"},
    {0x92, "NEWOBJ_EX"},
    {0x93, "STACK_GLOBAL"},
    {0x94, "MEMOIZE"},
    {0x95, "FRAME"},
    {0x96, "BYTEARRAY8"},
    {0x97, "NEXT_BUFFER"},
    {0x98, "READONLY_BUFFER"},
};

Status Refused(uint8_t op, size_t at) {
  return InvalidInputError(
      fmt::format("not a memory snapshot: pickle opcode {} at byte {} (Sightline reads only plain "
                  "data pickles)",
                  PickleOpcodeName(op), at));
}

Status Damaged(uint8_t op, size_t at, std::string_view why) {
  return InvalidInputError(
      fmt::format("damaged pickle: opcode {} at byte {}: {}", PickleOpcodeName(op), at, why));
}

class Decoder {
 public:
  Decoder(std::string_view bytes, uint64_t max_bytes) : in_(bytes), max_bytes_(max_bytes) {}

  StatusOr<PickleDoc> Run() {
    while (true) {
      if (pos_ >= in_.size()) return Truncated();
      const size_t at = pos_;
      const uint8_t op = static_cast<uint8_t>(in_[pos_++]);
      bool stop = false;
      RETURN_IF_ERROR(Step(op, at, &stop));
      if (used_ > max_bytes_) {
        return InvalidInputError(fmt::format(
            "the pickle's values would take more than {} bytes of memory (at byte {} of {}): "
            "larger than this machine allows one input ({} raises it)",
            max_bytes_, pos_, in_.size(), kMaxInputSizeEnv));
      }
      if (stop) break;
    }
    if (stack_.size() != 1 || !marks_.empty()) {
      return InvalidInputError(fmt::format(
          "damaged pickle: STOP at byte {} with {} values and {} marks on the stack (expected one "
          "value)",
          pos_ - 1, stack_.size(), marks_.size()));
    }
    doc_.root = stack_.back();
    return std::move(doc_);
  }

 private:
  Status Truncated() const {
    return InvalidInputError(fmt::format(
        "the pickle ends early at byte {} of {} (no STOP opcode): the file is cut short",
        in_.size(), in_.size()));
  }

  // Reads n bytes of argument; false (and pos_ at the end) when the input ends first.
  bool Take(size_t n, std::string_view* out) {
    if (in_.size() - pos_ < n) {
      pos_ = in_.size();
      return false;
    }
    *out = in_.substr(pos_, n);
    pos_ += n;
    return true;
  }
  bool TakeLe(size_t n, uint64_t* v) {
    std::string_view b;
    if (!Take(n, &b)) return false;
    *v = 0;
    for (size_t k = 0; k < n; ++k) *v |= uint64_t{static_cast<uint8_t>(b[k])} << (8 * k);
    return true;
  }

  void Push(PickleValue v) {
    stack_.push_back(v);
    used_ += sizeof(PickleValue);
  }
  Status Pop(uint8_t op, size_t at, PickleValue* v) {
    if (stack_.empty() || (!marks_.empty() && stack_.size() <= marks_.back())) {
      return Damaged(op, at, "the stack is empty");
    }
    *v = stack_.back();
    stack_.pop_back();
    return Status::Ok();
  }
  Status PopMark(uint8_t op, size_t at, size_t* mark) {
    if (marks_.empty()) return Damaged(op, at, "no MARK before it");
    *mark = marks_.back();
    marks_.pop_back();
    return Status::Ok();
  }

  PickleValue NewString(std::string_view s, Kind kind) {
    PickleValue v;
    v.kind = kind;
    v.ref = static_cast<uint32_t>(doc_.strings.size());
    doc_.strings.emplace_back(s);
    used_ += s.size() + sizeof(std::string);
    return v;
  }
  PickleValue NewList(Kind kind, std::vector<PickleValue> items) {
    PickleValue v;
    v.kind = kind;
    v.ref = static_cast<uint32_t>(doc_.lists.size());
    used_ += (items.size() + 1) * sizeof(PickleValue);
    doc_.lists.push_back(std::move(items));
    return v;
  }
  PickleValue NewDict() {
    PickleValue v;
    v.kind = Kind::kDict;
    v.ref = static_cast<uint32_t>(doc_.dicts.size());
    doc_.dicts.emplace_back();
    used_ += 2 * sizeof(PickleValue);
    return v;
  }
  // A tuple of the top n values.
  Status Tuple(uint8_t op, size_t at, size_t n) {
    if (stack_.size() < n || (!marks_.empty() && stack_.size() - n < marks_.back())) {
      return Damaged(op, at, "too few values on the stack");
    }
    std::vector<PickleValue> items(stack_.end() - static_cast<ptrdiff_t>(n), stack_.end());
    stack_.resize(stack_.size() - n);
    Push(NewList(Kind::kTuple, std::move(items)));
    return Status::Ok();
  }
  // Sets or appends the values from stack index `from` into the container just below them.
  Status Fill(uint8_t op, size_t at, size_t from, bool dict) {
    if (from == 0 || from > stack_.size()) return Damaged(op, at, "no container on the stack");
    const PickleValue target = stack_[from - 1];
    if (!marks_.empty() && from - 1 < marks_.back()) return Damaged(op, at, "no container");
    if (dict) {
      if (target.kind != Kind::kDict) return Damaged(op, at, "the target is not a dict");
      if ((stack_.size() - from) % 2 != 0) return Damaged(op, at, "a key without a value");
      auto& d = doc_.dicts[target.ref];
      for (size_t k = from; k < stack_.size(); k += 2) d.emplace_back(stack_[k], stack_[k + 1]);
    } else {
      if (target.kind != Kind::kList) return Damaged(op, at, "the target is not a list");
      auto& l = doc_.lists[target.ref];
      l.insert(l.end(), stack_.begin() + static_cast<ptrdiff_t>(from), stack_.end());
    }
    used_ += (stack_.size() - from) * sizeof(PickleValue);
    stack_.resize(from);
    return Status::Ok();
  }
  Status Memo(uint8_t op, size_t at, uint64_t index) {
    if (stack_.empty()) return Damaged(op, at, "nothing to memoize");
    memo_[index] = stack_.back();
    used_ += 2 * sizeof(PickleValue);
    return Status::Ok();
  }
  Status Recall(uint8_t op, size_t at, uint64_t index) {
    auto it = memo_.find(index);
    if (it == memo_.end()) return Damaged(op, at, fmt::format("memo {} was never stored", index));
    Push(it->second);
    return Status::Ok();
  }
  Status Int(int64_t value) {
    PickleValue v;
    v.kind = Kind::kInt;
    v.i = value;
    Push(v);
    return Status::Ok();
  }
  Status Str(uint8_t op, size_t at, uint64_t n, Kind kind) {
    std::string_view s;
    if (n > in_.size() - pos_ || !Take(static_cast<size_t>(n), &s)) {
      pos_ = in_.size();
      return Truncated();
    }
    (void)op;
    (void)at;
    Push(NewString(s, kind));
    return Status::Ok();
  }

  Status Step(uint8_t op, size_t at, bool* stop) {
    uint64_t n = 0;
    std::string_view b;
    PickleValue v;
    size_t mark = 0;
    switch (op) {
      case 0x80:  // PROTO
        if (!Take(1, &b)) return Truncated();
        if (static_cast<uint8_t>(b[0]) < 2 || static_cast<uint8_t>(b[0]) > 5) {
          return InvalidInputError(fmt::format(
              "not a memory snapshot: pickle protocol {} (Sightline reads protocols 2 to 5)",
              static_cast<int>(static_cast<uint8_t>(b[0]))));
        }
        return Status::Ok();
      case 0x95:  // FRAME: a length hint only
        return TakeLe(8, &n) ? Status::Ok() : Truncated();
      case '.':
        *stop = true;
        return Status::Ok();
      case '(':
        marks_.push_back(stack_.size());
        return Status::Ok();
      case '0':
        return Pop(op, at, &v);
      case '1':
        RETURN_IF_ERROR(PopMark(op, at, &mark));
        stack_.resize(mark);
        return Status::Ok();
      case '2':
        if (stack_.empty()) return Damaged(op, at, "the stack is empty");
        Push(stack_.back());
        return Status::Ok();
      case 'N':
        Push(PickleValue{});
        return Status::Ok();
      case 0x88:
      case 0x89:
        v.kind = Kind::kBool;
        v.i = op == 0x88 ? 1 : 0;
        Push(v);
        return Status::Ok();
      case 'J':
        if (!TakeLe(4, &n)) return Truncated();
        return Int(static_cast<int32_t>(static_cast<uint32_t>(n)));
      case 'K':
        if (!TakeLe(1, &n)) return Truncated();
        return Int(static_cast<int64_t>(n));
      case 'M':
        if (!TakeLe(2, &n)) return Truncated();
        return Int(static_cast<int64_t>(n));
      case 0x8a:    // LONG1
      case 0x8b: {  // LONG4
        if (!TakeLe(op == 0x8a ? 1 : 4, &n)) return Truncated();
        if (n > in_.size() - pos_ || !Take(static_cast<size_t>(n), &b)) return Truncated();
        if (n > 8) {  // beyond int64: kept as "a big int" (no field of a snapshot is one)
          v.kind = Kind::kBigInt;
          Push(v);
          return Status::Ok();
        }
        uint64_t u = 0;
        for (size_t i = 0; i < n; ++i) u |= uint64_t{static_cast<uint8_t>(b[i])} << (8 * i);
        if (n > 0 && n < 8 && (static_cast<uint8_t>(b[n - 1]) & 0x80)) u |= ~uint64_t{0} << (8 * n);
        return Int(static_cast<int64_t>(u));
      }
      case 'G': {  // BINFLOAT: big-endian IEEE 754 double
        if (!Take(8, &b)) return Truncated();
        uint64_t u = 0;
        for (size_t i = 0; i < 8; ++i) u = (u << 8) | static_cast<uint8_t>(b[i]);
        v.kind = Kind::kFloat;
        std::memcpy(&v.f, &u, sizeof v.f);
        Push(v);
        return Status::Ok();
      }
      case 0x8c:
        if (!TakeLe(1, &n)) return Truncated();
        return Str(op, at, n, Kind::kStr);
      case 'X':
        if (!TakeLe(4, &n)) return Truncated();
        return Str(op, at, n, Kind::kStr);
      case 0x8d:
        if (!TakeLe(8, &n)) return Truncated();
        return Str(op, at, n, Kind::kStr);
      case 'C':
        if (!TakeLe(1, &n)) return Truncated();
        return Str(op, at, n, Kind::kBytes);
      case 'B':
        if (!TakeLe(4, &n)) return Truncated();
        return Str(op, at, n, Kind::kBytes);
      case 0x8e:
        if (!TakeLe(8, &n)) return Truncated();
        return Str(op, at, n, Kind::kBytes);
      case '}':
        Push(NewDict());
        return Status::Ok();
      case ']':
        Push(NewList(Kind::kList, {}));
        return Status::Ok();
      case ')':
        Push(NewList(Kind::kTuple, {}));
        return Status::Ok();
      case 0x85:
      case 0x86:
      case 0x87:
        return Tuple(op, at, op - 0x84u);
      case 't':
        RETURN_IF_ERROR(PopMark(op, at, &mark));
        return Tuple(op, at, stack_.size() - mark);
      case 'l': {
        RETURN_IF_ERROR(PopMark(op, at, &mark));
        std::vector<PickleValue> items(stack_.begin() + static_cast<ptrdiff_t>(mark), stack_.end());
        stack_.resize(mark);
        Push(NewList(Kind::kList, std::move(items)));
        return Status::Ok();
      }
      case 'd': {
        RETURN_IF_ERROR(PopMark(op, at, &mark));
        if ((stack_.size() - mark) % 2 != 0) return Damaged(op, at, "a key without a value");
        const PickleValue d = NewDict();
        auto& items = doc_.dicts[d.ref];
        for (size_t i = mark; i < stack_.size(); i += 2)
          items.emplace_back(stack_[i], stack_[i + 1]);
        stack_.resize(mark);
        Push(d);
        return Status::Ok();
      }
      case 's':
        if (stack_.size() < 3) return Damaged(op, at, "too few values on the stack");
        return Fill(op, at, stack_.size() - 2, /*dict=*/true);
      case 'u':
        RETURN_IF_ERROR(PopMark(op, at, &mark));
        return Fill(op, at, mark, /*dict=*/true);
      case 'a':
        if (stack_.size() < 2) return Damaged(op, at, "too few values on the stack");
        return Fill(op, at, stack_.size() - 1, /*dict=*/false);
      case 'e':
        RETURN_IF_ERROR(PopMark(op, at, &mark));
        return Fill(op, at, mark, /*dict=*/false);
      case 0x94:
        return Memo(op, at, memo_.size());
      case 'q':
        if (!TakeLe(1, &n)) return Truncated();
        return Memo(op, at, n);
      case 'r':
        if (!TakeLe(4, &n)) return Truncated();
        return Memo(op, at, n);
      case 'h':
        if (!TakeLe(1, &n)) return Truncated();
        return Recall(op, at, n);
      case 'j':
        if (!TakeLe(4, &n)) return Truncated();
        return Recall(op, at, n);
      default:
        return Refused(op, at);  // code (GLOBAL, REDUCE, ...), protocol 0/1 text forms, sets
    }
  }

  std::string_view in_;
  uint64_t max_bytes_;
  uint64_t used_ = 0;  // about what the values take
  size_t pos_ = 0;
  std::vector<PickleValue> stack_;
  std::vector<size_t> marks_;
  std::unordered_map<uint64_t, PickleValue> memo_;
  PickleDoc doc_;
};

}  // namespace

std::string PickleOpcodeName(uint8_t op) {
  for (const OpName& o : kOpNames) {
    if (o.op == op) return o.name;
  }
  return fmt::format("0x{:02x}", op);
}

const std::vector<PickleValue>* PickleDoc::List(const PickleValue& v) const {
  if (v.kind != PickleValue::Kind::kList && v.kind != PickleValue::Kind::kTuple) return nullptr;
  work += 1;
  return &lists[v.ref];
}

const std::vector<std::pair<PickleValue, PickleValue>>* PickleDoc::Dict(
    const PickleValue& v) const {
  return v.kind == PickleValue::Kind::kDict ? &dicts[v.ref] : nullptr;
}

bool PickleDoc::Str(const PickleValue& v, std::string_view* out) const {
  if (v.kind != PickleValue::Kind::kStr) return false;
  *out = strings[v.ref];
  return true;
}

const PickleValue* PickleDoc::Get(const PickleValue& v, std::string_view key) const {
  const auto* d = Dict(v);
  if (d == nullptr) return nullptr;
  work += d->size() + 1;
  const PickleValue* found = nullptr;
  for (const auto& [k, value] : *d) {
    std::string_view s;
    if (Str(k, &s) && s == key) found = &value;  // the last one wins, as in Python
  }
  return found;
}

bool PickleDoc::GetInt(const PickleValue& dict, std::string_view key, int64_t* out) const {
  const PickleValue* v = Get(dict, key);
  if (v == nullptr || v->kind != PickleValue::Kind::kInt) return false;
  *out = v->i;
  return true;
}

bool PickleDoc::GetStr(const PickleValue& dict, std::string_view key, std::string_view* out) const {
  const PickleValue* v = Get(dict, key);
  return v != nullptr && Str(*v, out);
}

StatusOr<PickleDoc> ReadPlainPickle(std::string_view bytes, uint64_t max_bytes) {
  return Decoder(bytes, max_bytes).Run();
}

}  // namespace sightline
