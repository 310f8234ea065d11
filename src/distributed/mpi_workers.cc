#include "distributed/mpi_workers.h"

#include <cstdlib>

#ifdef SIGHTLINE_HAVE_MPI
#include <mpi.h>

#include <chrono>
#include <climits>
#include <condition_variable>
#include <map>
#include <mutex>
#include <optional>
#include <thread>

#include "base/byte_codec.h"
#include "base/exceptions.h"
#include "base/threads.h"
#endif

namespace sightline {

bool MpiBuilt() {
#ifdef SIGHTLINE_HAVE_MPI
  return true;
#else
  return false;
#endif
}

bool LaunchedByMpi() {
  // Open MPI's mpirun, MPICH/Hydra and Slurm's srun (PMI or PMIx) set one of these.
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK", "PMI_SIZE"}) {
    if (std::getenv(name) != nullptr) return true;
  }
  return false;
}

#ifndef SIGHTLINE_HAVE_MPI

StatusOr<std::unique_ptr<RankWorkers>> StartMpiWorkers() { return std::unique_ptr<RankWorkers>(); }

#else

namespace {

constexpr int kTagPart = 1;  // [u64 file][u8 ok] then the blob, or [u8 code][string message]
constexpr int kTagDone = 2;  // [i64 files][double seconds]: a process finished its share

double SecondsSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

std::string EncodePart(size_t file, const StatusOr<std::string>& blob) {
  ByteWriter w;
  w.Put<uint64_t>(file);
  w.Put<uint8_t>(blob.ok());
  if (blob.ok()) {
    w.bytes() += *blob;
  } else {
    w.Put<uint8_t>(static_cast<uint8_t>(blob.status().code()));
    w.PutString(blob.status().message());
  }
  return std::move(w.bytes());
}

class MpiWorkers : public RankWorkers {
 public:
  MpiWorkers(int rank, int size) : rank_(rank), size_(size) {}
  ~MpiWorkers() override { MPI_Finalize(); }
  int processes() const override { return size_; }
  bool root() const override { return rank_ == 0; }

  Status Run(size_t n, const ReduceFn& reduce, const MergeFn& merge,
             std::vector<WorkerShare>* shares) override {
    return rank_ == 0 ? RunRoot(n, reduce, merge, shares) : RunOther(n, reduce);
  }

 private:
  // Sends every result, errors included, so process 0 always hears of every file and never waits
  // for one that is not coming.
  Status RunOther(size_t n, const ReduceFn& reduce) {
    const auto t0 = std::chrono::steady_clock::now();
    int64_t files = 0;
    Status first = Status::Ok();
    for (size_t i = static_cast<size_t>(rank_); i < n; i += static_cast<size_t>(size_)) {
      StatusOr<std::string> blob = ReduceOne(reduce, i);
      if (!blob.ok() && first.ok()) first = blob.status();
      RETURN_IF_ERROR(Send(EncodePart(i, blob), kTagPart));
      ++files;
    }
    ByteWriter w;
    w.Put(files);
    w.Put(SecondsSince(t0));
    RETURN_IF_ERROR(Send(w.bytes(), kTagDone));
    return first;
  }

  // A file's exception (out of memory) becomes its error.
  static StatusOr<std::string> ReduceOne(const ReduceFn& reduce, size_t i) {
    try {
      return reduce(i);
    } catch (...) {
      return StatusOfException(std::current_exception());
    }
  }

  Status Send(const std::string& bytes, int tag) {
    if (bytes.size() > static_cast<size_t>(INT_MAX)) {
      return InternalError("MPI: a rank's reduced result is over 2 GiB");
    }
    if (MPI_Send(bytes.data(), static_cast<int>(bytes.size()), MPI_BYTE, 0, tag, MPI_COMM_WORLD) !=
        MPI_SUCCESS) {
      return IoError("MPI_Send to process 0 failed");
    }
    return Status::Ok();
  }

