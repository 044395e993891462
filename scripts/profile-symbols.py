#!/usr/bin/env python3
"""Per-request CPU by symbol, two recordings of scripts/profile-load.sh side by side (issue P17).

    python3 scripts/profile-symbols.py OLD_DIR NEW_DIR [PHASE] [TOP]

PHASE is "non-stream" (default) or "stream"; TOP (40) rows are printed with the largest growth
from OLD to NEW, then the ten that shrank most. Each row is a symbol's self time (no children)
in µs per request served in its recording's window: the samples' periods (cpu-clock: ns) summed
by `perf report --no-children --sort sym`, divided by the requests of that phase. Generic
arguments are dropped as in profile-phases.py (`Foo<Bar>::poll` and `Foo<Baz>::poll` are one row), kernel symbols are
marked [k]. Where the phases of scripts/profile-phases.py put a whole call chain into one
bucket, this names the leaf that grew: it found the allocator's TLB-shootdown IPIs
(`smp_call_function_many_cond`) and the scheduler's interrupt-off time (`finish_task_switch`,
`_raw_spin_unlock_irqrestore`: where a VM's cpu-clock samples land after a wake-up or a context
switch) that separate two builds in no Tollgate frame.
"""

import json
import re
import runpy
import subprocess
import sys
from collections import Counter
from pathlib import Path

# Generic arguments dropped as scripts/profile-phases.py drops them.
bare = runpy.run_path(str(Path(__file__).with_name("profile-phases.py")))["bare"]
ROW = re.compile(r"\s*(\d+)\s+\[(.)\]\s+(.*)")


def per_request(directory, phase):
    """{(kind, symbol): µs per request} of one recording."""
    meta = json.load(open(f"{directory}/{phase}.meta"))
    report = subprocess.run(
        ["perf", "report", "-i", f"{directory}/{phase}.data", "--no-children", "--sort", "sym",
         "--stdio", "-F", "period,sym", "-g", "none"],
        capture_output=True, text=True, check=True,
    ).stdout
    requests = max(meta["requests"], 1)
    out = Counter()
    for line in report.splitlines():
        match = ROW.match(line)
        if match and not line.startswith("#"):
            period, kind, symbol = match.groups()
            out[(kind, bare(symbol.strip())[:110])] += int(period) / 1e3 / requests
    return out


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    old_dir, new_dir = sys.argv[1:3]
    phase = sys.argv[3] if len(sys.argv) > 3 else "non-stream"
    top = int(sys.argv[4]) if len(sys.argv) > 4 else 40
    old, new = per_request(old_dir, phase), per_request(new_dir, phase)
    rows = sorted(set(old) | set(new), key=lambda k: new[k] - old[k], reverse=True)
    print(f"{phase}: self CPU µs per request by symbol ({old_dir} → {new_dir})")
    print(f"total {sum(old.values()):.1f} → {sum(new.values()):.1f}\n")
    print("| old | new | change | symbol |\n|---|---|---|---|")
    for key in rows[:top] + [None] + rows[-10:]:
        if key is None:
            print("| … | … | … | (most reduced) |")
            continue
        kind, symbol = key
        mark = "[k] " if kind == "k" else ""
        print(f"| {old[key]:.2f} | {new[key]:.2f} | {new[key] - old[key]:+.2f} | {mark}`{symbol}` |")


if __name__ == "__main__":
    main()
