#!/usr/bin/env python3
"""Per-request CPU by phase from the recordings of scripts/profile-load.sh (issue P17 item 1).

    python3 scripts/profile-phases.py OUT_DIR [OUT_DIR2]   # one column per directory
    PROFILE_INLINE=1 python3 scripts/profile-phases.py ...   # inlined frames too (see below)

Each cpu-clock sample is one 1/freq s of a thread on a CPU. A sample belongs to the phase of
the innermost frame of its call chain (DWARF-unwound, inlined frames included when the binary
has line tables and PROFILE_INLINE=1: the frames of the binary's own code are expanded into
their inlined functions with llvm-addr2line) that a rule below names; a chain no rule names goes by its thread (the log
writer's threads) or by the task at its root (an upstream connection's task: forward; a client
connection's: the HTTP server), else to "runtime and kernel". Per request = samples / freq /
requests served in the recording's window.
"""

import json
import os
import re
import subprocess
import sys
from collections import Counter

# (phase, pattern over a frame's symbol), checked at each frame from the leaf outwards; the
# first frame any rule names decides. Order matters only within one frame.
RULES = [
    ("metrics", r"tollgate::metrics::|prometheus"),
    ("journal", r"tollgate_actors::journal::|pipeline::durable::|LogWriter::(open_hold|hold_progress|hold_released)"),
    ("log row", r"SettleCtx::log|LogWriter::record|tollgate_actors::log_writer::|tollgate_storage::|redb::"),
    ("settlement", r"Meter::(settle|bill|settle_now)|Detached::settle|SettleCtx::settle|quota::(hold::)?Hold::settle|measure::price::|pipeline::settle::"),
    ("meter", r"pipeline::meter|Progress::tick|measure::tokenize|measure::usage|usage_of|OpenAiUsage"),
    ("answer read (SSE, JSON)", r"pipeline::(stream|sse|whole|pipe|keepalive|ending)::|relay::wire::"),
    ("pick", r"pipeline::pick::|routing_table::|tollgate::sticky::|channel_pool::"),
    ("forward (upstream request)", r"pipeline::attempt::|relay::adaptor::|Plan>::build|tollgate::upstream::|reqwest::|hyper_util::client|hyper::client"),
    ("admission", r"pipeline::(admission|budget|body_budget|body_limit|body_read|max_cost|count_guard)::|tollgate::rate_limit::|tollgate_actors::limiter::|tollgate_actors::quota::|measure::(prompt|estimate|request_head|components)|Plan>::ask"),
    ("auth", r"pipeline::auth::|token_index::|FromRequestParts"),
    ("options reads", r"options::snapshot::|OptionsSnapshot"),
    ("route and plan (chat body)", r"relay::routes::|pipeline::spine::|pipeline::detach::"),
    ("HTTP layers (router, middleware)", r"tollgate::http::|tower_http::|axum::"),
    ("HTTP server (hyper)", r"hyper::proto|hyper::server|hyper_util::server|poll_loop|poll_read_head|poll_flush|poll_write"),
]
THREADS = [("log row", r"^tollgate-log")]
ROOTS = [
    ("forward (upstream request)", r"hyper::client|hyper_util::client|reqwest::"),
    ("HTTP server (hyper)", r"axum::serve|hyper::server|hyper_util::server"),
]
COMPILED = [(p, re.compile(r)) for p, r in RULES]


GENERICS = re.compile(r"(?<=[\w\]}>])<[^<>]*>")


def bare(sym):
    """A symbol without its generic arguments (whose types would match rules of their own)."""
    while True:
        shorter = GENERICS.sub("", sym)
        if shorter == sym:
            return sym
        sym = shorter


def phase_of(comm, frames):
    frames = [bare(sym) for sym in frames]
    for sym in frames:
        for phase, rx in COMPILED:
            if rx.search(sym):
                return phase
    for phase, rx in THREADS:
        if re.search(rx, comm):
            return phase
    for sym in reversed(frames):
        for phase, rx in ROOTS:
            if re.search(rx, sym):
                return phase
    return "runtime and kernel"


