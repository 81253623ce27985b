#!/usr/bin/env bash
# Installs what Outboard needs on Debian 12 (only the missing packages), then configures and
# builds it. Usage: scripts/setup-debian.sh [build directory preset, default "default"]
set -euo pipefail
cd "$(dirname "$0")/.."

PACKAGES=(
  build-essential cmake ninja-build pkg-config gfortran git
  libucx-dev ucx-utils                     # transport (and ucx_perftest for the benchmarks)
  libopenblas-dev libblas-dev libblas-test # server CPU backend, reference BLAS and its test programs
  liblapack-dev liblapacke-dev liblapack-test # reference LAPACK (pass-through symbol table), LAPACKE, LAPACK testers
  libblas64-dev liblapack64-dev            # ILP64 BLAS and LAPACK (64-bit INTEGER) for the ILP64 test programs
  libsodium-dev                            # keyed MAC for authentication
  libxxhash-dev                            # content digests of resident operands (issue 36 item 5)
  libfftw3-dev libfftw3-bin python3-pyfftw # FFTW shim: headers and real libraries, fftw-wisdom, pyfftw as a client
  perl ca-certificates                     # fftw_wisdom_bench: FFTW's check.pl, its release sources fetched (curl, below)
  libcli11-dev libspdlog-dev libfmt-dev nlohmann-json3-dev libtomlplusplus-dev
  libgtest-dev clang libclang-rt-14-dev    # tests, and libFuzzer for the fuzz target
  python3 python3-numpy python3-matplotlib # test helpers; numpy as an unmodified client in the demo; plots
  python3-scipy python3-pytest python3-hypothesis # numpy.linalg's and scipy.linalg's own test suites through Outboard
  python3-venv                             # the test that installs numpy and scipy wheels from PyPI
  tcpdump                                  # the encryption test checks that no plaintext crosses loopback TCP
  ocl-icd-opencl-dev opencl-headers        # remote OpenCL: the ICD loader and the Khronos headers (ICD and server)
  pocl-opencl-icd clinfo python3-pyopencl  # a real OpenCL device for the server, and unmodified OpenCL clients
  clpeak                                   # an unmodified OpenCL benchmark as a client (opencl_clpeak)
  libmicrohttpd-dev                        # the server's Prometheus /metrics endpoint
  curl python3-prometheus-client           # tests: scraping /metrics and parsing the text format
  dpkg-dev systemd                         # the .deb (dpkg-shlibdeps); tests: systemd-analyze verify of the unit
  iproute2 iptables libnetfilter-queue-dev # netns_* tests: namespaces, and delay and loss where the kernel has no netem
  iperf3                                   # bench/link/link_rig.sh: the link's TCP yardstick beside Outboard's figures
  r-base-core                              # tests: R's own linear algebra as an unmodified client (r_linalg)
  openmpi-bin slurm-wlm munge              # dcuda launched by mpirun and by srun (a one-node Slurm the test starts)
)

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
cmake --build --preset "${1:-default}"
