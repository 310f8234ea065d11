// Whether the tests run under a sanitizer: an address-space limit (ulimit -v) leaves no room for
// AddressSanitizer's shadow memory, and the sanitizers install their own SIGSEGV and SIGBUS
// handlers, which Sightline's (base/output_temps.h, base/mapped_reads.h) then leave alone.
#pragma once

namespace sightline::testing {

#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || \
    __has_feature(memory_sanitizer)
#define SIGHTLINE_TESTING_SANITIZED 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define SIGHTLINE_TESTING_SANITIZED 1
#endif

#ifdef SIGHTLINE_TESTING_SANITIZED
inline constexpr bool kUnderSanitizer = true;
#else
inline constexpr bool kUnderSanitizer = false;
#endif

}  // namespace sightline::testing
