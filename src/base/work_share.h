// Tasks that idle threads may help with: a thread that has work it can split posts the pieces here
// and works on them itself, while threads of the same pool that have nothing else to do take
// pieces too. With no helper the poster runs every piece alone, so a caller never waits on a
// thread that may not come (the pipeline's analysis threads; docs/architecture.md).
#pragma once

#include <condition_variable>
#include <cstddef>
#include <functional>
#include <mutex>
#include <vector>

namespace sightline {

class WorkShare {
 public:
  // `posted` runs after tasks are posted, so that the pool can wake its idle threads (they then
  // call Help()). It may take the pool's lock; it is called without this share's lock held.
  explicit WorkShare(std::function<void()> posted = {}) : posted_(std::move(posted)) {}
  WorkShare(const WorkShare&) = delete;
  WorkShare& operator=(const WorkShare&) = delete;

  // Runs every task once, on this thread and on the threads that call Help() meanwhile, and
  // returns when all have ended. A task must not throw. Several threads may Run at once.
  void Run(const std::vector<std::function<void()>>& tasks);

  // Runs tasks posted by Run until none is left to take; false when there was none.
  bool Help();

  // Whether a posted task is waiting to be taken.
  bool HasTasks() const;

 private:
  struct Batch {
    const std::vector<std::function<void()>>* tasks;
    size_t next = 0;  // the next task to take
    size_t done = 0;  // tasks that have ended
  };
  // Takes the next task of a batch with one left; false when none is.
  bool TakeLocked(Batch** batch, size_t* index);
  void Finish(Batch* batch);

  std::function<void()> posted_;
  mutable std::mutex mu_;
  std::vector<Batch*> batches_;  // batches with tasks left to take, the oldest first
  std::condition_variable ended_;
};

}  // namespace sightline
