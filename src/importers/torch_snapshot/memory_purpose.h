// What a GPU allocation is for — weights, KV cache, activations and workspace, a CUDA graph's pool
// — from the stack that allocated it: one table of rules (memory_purpose.cc) matched against the
// frames, innermost first. Used by the PyTorch memory snapshot importer, whose history entries and
// blocks carry Python and C++ frames; the memory analysis splits memory by the purpose it stores
// (docs/analyses/memory.md, "Memory by purpose", lists every rule).
#pragma once

#include <span>
#include <string_view>

#include "model/trace.h"

namespace sightline {

// One frame of an allocating stack: a Python frame has a `.py` file; a C++ frame has "??" or a
// `.cpp` file and the symbol as its name.
struct StackFrame {
  std::string_view file;
  std::string_view name;
};

// One rule of the table: frames of this kind whose file holds `file` ("" any) and whose name
// matches `names` ('|'-separated: exact names, or parts of the name) say `purpose`. An enclosing
// rule (CUDA graph capture) wins wherever it is in the stack; otherwise the innermost frame that
// some rule matches decides.
struct PurposeRule {
  enum Scope : uint8_t { kInnermost, kEnclosing };
  enum NameMatch : uint8_t { kAnyName, kNameIs, kNameHas };
  MemoryPurpose purpose;
  Scope scope;
  bool native;  // a C++ frame's symbol; else a Python frame
  std::string_view file;
  NameMatch match;
  std::string_view names;
};
std::span<const PurposeRule> PurposeRules();  // the table, in the order it is checked

// Where the allocation's memory lies, when the source knows: in the default pool, or in a private
// pool (a CUDA graph's, or a torch.cuda.MemPool).
enum class PoolHint : uint8_t { kUnknown, kDefault, kPrivate };

// The purpose of an allocation from its stack (innermost frame first):
// - a private pool: a CUDA graph's pool, unless the frames say weights or KV cache (a MemPool
//   holding them, as vLLM's sleep mode does);
// - pool unknown: a frame of CUDA graph capture anywhere in the stack makes it the graph's;
// - else the innermost frame that a rule names decides (weights, KV cache, activations);
// - no rule matched: kOther; no frames at all: kUnknown (kCudaGraphPool in a private pool).
MemoryPurpose PurposeOfStack(std::span<const StackFrame> frames, PoolHint pool);

// Whether a Python file is PyTorch's own (…/site-packages/torch/…, or a source tree's torch/),
// not the caller's: a virtual environment under /opt/torch/ does not make transformers torch's.
bool IsTorchPythonFile(std::string_view file);

}  // namespace sightline
