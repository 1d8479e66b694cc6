#!/usr/bin/env python3
"""Checks that crates/analysis/examples/session_coverage.rs measures what `vernier compare`
does: the trials of one layout (`session_coverage --table dump`: their sessions, calibrations
and the library's comparison, one JSON line each) are imported into a new database with
`vernier import`, their calibrations stored in its `calibrations` table (docs/schema.md), and
compared with `vernier compare BASE NEW --format json`; every trial's ratio, interval, MDC and
verdict must equal the library's. Prints the count of equal trials and exits 1 on a difference.

Usage: bench/session_coverage_binary.py VERNIER DUMP_FILE
"""

import json
import os
import sqlite3
import subprocess
import sys
import tempfile
import uuid


def main():
    vernier, dump = sys.argv[1], sys.argv[2]
    trials = [json.loads(line) for line in open(dump)]
    with tempfile.TemporaryDirectory() as tmp:
        db = os.path.join(tmp, "sim.db")
        sessions = []
        for t in trials:
            for side in ("base", "new"):
                for s in t[side]:
                    s["tags"] = {"trial": str(t["trial"]), "side": side}
                    sessions.append(s)
        export = os.path.join(tmp, "sessions.json")
        with open(export, "w") as f:
            json.dump({"format": "vernier-export", "version": 1, "sessions": sessions}, f)
        subprocess.run([vernier, "--db", db, "import", export], check=True,
                       stdout=subprocess.DEVNULL)
        equal, differ = 0, []
        con = sqlite3.connect(db)
        for t in trials:
            con.execute("DELETE FROM calibrations")
            for c in t["calibrations"]:
                con.execute(
                    "INSERT INTO calibrations (id, created_at_ns, fingerprint, benchmark, "
                    "options, metric, sessions, runs, session_sd, within_sd, between_sd, df, "
                    "session_ids) VALUES (?, 0, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, '[]')",
                    (str(uuid.uuid4()), c["fingerprint"], c["benchmark"],
                     json.dumps(c["options"], sort_keys=True), c["metric"], c["sessions"],
                     c["runs"], c["session_sd"], c["within_sd"], c["between_sd"], c["df"]))
            con.commit()
            i = t["trial"]
            out = subprocess.run(
                [vernier, "--db", db, "compare", f"trial={i},side=base", f"trial={i},side=new",
                 "--format", "json"], check=True, capture_output=True, text=True).stdout
            got = json.loads(out)["comparisons"][0]
            want = t["comparison"]
            keys = ("ratio", "ratio_ci_low", "ratio_ci_high", "mdc", "verdict")
            if all(got[k] == want[k] for k in keys):
                equal += 1
            else:
                differ.append((i, {k: (got[k], want[k]) for k in keys if got[k] != want[k]}))
        print(f"{equal} of {len(trials)} trials: vernier compare equals the library")
        for d in differ[:5]:
            print(f"  trial {d[0]} differs (binary, library): {d[1]}")
        sys.exit(1 if differ else 0)


if __name__ == "__main__":
    main()
