#!/bin/sh
# Coverage of the stopping rule's 95% interval of the median, through the real engine
# (crates/engine/examples/coverage.rs runs `run_session` with the mock benchmark drawing random
# values): for each distribution, the share of sessions whose final interval contains the true
# median, the mean and maximum measured runs, the share that converged and the coverage among
# those. Both rules side by side: the anytime-valid confidence sequence (today's default) and
# the old fixed-n interval checked after every run (optional stopping).
#
# Usage: bench/coverage.sh [SESSIONS] [--process]
#   SESSIONS   sessions per distribution and rule (default 500)
#   --process  run every run as a fresh `vernier __child` process, as `vernier run` does
#              (slower; the default runs the mock benchmark's code in the example's process)
set -eu
cd "$(dirname "$0")/.."
sessions=${1:-500}
mode=${2:-}
cargo build --release --quiet -p vernier-engine --example coverage
extra=""
if [ "$mode" = "--process" ]; then
    cargo build --release --quiet -p vernier
    extra="--process $(pwd)/target/release/vernier"
fi
dists="dist=lognormal:sigma=0.02
dist=lognormal:sigma=0.02:slow=0.02
dist=lognormal:sigma=0.1
dist=lognormal:sigma=0.1:slow=0.02
dist=bimodal:sigma=0.01:share=0.5
dist=bimodal:sigma=0.01:share=0.65"
for rule in fixed-n confidence-sequence; do
    # shellcheck disable=SC2086
    ./target/release/examples/coverage --sessions "$sessions" --rule "$rule" $extra $dists
    echo
done
