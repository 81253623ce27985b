#!/usr/bin/env bash
# Installs what Outboard needs on Debian 12 (only the missing packages), then configures and
# builds it.
#   scripts/setup-debian.sh [--demo] [build directory preset, default "default"]
#   --demo: only what the demo needs (scripts/demo.sh): the packages that build Outboard, and only
#   the targets the demo runs. A later run without it (scripts/test.sh) adds the test suite's
#   packages and builds the rest in the same build directory.
set -euo pipefail
cd "$(dirname "$0")/.."
DEMO=0
[ "${1:-}" = --demo ] && { DEMO=1; shift; }

# What configuring and building the whole tree needs (the demo builds a part of it).
BUILD_PACKAGES=(
  build-essential cmake ninja-build pkg-config gfortran git
  libucx-dev                               # transport
  libopenblas-dev libblas-dev              # server CPU backend, reference BLAS
  liblapack-dev liblapacke-dev             # reference LAPACK (pass-through symbol table), LAPACKE
  libblas64-dev liblapack64-dev            # ILP64 BLAS and LAPACK (64-bit INTEGER) for the ILP64 test programs
  libsodium-dev                            # keyed MAC for authentication
  libxxhash-dev                            # content digests of resident operands (issue 36 item 5)
  libfftw3-dev                             # FFTW shim: headers and real libraries
  libcli11-dev libspdlog-dev libfmt-dev nlohmann-json3-dev libtomlplusplus-dev
  libgtest-dev                             # the tests' framework (configured with the tree)
  python3 python3-numpy                    # build helpers; numpy as an unmodified client in the demo
  ocl-icd-opencl-dev opencl-headers        # remote OpenCL: the ICD loader and the Khronos headers (ICD and server)
  libmicrohttpd-dev                        # the server's Prometheus /metrics endpoint
  libnetfilter-queue-dev                   # netns_* tests: a helper that delays and drops packets
)
# What only the tests and benchmarks use.
TEST_PACKAGES=(
  ucx-utils                                # ucx_perftest for the benchmarks
  libblas-test liblapack-test              # the reference BLAS and LAPACK test programs
  libfftw3-bin python3-pyfftw              # fftw-wisdom, pyfftw as a client
  perl ca-certificates                     # fftw_wisdom_bench: FFTW's check.pl, its release sources fetched (curl, below)
  clang libclang-rt-14-dev                 # libFuzzer for the fuzz target
  python3-matplotlib                       # plots
  python3-scipy python3-pytest python3-hypothesis # numpy.linalg's and scipy.linalg's own test suites through Outboard
  python3-venv                             # the test that installs numpy and scipy wheels from PyPI
  tcpdump                                  # the encryption test checks that no plaintext crosses loopback TCP
  pocl-opencl-icd clinfo python3-pyopencl  # a real OpenCL device for the server, and unmodified OpenCL clients
  clpeak                                   # an unmodified OpenCL benchmark as a client (opencl_clpeak)
  curl python3-prometheus-client           # tests: scraping /metrics and parsing the text format
  dpkg-dev systemd                         # the .deb (dpkg-shlibdeps); tests: systemd-analyze verify of the unit
  iproute2 iptables                        # netns_* tests: namespaces, and delay and loss where the kernel has no netem
  iperf3                                   # bench/link/link_rig.sh: the link's TCP yardstick beside Outboard's figures
  r-base-core                              # tests: R's own linear algebra as an unmodified client (r_linalg)
  openmpi-bin slurm-wlm munge              # dcuda launched by mpirun and by srun (a one-node Slurm the test starts)
)
PACKAGES=("${BUILD_PACKAGES[@]}")
[ "$DEMO" = 1 ] || PACKAGES+=("${TEST_PACKAGES[@]}")

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "outboard setup: installing ${missing[*]}"
  SUDO=""
  [ "$(id -u)" = 0 ] || SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

cmake --preset "${1:-default}" >/dev/null
if [ "$DEMO" = 1 ]; then
  # The server and `outboard run` (with the libraries it preloads), and the demo's programs.
  cmake --build --preset "${1:-default}" --target outboard blas_demo fft_demo
else
  cmake --build --preset "${1:-default}"
fi
