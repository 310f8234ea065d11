// SortMostlySorted: the sort TraceBuilder uses for its tables' row order and for the API calls by
// correlation id (trace_builder_sort.cc, trace_builder_link.cc); internal to the model stage.
#pragma once

#include <algorithm>
#include <cstddef>
#include <vector>

namespace sightline {

// The ways of SortMostlySorted (below) other than std::sort. With few rows out of place: keeps
// the rows that are in order in place, sorts the `misplaced` others apart and merges them back.
template <typename Key, typename Less>
void SortFewMisplaced(std::vector<Key>& keys, size_t misplaced, const Less& less) {
  const size_t n = keys.size();
  std::vector<Key> rest;
  rest.reserve(misplaced);
  size_t kept = 0;
  for (size_t i = 0; i < n; ++i) {
    if (kept == 0 || !less(keys[i], keys[kept - 1])) {
      keys[kept++] = keys[i];
    } else {
      rest.push_back(keys[i]);
    }
  }
  std::sort(rest.begin(), rest.end(), less);
  // Merged from the back: the kept rows fill keys[0, kept), the free tail is rest's size.
  size_t i = kept, j = rest.size(), out = n;
  while (j > 0) {
    if (i > 0 && less(rest[j - 1], keys[i - 1])) {
      keys[--out] = keys[--i];
    } else {
      keys[--out] = rest[--j];
    }
  }
}

// With few sorted runs: merges them pairwise until one is left.
template <typename Key, typename Less>
void MergeRuns(std::vector<Key>& keys, const Less& less) {
  const size_t n = keys.size();
  std::vector<size_t> bounds = {0};  // run starts, then n
  for (size_t i = 1; i < n; ++i) {
    if (less(keys[i], keys[i - 1])) bounds.push_back(i);
  }
  bounds.push_back(n);
  std::vector<Key> merged(n);
  while (bounds.size() > 2) {
    std::vector<size_t> next = {0};
    for (size_t r = 0; r + 1 < bounds.size(); r += 2) {
      const size_t a = bounds[r], b = bounds[r + 1], c = r + 2 < bounds.size() ? bounds[r + 2] : b;
      std::merge(keys.begin() + a, keys.begin() + b, keys.begin() + b, keys.begin() + c,
                 merged.begin() + a, less);
      next.push_back(c);
    }
    keys.swap(merged);
    bounds.swap(next);
  }
}

// Sorts keys (a strict total order: no two keys equal) that mostly come in order already. Tables
// arrive as a few sorted runs (one per thread or stream, or per profiler flush), or sorted but for
// a few rows out of place (a copy's call recorded before the launch that precedes it), and
// std::sort does not exploit either:
// - few rows out of place: the rows that keep the order are kept in place, the others sorted
//   apart and merged back (one pass, plus a sort of the few);
// - few runs: the runs are merged pairwise (n log runs, sequential);
// - otherwise std::sort.
template <typename Key, typename Less>
void SortMostlySorted(std::vector<Key>& keys, const Less& less) {
  const size_t n = keys.size();
  size_t runs = n > 0 ? 1 : 0, misplaced = 0;
  for (size_t i = 1, last = 0; i < n; ++i) {
    if (less(keys[i], keys[i - 1])) ++runs;
    if (less(keys[i], keys[last])) {
      ++misplaced;
    } else {
      last = i;
    }
  }
  if (misplaced == 0) return;
  if (misplaced <= n / 8) {
    SortFewMisplaced(keys, misplaced, less);
  } else if (runs > n / 16) {
    std::sort(keys.begin(), keys.end(), less);
  } else {
    MergeRuns(keys, less);
  }
}

}  // namespace sightline
