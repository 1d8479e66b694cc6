#!/usr/bin/env bash
# How often `vernier bisect` names the right commit and what it costs in sessions, against
# `git bisect run` with one session a step and a fixed threshold, by simulation over synthetic
# histories with a known first bad commit (crates/analysis/examples/bisect_simulation.rs; the
# table of docs/bisect.md).
#
# Usage: bench/bisect.sh [TRIALS]   (bisections per row, default 1000)
set -euo pipefail
cd "$(dirname "$0")/.."

TRIALS=${1:-1000}
if ! [[ $TRIALS =~ ^[1-9][0-9]*$ ]]; then
    echo "bisect: TRIALS must be a positive integer, got '$TRIALS'" >&2
    exit 2
fi
cargo build --release --quiet -p vernier-analysis --example bisect_simulation
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
target/release/examples/bisect_simulation --trials "$TRIALS"
echo
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
