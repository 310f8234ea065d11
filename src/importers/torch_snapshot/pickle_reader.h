// A reader for plain-data Python pickles (protocols 2 to 5): dicts, lists, tuples, strings, bytes,
// ints, floats, booleans and None, with the memo. It builds values and nothing else: any opcode
// that would name or call Python code (GLOBAL, STACK_GLOBAL, REDUCE, BUILD, INST, OBJ, NEWOBJ, ...)
// and any opcode outside the subset is refused with its name and byte offset. Used by the PyTorch
// memory snapshot importer (docs/formats/torch_snapshot.md).
//
// Memory stays linear in the input (and is counted against a limit): each opcode adds at most one
// value, and a memo reference (BINGET)
// shares the container rather than copying it. Containers live in arenas and refer to each other by
// index, so shared, deeply nested or even cyclic structures (possible through the memo) cost no
// recursion to build or free; whoever walks them bounds its own walk.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/status.h"

namespace sightline {

struct PickleValue {
  enum class Kind : uint8_t {
    kNone,
    kBool,
    kInt,
    kBigInt,
    kFloat,
    kStr,
    kBytes,
    kList,
    kTuple,
    kDict
  };
  Kind kind = Kind::kNone;
  int64_t i = 0;     // kBool (0/1), kInt
  double f = 0;      // kFloat
  uint32_t ref = 0;  // kStr/kBytes: index into strings; kList/kTuple: into lists; kDict: into dicts
};

struct PickleDoc {
  PickleValue root;
  std::vector<std::string> strings;
  std::vector<std::vector<PickleValue>> lists;  // lists and tuples
  std::vector<std::vector<std::pair<PickleValue, PickleValue>>> dicts;
  // Work done by the accessors (Get: the entries scanned): through the memo one big dict or list
  // can be reached many times, so a reader compares this with a budget proportional to the input.
  mutable uint64_t work = 0;

  // Accessors that answer "not there" (nullptr, false) for a value of another kind.
  const std::vector<PickleValue>* List(const PickleValue& v) const;  // a list or a tuple
  const std::vector<std::pair<PickleValue, PickleValue>>* Dict(const PickleValue& v) const;
  bool Str(const PickleValue& v, std::string_view* out) const;
  // The value under a string key of a dict; nullptr when `v` is no dict or the key is absent.
  const PickleValue* Get(const PickleValue& v, std::string_view key) const;
  bool GetInt(const PickleValue& dict, std::string_view key, int64_t* out) const;
  bool GetStr(const PickleValue& dict, std::string_view key, std::string_view* out) const;
};

// The pickle's opcode name ("REDUCE") or "0xNN" for a byte that is none.
std::string PickleOpcodeName(uint8_t op);

// Decodes `bytes`. InvalidInput (the message starts with "not a memory snapshot: " or says where
// the pickle is damaged or cut short) for anything outside the plain-data subset, and when the
// decoded values would take more than `max_bytes` of memory (about: strings, values, containers,
// memo).
StatusOr<PickleDoc> ReadPlainPickle(std::string_view bytes, uint64_t max_bytes = UINT64_MAX);

}  // namespace sightline
