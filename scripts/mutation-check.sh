#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Mutation check: does the test meant to cover a feature fail when the feature is broken?
#
# usage: scripts/mutation-check.sh [NAME...]
#        scripts/mutation-check.sh --check   (only: does every patch still apply to the working
#                                             tree? builds and runs nothing; test docs.mutations)
#
# Each test/mutations/NAME.patch is a one-line change to the tree (src/, wrappers/, a generated
# page) that switches one feature off or breaks it the way a plausible regression would; its
# header names the feature, the mutation and, on a line "# tests: REGEX...", the ctest tests
# meant to catch it (each REGEX is one `ctest -R`). Without NAME every patch is checked. The script
#   1. builds HEAD in a temporary git worktree (or in MUTATION_WORKTREE, a clean worktree of
#      HEAD, reused with its build directory MUTATION_WORKTREE/build) and runs every named test
#      there once: each must pass unmutated, so that a failure later is the mutation's doing;
#   2. for each patch: applies it, rebuilds the build directory incrementally, runs its tests,
#      reverts it, and reports "caught" when at least one of them fails (with the first FAIL
#      line, or the first line matching the optional header "# expect: REGEX", the check meant
#      to fire), "UNCLEAR" when they fail without that line (a timing check on a loaded host,
#      say), "MISSED" when all pass, "BROKEN" when the mutant does not build, "STALE" when the
#      patch no longer applies.
# Exit status: 0 every mutation caught, 1 any other outcome, 2 the unmutated tests
# failed (run it again on a quieter host).
# Environment: MUTATION_WORKTREE (see above), MUTATION_DIR (where the patches are, default
# test/mutations), MUTATION_JOBS (build jobs, default 2),
# MUTATION_LOGS (where each test run's output is kept, default BUILD/mutation-logs).
# Needs root for bounded.np3.stray_traffic_* (a skipped test counts as a failed baseline).
set -euo pipefail

ROOT=$(git -C "$(dirname "$0")" rev-parse --show-toplevel)
MUT_DIR=${MUTATION_DIR:-$ROOT/test/mutations}
JOBS=${MUTATION_JOBS:-2}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

# A patch goes stale when the lines it changes move on; the full check reports that only when it
# is run (an hour), so the quick test catches it at the commit that makes it stale.
if [ "${1:-}" = --check ]; then
    stale=0
    for p in "$MUT_DIR"/*.patch; do
        if ! out=$(git -C "$ROOT" apply --check "$p" 2>&1); then
            echo "STALE $(basename "$p"): $out" | head -3
            stale=1
        fi
    done
    [ $stale = 0 ] && echo "every patch in $MUT_DIR applies" ||
        echo "remake each STALE patch: make its change again, then git diff > the patch (keep its # lines)"
    exit $stale
fi

names=("$@")
if [ ${#names[@]} -eq 0 ]; then
    for p in "$MUT_DIR"/*.patch; do names+=("$(basename "$p" .patch)"); done
fi
for n in "${names[@]}"; do
    [ -f "$MUT_DIR/$n.patch" ] || { echo "no such mutation: $MUT_DIR/$n.patch" >&2; exit 2; }
done
tests_of() { sed -n 's/^# tests: //p' "$MUT_DIR/$1.patch"; }
header() { sed -n "s/^# $2: //p" "$MUT_DIR/$1.patch"; }

if [ -n "${MUTATION_WORKTREE:-}" ]; then
    WT=$(cd "$MUTATION_WORKTREE" && pwd)
    [ "$(git -C "$WT" rev-parse --absolute-git-dir)" != "$(git -C "$WT" rev-parse --path-format=absolute --git-common-dir)" ] ||
        { echo "$WT is a main checkout: give a worktree made with git worktree add" >&2; exit 2; }
    git -C "$WT" diff --quiet HEAD || { echo "$WT has uncommitted changes" >&2; exit 2; }
    trap 'git -C "$WT" checkout -q -- .' EXIT  # clean before, so clean after
else
    TMP=$(mktemp -d)
    WT=$TMP/tree
    git -C "$ROOT" worktree add --detach -q "$WT" HEAD
    trap 'git -C "$ROOT" worktree remove --force "$WT"; rm -rf "$TMP"' EXIT
fi
BUILD=$WT/build
LOGS=${MUTATION_LOGS:-$BUILD/mutation-logs}
mkdir -p "$LOGS"

build() {
    [ -f "$BUILD/CMakeCache.txt" ] ||
        cmake -S "$WT" -B "$BUILD" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DOPTIREDUCE_WERROR=ON >"$LOGS/$1.build.log" 2>&1
    cmake --build "$BUILD" -j"$JOBS" >>"$LOGS/$1.build.log" 2>&1
}
# run_tests LABEL REGEX...: runs each regex's tests (one at a time) and prints a line per test:
# its outcome (Passed, Failed, Timeout, Skipped, ...) and its name.
run_tests() {
    local label=$1 re log
    shift
    for re in "$@"; do
        log=$LOGS/$label.$(echo "$re" | tr -c 'A-Za-z0-9_.\n' '_').log
        (cd "$BUILD" && ctest -R "$re" --no-tests=error --output-on-failure >"$log" 2>&1) || true
        sed -nE 's/^ *[0-9]+\/[0-9]+ Test +#[0-9]+: (.*[^ .]) +\.* *(\*\*\*)?([A-Za-z]+( Run)?) +[0-9.]+ sec$/\3 \1/p' "$log"
        if grep -q 'No tests were found' "$log"; then echo "NoTests $re"; fi
    done
}
names_of() { { grep "$@" || true; } | cut -d' ' -f2- | awk 'NR > 1 { printf ", " } { printf "%s", $0 }'; }
# The first line of NAME's test logs saying why: a FAIL line (mpi_expect.py, the check programs)
# or a gtest failure with its expectation.
first_fail() {
    cat "$LOGS/$1".*.log | awk '
        n { if (/^\[/) exit; out = out " " $0; if (--n == 0) exit; next }
        /FAIL[ :]/ { print; exit }
        /: Failure$/ { out = $0; n = 4 }
        END { if (out != "") print out }' | sed -e "s|$WT/||" -e 's/  */ /g'
}
# The first line matching NAME's "# expect:" pattern (the check meant to fire); nothing if none.
expected_fail() { cat "$LOGS/$1".*.log | grep -m1 -E "$(header "$1" expect)" || true; }

