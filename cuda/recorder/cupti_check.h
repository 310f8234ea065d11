// CUPTI_CALL: runs a CUPTI call and, when it fails, prints the call text, CUPTI's error string and
// file:line once to stderr. The recorder never aborts the application it runs in.
#pragma once

#include <cupti.h>

#include <cstdio>

namespace sightline::recorder {

inline bool CuptiOk(CUptiResult r, const char* call, const char* file, int line) {
  if (r == CUPTI_SUCCESS) return true;
  const char* msg = nullptr;
  cuptiGetResultString(r, &msg);
  std::fprintf(stderr, "sightline-recorder: %s failed: %s (%s:%d)\n", call, msg ? msg : "?", file,
               line);
  return false;
}

}  // namespace sightline::recorder

#define CUPTI_CALL(call) ::sightline::recorder::CuptiOk((call), #call, __FILE__, __LINE__)
