#!/usr/bin/env bash
# Installs the Debian packages Sightline needs, skipping those already present.
# Used by both README commands; safe to run repeatedly. Needs root (or sudo) only when a package is missing.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config ccache
  libsqlite3-dev sqlite3      # nsys SQLite exports
  libsimdjson-dev             # PyTorch (Kineto) JSON traces
  libdeflate-dev              # gzip'd inputs (whole-file inflation, fast)
  zlib1g-dev                  # gzip'd inputs: the first bytes inflated for recognising the format
  libzstd-dev                 # zstd-compressed inputs (.zst)
  libre2-dev                  # range-name patterns (iterations): linear time, no recursion
  libfmt-dev                  # formatting
  libcli11-dev                # command line
  libgtest-dev libgmock-dev   # tests
  libbenchmark-dev            # bench/
  python3                     # sample and benchmark generators
  libopenmpi-dev openmpi-bin  # optional MPI path of analyze (mpirun -n K sightline analyze DIR)
  clang libclang-rt-14-dev    # fuzz targets (libFuzzer, ASan, UBSan), scripts/fuzz.sh
)
# Headless chromium for the HTML reports' browser tests (HtmlReporterBrowser.*: the report and the
# TensorRT engine graph load and render without script errors). About 120 MB to download and
# 360 MB installed, under a minute; the tests skip when it is absent. SIGHTLINE_NO_BROWSER=1 leaves
# it out.
if [ "${SIGHTLINE_NO_BROWSER:-0}" != 1 ]; then packages+=(chromium); fi

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
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
