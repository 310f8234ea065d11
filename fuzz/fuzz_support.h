// Shared by the libFuzzer targets in fuzz/ (docs/testing.md): readers that take a path get the
// input written to a file of this process first.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace sightline::fuzz {

// Writes the bytes to a file of this process (one per `suffix`, rewritten by each call, removed at
// exit) and returns its path. Aborts when the file cannot be written: a fuzzer that silently reads
// nothing would report no crash and test nothing.
std::string WriteInputFile(std::string_view bytes, std::string_view suffix);

// The nsys importer reads a small export on the calling thread; one input in four is read with
// its worker threads instead (SIGHTLINE_NSYS_THREADS), so that a corrupt page met by a worker
// is fuzzed too. Chosen from a byte of the input, so that a crash reproduces.
void ChooseNsysThreads(const uint8_t* data, size_t size);

inline std::string_view AsView(const uint8_t* data, size_t size) {
  return std::string_view(reinterpret_cast<const char*>(data), size);
}

}  // namespace sightline::fuzz
