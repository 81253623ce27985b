#!/usr/bin/env bash
# Packs this build for the GPU machine, which lacks UCX's headers, OpenBLAS and this Debian's
# library versions: the binaries (stripped) and the shared libraries they need beyond the C/C++
# runtime go to DIR (default .gpu-carry, which .gitignore names). There:
#   export LD_LIBRARY_PATH=$PWD/DIR/deps; DIR/bin/outboard ...
set -euo pipefail
cd "$(dirname "$0")/../.."
DIR=${1:-.gpu-carry}
BUILD=${BUILD:-build}
rm -rf "$DIR"
mkdir -p "$DIR"/{bin,lib,deps,share/outboard}
install -m 755 "$BUILD/bin/outboard" "$BUILD/bin/blas_demo" "$BUILD/bin/lapack_demo" "$BUILD/bin/fft_demo" "$BUILD/bin/gpu_tests" "$BUILD/bin/cl_multi" \
  "$BUILD/bin/cl_bench" "$BUILD/bin/outboard-soak-client" "$BUILD/bin/choice_sweep" "$BUILD/bin/resident_bench" "$DIR/bin/"
# clpeak (Debian's), to run on the GPU machine's OpenCL directly and through Outboard.
[ -x /usr/bin/clpeak ] && install -m 755 /usr/bin/clpeak "$DIR/bin/"
cp -a "$BUILD"/lib/liboutboard-*.so* "$DIR/lib/"
# dcuda: its library, GPU tests, benchmark and probes (built where CUDA is), and the OpenCL wait probe.
for f in dcuda_gpu_tests dcuda_link_gpu_tests dcuda_proxy_gpu_check dcuda_bench proxy_hops ipc_probe peer_probe same_gpu_floor same_gpu_breakdown small_write_probe cl_wait_probe cl_write_storm ucx_startup gpu_reset_probe mg_factor_probe; do [ -x "$BUILD/bin/$f" ] && install -m 755 "$BUILD/bin/$f" "$DIR/bin/"; done
cp -a "$BUILD"/lib/libdcuda.so* "$DIR/lib/" 2>/dev/null || true
[ -e "$BUILD/lib/outboard" ] && cp -a "$BUILD/lib/outboard" "$DIR/lib/"
# The throughput-scaling client (bench/gpu/scaling.sh).
[ -x "$BUILD/bin/scale_client" ] && install -m 755 "$BUILD/bin/scale_client" "$DIR/bin/"
# dcuda's case studies (bench/gpu/dcuda_cases.sh runs them).
for f in dcuda_stencil dcuda_particles dcuda_spmv dcuda_power dcuda_reference_ring; do [ -x "$BUILD/bin/$f" ] && install -m 755 "$BUILD/bin/$f" "$DIR/bin/"; done
cp "$BUILD/share/outboard/outboard_plot.py" "$DIR/share/outboard/"
find "$DIR/bin" "$DIR/lib" -type f -name '*' -exec strip --strip-debug {} + 2>/dev/null || true
# Libraries beyond glibc and the C++ runtime, which the GPU machine has in newer versions.
for f in "$DIR/bin/outboard" "$DIR/bin/gpu_tests" "$DIR/bin/fft_demo" "$BUILD/bin/fftw_check" "$DIR"/lib/liboutboard-{blas,lapack,fftw3,client,opencl}.so.*.*; do
  ldd "$f" | awk '/=> \// {print $3}'
done | sort -u | while read -r lib; do
  case "$(basename "$lib")" in
    libc.so*|libm.so*|libstdc++.so*|libgcc_s.so*|libdl.so*|libpthread.so*|librt.so*) ;;
    *) cp -L "$lib" "$DIR/deps/" ;;
  esac
