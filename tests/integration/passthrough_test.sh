#!/usr/bin/env bash
# Runs tests/programs/passthrough_check (linked only against -lblas) in every
# way liboutboard-blas.so gets used and checks that the pass-through symbols
# still compute the right results:
#   (a) plainly, (b) LD_PRELOAD, (c) compat directory (libblas.so.3 and
#   libcblas.so.3 links) first on LD_LIBRARY_PATH, (d) like (c) with
#   OUTBOARD_REAL_BLAS set to the reference BLAS, (e) LD_PRELOAD into /bin/true,
#   plus (f) LD_PRELOAD in front of the reference BLAS, (g) LD_PRELOAD with
#   OUTBOARD_REAL_BLAS, and (h) an unusable OUTBOARD_REAL_BLAS must abort loudly.
# The check program reports (PASSTHROUGH_SHOW_LIB=1) which file ddot_ and
# cblas_ddot bind to and which objects got loaded; that is how (b)-(d) prove
# that our library was really in the path and which real BLAS served it.
# Set PASSTHROUGH_TEST_VALGRIND=1 to also run (b) under valgrind.
set -uo pipefail

if [[ $# -ne 2 ]]; then
    echo "usage: $0 BUILD_LIB_DIR PASSTHROUGH_CHECK_BINARY" >&2
    exit 2
fi
lib=$(readlink -f "$1/liboutboard-blas.so") || lib=
check=$2
[[ -n $lib && -f $lib ]] || { echo "passthrough_test: no liboutboard-blas.so in $1" >&2; exit 2; }
[[ -x $check ]] || { echo "passthrough_test: $check is not an executable" >&2; exit 2; }
case $lib in *[:\ ]*) echo "passthrough_test: LD_PRELOAD cannot take the path $lib" >&2; exit 2 ;; esac

# Under a sanitizer (scripts/sanitize.sh) its runtime must stay the first preloaded library.
preload="${OUTBOARD_SANITIZER_RUNTIME:+$OUTBOARD_SANITIZER_RUNTIME }$lib"

multiarch=/usr/lib/x86_64-linux-gnu
reference=$multiarch/blas/libblas.so.3
[[ -f $reference ]] || { echo "passthrough_test: reference BLAS $reference is missing" >&2; exit 2; }

compat=$(mktemp -d) || exit 2
trap 'rm -rf "$compat"' EXIT
ln -s "$lib" "$compat/libblas.so.3"
ln -s "$lib" "$compat/libcblas.so.3"

failures=0
fail() {
    echo "passthrough_test: FAIL ($case_name): $*" >&2
    failures=$((failures + 1))
}

# run_case NAME OURS WANT_LOADED [VAR=VALUE...]
#   OURS: yes if ddot_/cblas_ddot must bind to our library, no if they must not.
#   WANT_LOADED: a library that must end up loaded (compared by real path), or "".
run_case() {
    case_name=$1
    local ours=$2 want_loaded=$3 out rc sym bound found=no obj before=$failures
    shift 3
    out=$(env "$@" PASSTHROUGH_SHOW_LIB=1 "$check" 2>&1)
    rc=$?
    if [[ $rc -ne 0 ]] || ! grep -Eq '^passthrough_check: [0-9]+ passed, 0 failed$' <<<"$out"; then
        fail "check program exited $rc"
        printf '%s\n' "$out" | sed 's/^/    /' >&2
        return
    fi
    if grep -q 'ERROR: ld.so' <<<"$out"; then fail "the dynamic loader complained:"$'\n'"$out"; fi
    for sym in ddot_ cblas_ddot; do
        bound=$(sed -n "s/^passthrough_check: binding $sym -> //p" <<<"$out")
        bound=$(readlink -f "$bound" 2>/dev/null) || bound=
        if [[ $ours == yes && $bound != "$lib" ]]; then fail "$sym binds to '$bound', not to $lib"; fi
        if [[ $ours == no && $bound == "$lib" ]]; then fail "$sym binds to our library"; fi
    done
    if [[ -n $want_loaded ]]; then
        while read -r obj; do
            [[ $(readlink -f "$obj" 2>/dev/null) == "$(readlink -f "$want_loaded")" ]] && found=yes
        done < <(sed -n 's/^passthrough_check: loaded //p' <<<"$out")
        [[ $found == yes ]] || fail "$want_loaded was never loaded"
    fi
    [[ $failures -eq $before ]] && echo "passthrough_test: ok ($case_name)"
}

run_case "a: plain" no ""
run_case "b: LD_PRELOAD" yes "" LD_PRELOAD="$preload"
# Nothing follows the compat library, so it falls back to the system libblas.so.3.
run_case "c: compat LD_LIBRARY_PATH" yes "$multiarch/libblas.so.3" LD_LIBRARY_PATH="$compat"
run_case "d: compat + OUTBOARD_REAL_BLAS" yes "$reference" \
    LD_LIBRARY_PATH="$compat" OUTBOARD_REAL_BLAS="$reference"

case_name="e: LD_PRELOAD into /bin/true"
out=$(LD_PRELOAD="$preload" /bin/true 2>&1)
rc=$?
if [[ $rc -ne 0 || -n $out ]]; then fail "exit $rc, output: $out"; else echo "passthrough_test: ok ($case_name)"; fi

run_case "f: LD_PRELOAD over the reference BLAS" yes "$reference" \
    LD_PRELOAD="$preload" LD_LIBRARY_PATH="$multiarch/blas"
run_case "g: LD_PRELOAD + OUTBOARD_REAL_BLAS" yes "$reference" \
    LD_PRELOAD="$preload" OUTBOARD_REAL_BLAS="$reference"

# A missing real BLAS cannot be papered over: the first call must abort with the message.
case_name="h: unusable OUTBOARD_REAL_BLAS"
out=$(env LD_LIBRARY_PATH="$compat" OUTBOARD_REAL_BLAS=/nonexistent/libblas.so.3 "$check" 2>&1)
rc=$?
if [[ $rc -eq 0 ]] || ! grep -q '^outboard: the real BLAS library has no symbol .* (set OUTBOARD_REAL_BLAS' <<<"$out"; then
    fail "expected an abort with the missing-symbol message, got exit $rc: $out"
else
    echo "passthrough_test: ok ($case_name)"
fi

if [[ ${PASSTHROUGH_TEST_VALGRIND:-0} == 1 ]]; then
    case_name="b under valgrind"
    if ! out=$(LD_PRELOAD="$preload" valgrind -q --error-exitcode=1 "$check" 2>&1); then
        fail "valgrind reported errors:"$'\n'"$out"
    else
        echo "passthrough_test: ok ($case_name)"
    fi
fi

if [[ $failures -ne 0 ]]; then
    echo "passthrough_test: $failures failure(s)" >&2
    exit 1
fi
echo "passthrough_test: all cases passed"
