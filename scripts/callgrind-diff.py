#!/usr/bin/env python3
"""Two recordings of scripts/callgrind-load.sh side by side, per request (issue P17).

    python3 scripts/callgrind-diff.py OLD_DIR NEW_DIR [EVENT] [TOP]
    python3 scripts/callgrind-diff.py --callers DIR FUNCTION [EVENT] [TOP]

The first form prints EVENT (Ir, instructions, by default; with CALLGRIND_CACHE=1 recordings also
I1mr, D1mr, D1mw: first-level cache misses) per request in each recording, then the functions
whose self count changed most, both ways (generic arguments dropped, so one function of two
builds matches). The second prints who calls FUNCTION (a part of its name) in one recording and
how much of FUNCTION's EVENT each call site accounts for, e.g. which futures' moves the relay's
`memcpy` is. Reads `callgrind_annotate`'s output (valgrind's).
"""

import re
import subprocess
import sys

NUMBER = re.compile(r"\s*(\d[\d,]*|\.)(?: \(\s*[\d.]+%\))?(?=\s)")


def annotate(directory, tree=False):
    """callgrind_annotate's lines for the recording in `directory`, its event names and the
    number of requests it counted."""
    args = ["callgrind_annotate", "--threshold=100"]
    if tree:
        args.append("--tree=caller")
    args.append(f"{directory}/callgrind.out.1")
    out = subprocess.run(args, capture_output=True, text=True, check=True).stdout
    with open(f"{directory}/requests", encoding="utf-8") as f:
        requests = max(int(f.read()), 1)
    lines = out.split("\n")
    header = next(l for l in lines if l.startswith("Ir ") and "file:function" in l)
    events = header.split()[:-1]
    return lines[lines.index(header) + 1 :], events, requests


def bare(name):
    """A function's name without its file, binary and generic arguments."""
    name = name.split(" [")[0].strip()
    name = re.sub(r" \(\d[\d,]*x\)$", "", name)
    name = re.sub(r"^\?\?\?:", "", name)
    name = re.sub(r"^[./\w-]+\.[A-Za-z]+:", "", name)
    # Generic arguments go, innermost first; a trait impl's `<Type as Trait>` stays readable.
    previous = None
    while previous != name:
        previous = name
        name = re.sub(r"<([^<>]*)>", lambda m: f"«{m[1]}»" if " as " in m[1] else "", name)
    return re.sub(r"'\d+$", "", name.replace("«", "<").replace("»", ">"))


def counts(line, width):
    """The `width` event counts at the start of an annotate line ('.' is 0), None if it has
    fewer."""
    values, at = [], 0
    while len(values) < width:
        m = NUMBER.match(line, at)
        if not m:
            return None
        values.append(0 if m.group(1) == "." else int(m.group(1).replace(",", "")))
        at = m.end()
    return values


def per_function(directory):
    """{function: [count per request, per event]} and the event names."""
    lines, events, requests = annotate(directory)
    table = {}
    for line in lines:
        values = counts(line, len(events))
        if values is None:
            continue
        name = bare(NUMBER.sub("", line, count=len(events)))
        row = table.setdefault(name, [0.0] * len(events))
        for i, v in enumerate(values):
            row[i] += v / requests
    return table, events


def diff(old_dir, new_dir, event, top):
    old, events = per_function(old_dir)
    new, new_events = per_function(new_dir)
    if event not in events or event not in new_events:
        sys.exit(f"{event} is not in both recordings (they have {events} and {new_events})")
    i, j = events.index(event), new_events.index(event)
    a = {k: v[i] for k, v in old.items()}
    b = {k: v[j] for k, v in new.items()}
    print(f"{event} per request: {sum(a.values()):,.0f} -> {sum(b.values()):,.0f}\n")
    print(f"| old | new | change | function ({event} a request, self) |")
    print("|---|---|---|---|")
    changed = sorted(set(a) | set(b), key=lambda k: b.get(k, 0) - a.get(k, 0))
    shown = changed[::-1][:top] + [None] + changed[: top // 3]
    for k in shown:
        if k is None:
            print("| … | … | … | (most reduced) |")
            continue
        x, y = a.get(k, 0.0), b.get(k, 0.0)
        print(f"| {x:,.1f} | {y:,.1f} | {y - x:+,.1f} | `{k[:120]}` |")


def callers(directory, function, event, top):
    lines, events, requests = annotate(directory, tree=True)
    if event not in events:
        sys.exit(f"{event} is not in the recording (it has {events})")
    col = events.index(event)
    block = []
    for line in lines + [""]:
        if line.strip():
            block.append(line)
            continue
        entry = [l for l in block if "*  " in l and function in l]
        if entry:
            rows = []
            for l in block:
                if "< " not in l:
                    continue
                values = counts(l[: l.rindex("< ")], len(events))
                if values:
                    rows.append((values[col] / requests, l[l.rindex("< ") + 2 :].split(" [")[0]))
            name = bare(entry[0][entry[0].rindex("*  ") + 3 :])
            print(f"callers of {name}, {event} a request:")
            for value, caller in sorted(rows, reverse=True)[:top]:
                print(f"{value:12,.1f}  {caller.replace('???:', '')[:150]}")
            return
        block = []
    sys.exit(f"no function named like {function!r}")


def main():
    args = sys.argv[1:]
    if len(args) >= 3 and args[0] == "--callers":
        callers(args[1], args[2], args[3] if len(args) > 3 else "Ir", int(args[4]) if len(args) > 4 else 25)
    elif len(args) >= 2:
        diff(args[0], args[1], args[2] if len(args) > 2 else "Ir", int(args[3]) if len(args) > 3 else 30)
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
