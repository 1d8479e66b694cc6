#!/usr/bin/env bash
# Coverage, false verdicts, power and MDC calibration of `vernier compare`'s interval of the
# ratio, by simulation with known truth (crates/analysis/examples/session_coverage.rs): sessions
# whose runs share a session effect (session SD tau) on top of run noise (run SD sigma = 1%,
# 10 runs a session), A/A and with planted changes, for one session a side with and without a
# calibration of 5 sessions, and for several sessions a side, at session/run noise ratios 0 to
# 10. The trials go through vernier_analysis::compare_calibrated, the function `vernier
# compare` calls on the sessions and calibrations it loaded; with --binary the script also
# sends a sample of trials through the binary (import, calibrations table, compare --format
# json) and checks that every figure is the library's.
#
# Also the ties table: values rounded to a grid of 1-5% with a true ratio off the grid.
#
# Usage: bench/session-coverage.sh [TRIALS] [--binary]
#   TRIALS    trials per cell (default 2000)
#   --binary  also check 200 trials of four layouts through target/release/vernier
# Environment: SLOW=0.1 adds 10% of runs 3 sigma slower (a skewed run distribution).
set -euo pipefail
cd "$(dirname "$0")/.."

TRIALS=${1:-2000}
SLOW=${SLOW:-0}
if ! [[ $TRIALS =~ ^[1-9][0-9]*$ ]]; then
    echo "session-coverage: TRIALS must be a positive integer, got '$TRIALS'" >&2
    exit 2
fi
cargo build --release --quiet -p vernier-analysis --example session_coverage
sim=target/release/examples/session_coverage
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
"$sim" --table main --trials "$TRIALS" --slow "$SLOW"
echo
"$sim" --table ties --trials "$TRIALS"
echo
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
if [[ ${2:-} == --binary ]]; then
    cargo build --release --quiet -p vernier
    dump=$(mktemp)
    trap 'rm -f "$dump"' EXIT
    for layout in "1v1cal --tau 0.03" "2v3 --tau 0.01" "1v1 --tau 0.02" "3v3cal --tau 0.02"; do
        # shellcheck disable=SC2086
        "$sim" --table dump --trials 200 --layout $layout > "$dump"
        echo "layout $layout:"
        python3 bench/session_coverage_binary.py target/release/vernier "$dump"
    done
fi