def raw_samples(data):
    """(comm, [(address, symbol, dso)]) per sample, leaf first."""
    out = subprocess.run(
        ["perf", "script", "-i", data, "-F", "comm,tid,ip,sym,dso", "--no-inline"],
        capture_output=True, text=True, check=True,
    ).stdout
    comm, frames = None, []
    frame = re.compile(r"^\s+([0-9a-f]+) (.*) \((.*)\)$")
    for line in out.splitlines():
        if not line.strip():
            if comm is not None:
                yield comm, frames
            comm, frames = None, []
        elif not line[0].isspace():
            comm = line.split()[0]
        else:
            m = frame.match(line)
            if m:
                frames.append((m.group(1), m.group(2), m.group(3)))
            else:
                frames.append(("0", line.strip(), "?"))
    if comm is not None:
        yield comm, frames


def inlined(binary, addresses):
    """address -> [function, innermost first] by llvm-addr2line (inlined frames included)."""
    if not addresses:
        return {}
    out = subprocess.run(
        ["llvm-addr2line", "-e", binary, "-f", "-i", "-C", "-a"],
        input="\n".join("0x" + a for a in addresses), capture_output=True, text=True,
    ).stdout
    chains, current = {}, None
    lines = out.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("0x"):
            current = format(int(line, 16), "x")
            chains[current] = []
            i += 1
            continue
        if current is not None and line and line != "??":
            chains[current].append(line)
        i += 2  # a function line, then its file:line
    return chains


def samples(data):
    raw = list(raw_samples(data))
    if os.environ.get("PROFILE_INLINE") != "1":
        return [(c, [sym for _, sym, _ in f]) for c, f in raw]
    own = {}
    for _, frames in raw:
        for addr, _, dso in frames:
            if dso.endswith("tollgate") or "/tollgate-" in dso:
                own.setdefault(dso, set()).add(addr)
    chains = {}
    for dso, addrs in own.items():
        for addr, chain in inlined(dso, sorted(addrs)).items():
            chains[(dso, addr)] = chain
    out = []
    for comm, frames in raw:
        syms = []
        for addr, sym, dso in frames:
            syms.extend(chains.get((dso, addr.lstrip("0") or "0")) or [sym])
        out.append((comm, syms))
    return out


def breakdown(directory, phase):
    meta = json.load(open(f"{directory}/{phase}.meta"))
    counts = Counter(phase_of(c, f) for c, f in samples(f"{directory}/{phase}.data"))
    per = 1e6 / meta["freq"] / max(meta["requests"], 1)
    return meta, {k: v * per for k, v in counts.items()}, sum(counts.values())


def main():
    dirs = sys.argv[1:]
    order = [p for p, _ in RULES] + ["runtime and kernel"]
    for phase in ("non-stream", "stream"):
        cols = [breakdown(d, phase) for d in dirs]
        print(f"\n{phase}: CPU µs per request by phase")
        print("| phase | " + " | ".join(dirs) + " |")
        print("|---|" + "---|" * len(dirs))
        for p in order:
            cells = [f"{c[1].get(p, 0.0):.1f} ({100 * c[1].get(p, 0.0) / max(sum(c[1].values()), 1e-9):.0f} %)" for c in cols]
            print(f"| {p} | " + " | ".join(cells) + " |")
        print("| **total (samples)** | " + " | ".join(f"**{sum(c[1].values()):.1f}**" for c in cols) + " |")
        print("| CPU per request (/proc, perf running) | " + " | ".join(f"{c[0]['cpu_us_per_request']:.1f}" for c in cols) + " |")
        print("| requests / RPS / samples | " + " | ".join(f"{c[0]['requests']} / {c[0]['rps']:.0f} / {c[2]}" for c in cols) + " |")


if __name__ == "__main__":
    main()
