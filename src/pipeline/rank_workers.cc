#include "pipeline/rank_workers.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <optional>
#include <thread>

#include "base/exceptions.h"
#include "base/threads.h"

namespace sightline {
namespace {

double SecondsSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

class ThreadWorkers : public RankWorkers {
 public:
  explicit ThreadWorkers(int threads) : threads_(std::max(1, threads)) {}
  int processes() const override { return 1; }
  bool root() const override { return true; }

  Status Run(size_t n, const ReduceFn& reduce, const MergeFn& merge,
             std::vector<WorkerShare>* shares) override {
    const auto t0 = std::chrono::steady_clock::now();
    const size_t threads = std::min<size_t>(static_cast<size_t>(threads_), n);
    Status first = Status::Ok();
    // A file's exception (out of memory) becomes its error, on whichever thread read it.
    auto reduce_one = [&reduce](size_t i) -> StatusOr<std::string> {
      try {
        return reduce(i);
      } catch (...) {
        return StatusOfException(std::current_exception());
      }
    };
    auto merge_one = [&merge](size_t i, const std::string& blob) -> Status {
      try {
        return merge(i, blob);
      } catch (...) {
        return StatusOfException(std::current_exception());
      }
    };
    // Workers take files in increasing order; the calling thread merges them in that order.
    std::mutex mu;
    std::condition_variable cv;
    std::map<size_t, StatusOr<std::string>> done;
    std::atomic<size_t> next{0};
    std::atomic<bool> stop{false};
    std::vector<std::thread> pool;
    for (size_t t = 0; threads > 1 && t < threads; ++t) {
      const bool started = TryStartThread(pool, [&] {
        for (size_t i; !stop && (i = next.fetch_add(1)) < n;) {
          StatusOr<std::string> blob = reduce_one(i);
          std::lock_guard<std::mutex> lock(mu);
          done.emplace(i, std::move(blob));
          cv.notify_all();
        }
      });
      if (!started) break;  // no more threads to be had (ulimit -u): those started do the work
    }
    if (pool.empty()) {
      // One thread wanted, or none could be started: this thread does it all, in order.
      for (size_t i = 0; i < n && first.ok(); ++i) {
        StatusOr<std::string> blob = reduce_one(i);
        first = blob.ok() ? merge_one(i, *blob) : blob.status();
      }
    } else {
      for (size_t i = 0; i < n && first.ok(); ++i) {
        std::optional<StatusOr<std::string>> blob;
        {
          std::unique_lock<std::mutex> lock(mu);
          cv.wait(lock, [&] { return done.count(i) > 0; });
          auto it = done.find(i);
          blob.emplace(std::move(it->second));
          done.erase(it);
        }
        first = blob->ok() ? merge_one(i, **blob) : blob->status();
      }
      stop = true;  // after an error, the files not yet started are left alone
      for (std::thread& t : pool) t.join();
    }
    if (shares) *shares = {{static_cast<int64_t>(n), SecondsSince(t0)}};
    return first;
  }

 private:
  int threads_;
};

}  // namespace

std::unique_ptr<RankWorkers> MakeThreadWorkers(int threads) {
  return std::make_unique<ThreadWorkers>(threads);
}

}  // namespace sightline
