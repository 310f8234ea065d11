#include "fuzz_support.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <system_error>

namespace sightline::fuzz {
namespace {

// The files written so far, removed when the process exits normally.
std::map<std::string, std::string>& Files() {
  static auto* files = new std::map<std::string, std::string>();
  return *files;
}

void RemoveFiles() {
  for (const auto& [suffix, path] : Files()) {
    std::error_code ec;
    std::filesystem::remove(path, ec);
  }
}

std::string TempDir() {
  // /dev/shm when there is one: the fuzzers write a file per execution.
  std::error_code ec;
  if (std::filesystem::is_directory("/dev/shm", ec)) return "/dev/shm";
  return std::filesystem::temp_directory_path(ec).string();
}

}  // namespace

std::string WriteInputFile(std::string_view bytes, std::string_view suffix) {
  std::map<std::string, std::string>& files = Files();
  auto it = files.find(std::string(suffix));
  if (it == files.end()) {
    if (files.empty()) std::atexit(&RemoveFiles);
    const std::string path = TempDir() + "/sightline_fuzz_" + std::to_string(getpid()) + "_" +
                             std::to_string(files.size()) + std::string(suffix);
    it = files.emplace(std::string(suffix), path).first;
  }
  std::FILE* f = std::fopen(it->second.c_str(), "wb");
  if (f == nullptr) {
    std::perror(it->second.c_str());
    std::abort();
  }
  const bool written =
      bytes.empty() || std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size();
  if (std::fclose(f) != 0 || !written) {
    std::perror(it->second.c_str());
    std::abort();
  }
  return it->second;
}

void ChooseNsysThreads(const uint8_t* data, size_t size) {
  const bool threads = size > 0 && (data[size / 2] & 3) == 0;
  setenv("SIGHTLINE_NSYS_THREADS", threads ? "1" : "0", 1);
}

}  // namespace sightline::fuzz