echo "== unmutated HEAD $(git -C "$WT" rev-parse --short HEAD) in $WT"
build baseline || { echo "the unmutated tree does not build: $LOGS/baseline.build.log" >&2; exit 2; }
all=()
for n in "${names[@]}"; do read -ra t <<<"$(tests_of "$n")"; all+=("${t[@]}"); done
mapfile -t all < <(printf '%s\n' "${all[@]}" | sort -u)
failed=$(run_tests baseline "${all[@]}" | names_of -v '^Passed ')
if [ -n "$failed" ]; then
    echo "these tests fail (or were skipped) unmutated, so a mutation cannot be judged by them:" >&2
    echo "  $failed" >&2
    exit 2
fi
echo "   all ${#all[@]} test patterns pass unmutated"

status=0
summary=()
for n in "${names[@]}"; do
    start=$(date +%s)
    read -ra t <<<"$(tests_of "$n")"
    echo "== $n: $(header "$n" mutation)"
    rm -f "$LOGS/$n".*.log
    if ! git -C "$WT" apply "$MUT_DIR/$n.patch" 2>"$LOGS/$n.apply.log"; then
        result="STALE (does not apply to HEAD: $LOGS/$n.apply.log; remake it with git diff)"
        status=1
    elif ! build "$n"; then
        result="BROKEN (does not build: $LOGS/$n.build.log)"
        status=1
    else
        outcome=$(run_tests "$n" "${t[@]}")
        failed=$(names_of -v '^Passed ' <<<"$outcome")
        passed=$(names_of '^Passed ' <<<"$outcome")
        want=$(header "$n" expect)
        if [ -n "$failed" ] && [ -z "$want" ]; then
            result="caught by $failed${passed:+ (passed: $passed)}: $(first_fail "$n")"
        elif [ -n "$failed" ] && [ -n "$(expected_fail "$n")" ]; then
            result="caught by $failed${passed:+ (passed: $passed)}: $(expected_fail "$n")"
        elif [ -n "$failed" ]; then  # e.g. a timing check on a loaded machine: not this mutation's doing
            result="UNCLEAR: $failed failed, but no line matches /$want/: $(first_fail "$n")"
            status=1
        else
            result="MISSED: $passed passed"
            status=1
        fi
    fi
    [[ $result == STALE* ]] || git -C "$WT" apply -R "$MUT_DIR/$n.patch"
    line=$(printf '%-14s %4ss  %s' "$n" $(($(date +%s) - start)) "$result")
    echo "   $line"
    summary+=("$line")
done
[ -z "${MUTATION_WORKTREE:-}" ] || build restored || true  # leave the reused build matching its tree
echo "== summary"
printf '%s\n' "${summary[@]}"
exit $status
