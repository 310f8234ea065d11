# Sourced by scripts/fuzz.sh and scripts/fuzz_long.sh: the environment and libFuzzer flags every
# fuzz run shares (docs/testing.md, "Throughput").
# Inflated gzip input stays far below the 2 GiB RSS limit: a bomb is then the reader's clear error
# (docs/reliability.md), not an out-of-memory stop of the fuzzer.
export SIGHTLINE_MAX_INPUT_SIZE=256M
# A smaller quarantine, allocation stacks of 8 frames, no fill of new blocks: in a profile of
# fuzz_pipeline (docs/testing.md, "Throughput") the sanitizer's allocator, quarantine and page
# faults took about 15% of the time. Use-after-free within the last 64 MiB freed is still caught.
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:symbolize=1:quarantine_size_mb=64:malloc_context_size=8:max_malloc_fill_size=0
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
# -entropic=0: libFuzzer's entropic schedule updated its feature frequencies on every run, 42% of
# fuzz_pipeline's time (the whole program has many features). With both changes fuzz_pipeline ran
# 1.3 to 2.4 times as many inputs per second (interleaved runs), with the same coverage.
# shellcheck disable=SC2034  # used by the scripts that source this file
FUZZ_FLAGS=(-entropic=0 -timeout=25 -rss_limit_mb=2048 -print_final_stats=1)