  Status RunRoot(size_t n, const ReduceFn& reduce, const MergeFn& merge,
                 std::vector<WorkerShare>* shares) {
    std::vector<WorkerShare> share(static_cast<size_t>(size_));
    std::mutex mu;
    std::condition_variable cv;
    std::map<size_t, StatusOr<std::string>> ready;
    // Process 0's own share on a second thread; only this (the main) thread calls MPI. Where no
    // thread can be had (ulimit -u), this thread reads its share first, then receives the others'.
    std::vector<std::thread> own;
    struct Joiner {  // an exception on this thread (out of memory) must not meet a joinable thread
      std::vector<std::thread>& threads;
      ~Joiner() {
        for (std::thread& t : threads) {
          if (t.joinable()) t.join();
        }
      }
    } joiner{own};
    auto own_share = [&] {
      const auto t0 = std::chrono::steady_clock::now();
      for (size_t i = 0; i < n; i += static_cast<size_t>(size_)) {
        StatusOr<std::string> blob = ReduceOne(reduce, i);
        std::lock_guard<std::mutex> lock(mu);
        ready.emplace(i, std::move(blob));
        ++share[0].files;
        cv.notify_all();
      }
      std::lock_guard<std::mutex> lock(mu);
      share[0].seconds = SecondsSince(t0);
    };
    if (!TryStartThread(own, own_share)) own_share();
    Status first = Status::Ok();
    size_t next = 0;
    int finished = 0;  // other processes that sent kTagDone
    while (next < n || finished < size_ - 1) {
      std::optional<StatusOr<std::string>> item;
      {
        std::lock_guard<std::mutex> lock(mu);
        auto it = ready.find(next);
        if (it != ready.end()) {
          item.emplace(std::move(it->second));
          ready.erase(it);
        }
      }
      if (item) {  // after the first error, the rest is received but not merged
        if (first.ok()) first = item->ok() ? merge(next, **item) : item->status();
        ++next;
        continue;
      }
      int flag = 0;
      MPI_Status st;
      MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st);
      if (!flag) {
        std::unique_lock<std::mutex> lock(mu);
        cv.wait_for(lock, std::chrono::milliseconds(1), [&] { return ready.count(next) > 0; });
        continue;
      }
      int count = 0;
      MPI_Get_count(&st, MPI_BYTE, &count);
      std::string buf(static_cast<size_t>(count), '\0');
      MPI_Recv(buf.data(), count, MPI_BYTE, st.MPI_SOURCE, st.MPI_TAG, MPI_COMM_WORLD,
               MPI_STATUS_IGNORE);
      ByteReader r(buf);
      if (st.MPI_TAG == kTagDone) {
        WorkerShare& s = share[static_cast<size_t>(st.MPI_SOURCE)];
        s.files = r.Get<int64_t>();
        s.seconds = r.Get<double>();
        ++finished;
        continue;
      }
      const uint64_t file = r.Get<uint64_t>();
      const bool ok = r.Get<uint8_t>() != 0;
      StatusOr<std::string> blob = std::string();
      if (ok) {
        blob = buf.substr(sizeof(uint64_t) + 1);
      } else {
        const auto code = static_cast<StatusCode>(r.Get<uint8_t>());
        blob = Status(code, r.GetString());
      }
      if (!r.ok() || file >= n) {
        blob =
            InternalError("MPI: a malformed message from process " + std::to_string(st.MPI_SOURCE));
      }
      std::lock_guard<std::mutex> lock(mu);
      ready.emplace(static_cast<size_t>(file), std::move(blob));
    }
    for (std::thread& t : own) t.join();  // (the Joiner finds them joined)
    if (shares) *shares = std::move(share);
    return first;
  }

  int rank_, size_;
};

}  // namespace

StatusOr<std::unique_ptr<RankWorkers>> StartMpiWorkers() {
  if (!LaunchedByMpi()) return std::unique_ptr<RankWorkers>();
  int provided = 0;
  if (MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS) {
    return IoError("MPI_Init_thread failed (started by mpirun/srun, but MPI cannot start)");
  }
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size < 2) {
    MPI_Finalize();
    return std::unique_ptr<RankWorkers>();
  }
  return std::unique_ptr<RankWorkers>(std::make_unique<MpiWorkers>(rank, size));
}

#endif

}  // namespace sightline
