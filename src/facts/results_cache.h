// Whole analysis results kept once, by type, for the analyses and finding rules that read another
// analysis's result (DESIGN.md, "Facts and results"). The cache names no analysis: an analysis that
// others read offers an accessor that asks the cache with its own name and compute function
// (CachedIdleGaps(context) in idle_gaps.h), so the facts below the analyses include none of them.
// One cache per trace (AnalysisContext::results()), and one the pipeline holds for a set of traces
// or an engine, where the multi-input analyses leave the results their finding rules read.
// Thread-safe: a result is computed once, by the first thread that asks, while the others wait.
// Which analysis reads which result is declared by the analyses' registry (AnalysisEntry::needs),
// which orders the pipeline's threads; a Reader keeps the declaration truthful.
#pragma once

#include <algorithm>
#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <typeindex>
#include <utility>
#include <vector>

#include "base/status.h"

namespace sightline {

class ResultsCache {
 public:
  // While one lives on a thread, that thread's named Gets (below) may ask only for `self`'s own
  // result and for the results named in `allowed`; any other fails with an internal error that
  // names both, without computing. The pipeline runs each registry entry under one, with the
  // entry's declared needs, so a need missing from the declaration fails every run that reaches
  // it, whatever the order the threads took. Nested Readers are not supported (one per thread).
  class Reader {
   public:
    Reader(std::string_view self, const std::vector<const char*>& allowed)
        : self_(self), allowed_(allowed), root_(this) {
      current_ = this;
    }
    // On a thread that helps the thread of `parent` with part of its entry's work (a WorkShare
    // task): the same name and allowed results, and what it asks counts as asked by `parent`,
    // which must outlive it.
    explicit Reader(Reader& parent)
        : self_(parent.self_), allowed_(parent.allowed_), root_(parent.root_) {
      current_ = this;
    }
    ~Reader() { current_ = nullptr; }
    Reader(const Reader&) = delete;
    Reader& operator=(const Reader&) = delete;

    // The reader of this thread; null when none lives on it.
    static Reader* Current() { return current_; }

    // The results of others this reader asked for (all allowed), each once, in the order asked:
    // what a declaration that is not too wide holds (tests/pipeline/analysis_needs_test.cc). Read
    // it once the threads helping this reader have ended.
    const std::vector<std::string>& asked() const { return asked_; }

    // Ok when the thread's reader (if any) may read the result named `name`.
    static Status Check(std::string_view name) {
      Reader* r = current_;
      if (r == nullptr || name == r->self_) return Status::Ok();
      for (const char* a : r->allowed_) {
        if (name != a) continue;
        Reader* root = r->root_;
        std::lock_guard<std::mutex> lock(root->asked_mu_);
        if (std::find(root->asked_.begin(), root->asked_.end(), name) == root->asked_.end()) {
          root->asked_.emplace_back(name);
        }
        return Status::Ok();
      }
      return InternalError("analysis '" + std::string(r->self_) + "' reads the result of '" +
                           std::string(name) +
                           "' without declaring it (AnalysisEntry::needs, analyses/registry.cc)");
    }

   private:
    static inline thread_local Reader* current_ = nullptr;
    std::string_view self_;
    const std::vector<const char*>& allowed_;
    Reader* root_;  // the reader whose asked() this one adds to: itself, or the helped thread's
    std::mutex asked_mu_;
    std::vector<std::string> asked_;
  };

  // The result of type T of the analysis named `name`: checked against the thread's Reader, then
  // as Get(compute).
  template <typename T, typename Compute>
  StatusOr<const T*> Get(std::string_view name, Compute&& compute) {
    if (Status s = Reader::Check(name); !s.ok()) return s;
    return Get<T>(std::forward<Compute>(compute));
  }

  // The result of type T: computed by `compute()` (returning StatusOr<T>) on the first call; the
  // same result, or the same error, on every later call.
  template <typename T, typename Compute>
  StatusOr<const T*> Get(Compute&& compute) {
    Slot& slot = SlotOf(typeid(T));
    std::call_once(slot.once, [&] {
      slot.value = std::make_shared<StatusOr<T>>(compute());
      slot.ready.store(true, std::memory_order_release);
    });
    const StatusOr<T>& r = *static_cast<const StatusOr<T>*>(slot.value.get());
    if (!r.ok()) return r.status();
    return &r.value();
  }

  // Keeps `value` as the result of type T, unless there is one already.
  template <typename T>
  void Put(T value) {
    (void)Get<T>([&] { return StatusOr<T>(std::move(value)); });
  }

  // The result of type T when one was computed (without error) or put; null otherwise. Never
  // computes.
  template <typename T>
  const T* Find() const {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = slots_.find(typeid(T));
    if (it == slots_.end() || !it->second->ready.load(std::memory_order_acquire)) return nullptr;
    const StatusOr<T>& r = *static_cast<const StatusOr<T>*>(it->second->value.get());
    return r.ok() ? &r.value() : nullptr;
  }

 private:
  struct Slot {
    std::once_flag once;
    std::atomic<bool> ready{false};
    std::shared_ptr<void> value;  // a StatusOr<T>
  };
  Slot& SlotOf(std::type_index type) {
    std::lock_guard<std::mutex> lock(mu_);
    std::unique_ptr<Slot>& slot = slots_[type];
    if (!slot) slot = std::make_unique<Slot>();
    return *slot;  // slots never move: Get waits on its once_flag outside the lock
  }

  mutable std::mutex mu_;
  std::map<std::type_index, std::unique_ptr<Slot>> slots_;
};

}  // namespace sightline