done
# UCX loads its transports from ucx/ beside libucs.
mkdir -p "$DIR/deps/ucx"
cp -L /usr/lib/x86_64-linux-gnu/ucx/libuct_*.so.0 /usr/lib/x86_64-linux-gnu/ucx/libucm_*.so.0 "$DIR/deps/ucx/" 2>/dev/null || true
# The reference BLAS test programs (and the reference BLAS they link), to run through a GPU server.
mkdir -p "$DIR/testers"
cp /usr/lib/x86_64-linux-gnu/blas/xblat3? /usr/lib/x86_64-linux-gnu/blas/?blat3.in "$DIR/testers/"
cp -L /usr/lib/x86_64-linux-gnu/blas/libblas.so.3 "$DIR/deps/"
cp "$BUILD/bin/level3_check" "$BUILD/bin/lapack_check" "$BUILD/bin/fftw_check" "$DIR/testers/"
# OpenBLAS under the names liblapack.so.3 and libblas.so.3, for local baselines of programs linked
# with -llapack/-lblas (the GPU machine's own LAPACK is the slow reference one).
mkdir -p "$DIR/openblas-as-lapack"
ln -sf ../deps/libopenblas.so.0 "$DIR/openblas-as-lapack/liblapack.so.3"
ln -sf ../deps/libopenblas.so.0 "$DIR/openblas-as-lapack/libblas.so.3"
# iproute2 (ip, tc) and ucx_perftest, which the GPU machine lacks: the network rig's namespaces and
# shaping, and UCX's own figures beside ours (bench/gpu/netns_dcuda.sh). Their libraries to iproute/.
mkdir -p "$DIR/iproute"
install -m 755 /usr/bin/ip /usr/sbin/tc "$DIR/iproute/"
[ -x /usr/bin/ucx_perftest ] && install -m 755 /usr/bin/ucx_perftest /usr/bin/ucx_info "$DIR/bin/"
# iperf3, the link rig's TCP yardstick (bench/link/link_rig.sh --carry), with its libraries there
# too, with PACK_IPERF3=1 only: its libcrypto (4.7 MB) would take the carry with the LAPACK testers
# past the device tool's 64 MiB.
IPERF3=""
[ "${PACK_IPERF3:-0}" = 1 ] && IPERF3=$(command -v iperf3 || true)
[ -n "$IPERF3" ] && install -m 755 "$IPERF3" "$DIR/iproute/"
ldd /usr/bin/ip /usr/sbin/tc $IPERF3 | awk '/=> \// {print $3}' | sort -u | while read -r lib; do
  case "$(basename "$lib")" in libc.so*|libm.so*) ;; *) cp -L "$lib" "$DIR/iproute/" ;; esac
done
# perf, which the GPU machine lacks (profiles: bench/gpu/cl_server_profile.sh), with its libraries,
# compressed (28 MB, 7 as xz), with PACK_PERF=1 only; unpack.sh restores it to perf/.
if [ "${PACK_PERF:-0}" = 1 ]; then
  PERF=$(mktemp -d)/perf && mkdir -p "$PERF/lib" && install -m 755 /usr/bin/perf "$PERF/"
  ldd /usr/bin/perf | awk '/=> \// {print $3}' | while read -r lib; do
    case "$(basename "$lib")" in libc.so*|libm.so*|libstdc++*|libgcc_s*) ;; *) cp -L "$lib" "$PERF/lib/" ;; esac
  done
  tar -C "$(dirname "$PERF")" -cJf "$DIR/perf.tar.xz" perf
fi
# The device tool carries at most 64 MiB with the tree: OpenBLAS (36 MB) travels compressed and
# unpack.sh (run by steps.sh, and by the scripts that do not source it) restores it there.
xz -T2 -6 -f "$DIR/deps/libopenblas.so.0"
cat >"$DIR/unpack.sh" <<'UNPACK'
#!/usr/bin/env bash
# Restores what pack.sh compressed (once).
cd "$(dirname "$0")" && { [ ! -e perf.tar.xz ] || [ -e perf ] || tar -xJf perf.tar.xz; }
cd deps && for f in *.xz; do [ -e "$f" ] && [ ! -e "${f%.xz}" ] && xz -dk "$f"; done; true
UNPACK
chmod +x "$DIR/unpack.sh"
du -sh "$DIR"
