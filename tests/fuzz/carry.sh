#!/usr/bin/env bash
# Packs the fuzz targets of build-fuzz (tests/fuzz/run_short.sh builds them) with the shared
# libraries they need beyond the C runtime, and their seed corpora, into DIR (default .fuzz-carry),
# so that a longer run can use a machine with more cores than this one (such as the GPU machine of
# bench/gpu, with DIR carried). There, for example 16 workers for 9 minutes:
#   xz -d DIR/*.xz DIR/deps/*.xz; export LD_LIBRARY_PATH=$PWD/DIR/deps
#   DIR/fuzz_session -fork=16 -entropic=0 -max_total_time=540 -max_len=4096 -timeout=60 \
#     -rss_limit_mb=4096 -print_funcs=0 -artifact_prefix=FINDINGS/ CORPUS_COPY
# libFuzzer's fork mode prints "#N: cov: ..." lines whose N counts the executions of every worker;
# -entropic=0 made about 1.5 times as many (bench/results/h200/fuzz/README.md). DIR/grown, a
# corpus that earlier runs grew (bring their new files back into it), is kept when DIR is packed
# again; it is the CORPUS_COPY to use.
set -euo pipefail
cd "$(dirname "$0")/../.."
DIR=${1:-.fuzz-carry}
BUILD=${OUTBOARD_FUZZ_BUILD_DIR:-build-fuzz}
if [ -d "$DIR/grown" ]; then
  KEEP=$(mktemp -d)
  mv "$DIR/grown" "$KEEP/"
fi
rm -rf "$DIR"
mkdir -p "$DIR/deps"
if [ -n "${KEEP:-}" ]; then
  mv "$KEEP/grown" "$DIR/"
  rmdir "$KEEP"
fi
for t in fuzz_session fuzz_request; do
  install -m 755 "$BUILD/bin/$t" "$DIR/"
  strip --strip-debug "$DIR/$t"   # symbols stay, for the sanitizer's reports
done
ldd "$DIR/fuzz_session" "$DIR/fuzz_request" | awk '/=> \// {print $3}' | sort -u | while read -r lib; do
  case "$(basename "$lib")" in
    libc.so*|libm.so*|libstdc++.so*|libgcc_s.so*|libdl.so*|libpthread.so*|librt.so*) ;;
    *) cp -L "$lib" "$DIR/deps/" ;;
  esac
done
cp -R tests/fuzz/session_corpus tests/fuzz/corpus "$DIR/"
xz -T2 -6 -f "$DIR"/fuzz_session "$DIR"/fuzz_request "$DIR/deps/libopenblas.so.0"
du -sh "$DIR"
