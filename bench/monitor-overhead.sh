#!/bin/sh
# The controller's cost of monitoring: CPU time of the sampler thread (getrusage
# RUSAGE_THREAD) per second of run, with the default monitors at 1 s and 100 ms intervals,
# with and without slab; the fixed cost per run (a configuration's first run, which starts the
# monitors, and a later one, which keeps them); the cost of one sample of each monitor; and the
# kernel's part of a sample: one read of each file the default monitors sample. Goal: below
# 0.5% of one CPU at 1 s. Run as root (perf counters of the child, /proc/slabinfo).
#
# Usage: bench/monitor-overhead.sh [SECONDS per configuration, default 10]
set -eu
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-target}"
cargo build --release -q -p vernier-monitor --example overhead
exec "$CARGO_TARGET_DIR/release/examples/overhead" "${1:-10}"
