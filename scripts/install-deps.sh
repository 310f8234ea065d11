#!/usr/bin/env bash
# Installs the Debian packages Sightline needs, skipping those already present. Safe to run
# repeatedly; needs root (or sudo) only when a package is missing.
#   scripts/install-deps.sh sample   what building and running the `sightline` binary needs: README
#                                    command 1 (scripts/run-sample.sh); 127 MB of packages on a
#                                    minimal Debian 12
#   scripts/install-deps.sh [all]    also the tests, benchmarks, MPI, clang (sanitizers, fuzzing) and
#                                    chromium: README command 2 (scripts/test.sh), scripts/sanitize.sh
set -euo pipefail
profile=${1:-all}

packages=(
  g++ cmake ninja-build pkg-config  # the compiler (no make: CMake generates for Ninja)
  libsqlite3-dev              # nsys SQLite exports
  libsimdjson-dev             # PyTorch (Kineto) JSON traces
  libdeflate-dev              # gzip'd inputs (whole-file inflation, fast)
  zlib1g-dev                  # gzip'd inputs: the first bytes inflated for recognising the format
  libzstd-dev                 # zstd-compressed inputs (.zst)
  libre2-dev                  # range-name patterns (iterations): linear time, no recursion
  libfmt-dev                  # formatting
  libcli11-dev                # command line
)
case "$profile" in
  sample) ;;
  all)
    packages+=(
      build-essential ccache
      sqlite3                     # the tests' and benchmarks' SQLite command line
      libgtest-dev libgmock-dev   # tests
      libbenchmark-dev            # bench/
      python3                     # sample and benchmark generators
      libopenmpi-dev openmpi-bin  # optional MPI path of analyze (mpirun -n K sightline analyze DIR)
      clang libclang-rt-14-dev    # fuzz targets (libFuzzer, ASan, UBSan), scripts/fuzz.sh
    )
    # Headless chromium for the HTML reports' browser tests (HtmlReporterBrowser.*: the report and
    # the TensorRT engine graph load and render without script errors). About 120 MB to download and
    # 360 MB installed, under a minute; the tests skip when it is absent. SIGHTLINE_NO_BROWSER=1
    # leaves it out.
    if [ "${SIGHTLINE_NO_BROWSER:-0}" != 1 ]; then packages+=(chromium); fi
    ;;
  *)
    echo "install-deps: unknown profile '$profile': use 'sample' (building and running the sightline" \
      "binary) or 'all' (also the tests, sanitizers and benchmarks)" >&2
    exit 2
    ;;
esac

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
echo "install-deps: installing ${missing[*]}" >&2
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
# --force-unsafe-io: dpkg writes the files without an fsync each (as Debian's container images do);
# it took the sample profile's install from 365 to 197 s of wall time on a loaded 2-core machine
# (docs/evidence/first-command/). A power cut during the install may then leave a package to reinstall.
$SUDO apt-get install -y -qq --no-install-recommends -o Dpkg::Options::=--force-unsafe-io \
  "${missing[@]}" >/dev/null
