// Tasks that idle threads may help with (work_share.h).
#include "base/work_share.h"

#include <algorithm>

namespace sightline {

bool WorkShare::TakeLocked(Batch** batch, size_t* index) {
  while (!batches_.empty()) {
    Batch* b = batches_.front();
    if (b->next < b->tasks->size()) {
      *batch = b;
      *index = b->next++;
      if (b->next == b->tasks->size()) batches_.erase(batches_.begin());
      return true;
    }
    batches_.erase(batches_.begin());
  }
  return false;
}

void WorkShare::Finish(Batch* batch) {
  std::lock_guard<std::mutex> lock(mu_);
  if (++batch->done == batch->tasks->size()) ended_.notify_all();
}

void WorkShare::Run(const std::vector<std::function<void()>>& tasks) {
  if (tasks.empty()) return;
  Batch batch{&tasks};
  {
    std::lock_guard<std::mutex> lock(mu_);
    batches_.push_back(&batch);
  }
  if (tasks.size() > 1 && posted_) posted_();
  // This thread takes the tasks of its own batch first, then waits for those others took.
  for (;;) {
    size_t index = 0;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (batch.next == tasks.size()) break;
      index = batch.next++;
      if (batch.next == tasks.size()) {
        batches_.erase(std::remove(batches_.begin(), batches_.end(), &batch), batches_.end());
      }
    }
    tasks[index]();
    Finish(&batch);
  }
  std::unique_lock<std::mutex> lock(mu_);
  ended_.wait(lock, [&] { return batch.done == tasks.size(); });
}

bool WorkShare::Help() {
  bool ran = false;
  for (;;) {
    Batch* batch = nullptr;
    size_t index = 0;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (!TakeLocked(&batch, &index)) return ran;
    }
    (*batch->tasks)[index]();
    Finish(batch);
    ran = true;
  }
}

bool WorkShare::HasTasks() const {
  std::lock_guard<std::mutex> lock(mu_);
  for (const Batch* b : batches_) {
    if (b->next < b->tasks->size()) return true;
  }
  return false;
}

}  // namespace sightline
