#include "importers/recorder/run_processes.h"

#include <fmt/format.h>
#include <simdjson.h>

#include <algorithm>
#include <filesystem>
#include <system_error>

#include "base/file_io.h"
#include "base/input_data.h"
#include "base/strings.h"

namespace sightline {
namespace {

constexpr char kSuffix[] = ".processes.json";
constexpr int kMaxCandidates = 64;  // *.processes.json files looked at in one folder
constexpr int64_t kMaxCandidateBytes = 256ll << 20;
// A pid, as Linux allows them (pid_max is at most 2^22).
constexpr int64_t kMaxPid = int64_t{1} << 22;

Status Bad(std::string_view what) {
  return InvalidInputError(fmt::format("not a readable processes document: {}", what));
}

// A time of the document on the trace's clock; refused when it lies before the run or far after.
StatusOr<TimeNs> Time(int64_t mono, int64_t run_start, int64_t shift) {
  // /proc's start times are in clock ticks (10 ms): a process may seem to start a tick early.
  constexpr int64_t kSlack = 1'000'000'000;
  if (mono < run_start - kSlack || mono > run_start + (int64_t{1} << 50)) {
    return Bad(fmt::format("time {} ns lies outside the run that began at {} ns", mono, run_start));
  }
  return mono + shift;
}

}  // namespace

StatusOr<std::vector<RunProcess>> ParseRunProcesses(std::string_view json,
                                                    int64_t monotonic_to_trace_ns,
                                                    RunOfTrace* run) {
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  if (parser.parse(json.data(), json.size()).get(doc) != simdjson::SUCCESS) {
    return Bad("not JSON");
  }
  int64_t version = 0, run_start = 0, run_end = 0;
  if (doc["sightline_processes"].get(version) || version != 1) {
    return Bad("no \"sightline_processes\": 1 (written by a newer sightline, or not ours)");
  }
  if (doc["start_ns"].get(run_start) || doc["end_ns"].get(run_end) || run_end < run_start) {
    return Bad("the run's start_ns and end_ns are missing or out of order");
  }
  simdjson::dom::array list;
  if (doc["processes"].get(list)) return Bad("no \"processes\" array");
  std::vector<RunProcess> out;
  for (simdjson::dom::element e : list) {
    RunProcess p;
    int64_t pid = 0, ppid = 0, start = 0, user = 0, system = 0, threads = 0;
    std::string_view name, command;
    if (e["pid"].get(pid) || e["ppid"].get(ppid) || e["start_ns"].get(start) ||
        e["cpu_user_ns"].get(user) || e["cpu_system_ns"].get(system) ||
        e["max_threads"].get(threads) || e["name"].get(name) || e["command"].get(command)) {
      return Bad("a process lacks pid, ppid, name, command, start_ns or its CPU times");
    }
    if (pid <= 0 || pid > kMaxPid || ppid < 0 || ppid > kMaxPid || user < 0 || system < 0 ||
        threads < 0 || user > (int64_t{1} << 60) || system > (int64_t{1} << 60)) {
      return Bad(fmt::format("process {}: a pid or CPU time out of range", pid));
    }
    p.pid = static_cast<int32_t>(pid);
    p.ppid = static_cast<int32_t>(ppid);
    p.name = std::string(name);
    p.command = std::string(command);
    ASSIGN_OR_RETURN(p.start_ns, Time(start, run_start, monotonic_to_trace_ns));
    int64_t end = 0;
    if (e["end_ns"].get(end) == simdjson::SUCCESS) {
      p.ended = true;
    } else {
      end = run_end;
    }
    ASSIGN_OR_RETURN(p.end_ns, Time(std::max(end, start), run_start, monotonic_to_trace_ns));
    p.cpu_ns = user + system;
    p.max_threads = threads;
    std::string_view recording;
    if (e["recording"].get(recording) == simdjson::SUCCESS) p.recording = std::string(recording);
    simdjson::dom::array samples;
    if (e["cpu_samples"].get(samples) == simdjson::SUCCESS) {
      for (simdjson::dom::element s : samples) {
        int64_t t = 0, used = 0;
        simdjson::dom::array pair;
        if (s.get(pair) || pair.size() != 2 || pair.at(0).get(t) || pair.at(1).get(used) ||
            used < 0 || used > (int64_t{1} << 50)) {
          return Bad(fmt::format("process {}: a CPU sample is not [time, ns used]", pid));
        }
        ASSIGN_OR_RETURN(TimeNs at, Time(t, run_start, monotonic_to_trace_ns));
        if (!p.cpu_end_ns.empty() && at < p.cpu_end_ns.back()) {
          return Bad(fmt::format("process {}: CPU samples out of time order", pid));
        }
        p.cpu_end_ns.push_back(at);
        p.cpu_used_ns.push_back(used);
      }
    }
    // What the samples did not see: a process that ended between two samples (a detokenizer that
    // worked to its last moment) has its last CPU time only in its total. It fell between the
    // last sample and the end.
    DurationNs sampled = 0;
    for (DurationNs used : p.cpu_used_ns) sampled += used;
    const TimeNs last = p.cpu_end_ns.empty() ? p.start_ns : p.cpu_end_ns.back();
    if (p.cpu_ns > sampled && p.end_ns > last) {
      p.cpu_end_ns.push_back(p.end_ns);
      p.cpu_used_ns.push_back(p.cpu_ns - sampled);
    } else if (p.cpu_ns > sampled && !p.cpu_used_ns.empty()) {
      p.cpu_used_ns.back() += p.cpu_ns - sampled;  // the last sample is at its end
    }
    out.push_back(std::move(p));
  }
  std::stable_sort(out.begin(), out.end(), [](const RunProcess& a, const RunProcess& b) {
    return a.start_ns < b.start_ns;
  });
  if (run != nullptr) {
    run->start_monotonic_ns = run_start;
    run->end_monotonic_ns = run_end;
    run->root_pid = out.empty() ? -1 : out.front().pid;
  }
  return out;
}

namespace {

// Whether the document at `path` names the recording `self` as a process's recording; the
// processes when it does. A document that mentions it but cannot be read is `unreadable`.
StatusOr<std::vector<RunProcess>> NamingDocument(const std::filesystem::path& path,
                                                 const std::string& self,
                                                 int64_t monotonic_to_trace_ns, RunOfTrace* run,
                                                 bool* names) {
  *names = false;
  std::error_code ec;
  const std::string name = path.filename().string();
  if (!EndsWith(name, kSuffix) || !std::filesystem::is_regular_file(path, ec)) {
    return std::vector<RunProcess>{};
  }
  if (std::filesystem::file_size(path, ec) > static_cast<uintmax_t>(kMaxCandidateBytes)) {
    return std::vector<RunProcess>{};
  }
  StatusOr<std::string> text = ReadFileToString(path.string());
  // Cheap test first: only a document that names this recording is parsed.
  if (!text.ok() || text->find(self) == std::string::npos) return std::vector<RunProcess>{};
  ASSIGN_OR_RETURN(std::vector<RunProcess> procs,
                   ParseRunProcesses(*text, monotonic_to_trace_ns, run));
  *names = std::any_of(procs.begin(), procs.end(), [&](const RunProcess& p) {
    return !p.recording.empty() && FileNameOf(p.recording) == self;
  });
  return procs;
}

}  // namespace

std::vector<RunProcess> FindRunProcesses(const std::string& recording_path,
                                         int64_t monotonic_to_trace_ns, Diagnostics& diagnostics,
                                         RunOfTrace* run) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path dir = fs::path(recording_path).parent_path();
  if (dir.empty()) dir = ".";
  // A recording compressed for keeping (run.slrec.gz) is still the run.slrec its tree names.
  const std::string self(WithoutCompressionSuffix(FileNameOf(recording_path)));
  int looked = 0;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (!EndsWith(name, kSuffix)) continue;
    if (++looked > kMaxCandidates) break;
    RunOfTrace found;
    bool names = false;
    StatusOr<std::vector<RunProcess>> procs =
        NamingDocument(it->path(), self, monotonic_to_trace_ns, &found, &names);
    if (!procs.ok()) {
      diagnostics.Add(DiagCode::kRecorderRunProcessesUnreadable, 1,
                      fmt::format("{}: {}", name, procs.status().message()));
      continue;
    }
    if (!names) continue;
    if (run != nullptr) {
      run->document = it->path().string();
      run->start_monotonic_ns = found.start_monotonic_ns;
      run->end_monotonic_ns = found.end_monotonic_ns;
      run->root_pid = found.root_pid;
    }
    return std::move(*procs);
  }
  return {};
}

std::string ProcessTreeOf(const std::string& recording_path,
                          const std::vector<std::string>& candidates) {
  namespace fs = std::filesystem;
  const std::string self(FileNameOf(recording_path));
  std::error_code ec;
  const fs::path dir = fs::path(recording_path).parent_path();
  for (const std::string& c : candidates) {
    if (!fs::equivalent(fs::path(c).parent_path().empty() ? "." : fs::path(c).parent_path(),
                        dir.empty() ? "." : dir, ec)) {
      continue;
    }
    bool names = false;
    StatusOr<std::vector<RunProcess>> procs = NamingDocument(c, self, 0, nullptr, &names);
    if (procs.ok() && names) return c;
  }
  return "";
}

}  // namespace sightline
