#!/usr/bin/env python3
"""Per-request scheduler counts from the recordings of scripts/count-hops.sh.

    python3 scripts/count-hops.py OUT_DIR [NAME_FILTER]

For each recording (binary × phase × rate): Tollgate's CPU µs per request, and per request
the wake-ups (waker → wakee, by thread class), the context switches of Tollgate's threads
(S: went to sleep, R: preempted), their futex / madvise / munmap / mprotect / mmap /
epoll_wait / sched_yield calls, and the IPIs on every CPU. Thread classes: `tokio` (the
runtime's workers and blocking pool, which share a name), `tg:<name>` (Tollgate's named
threads), others by their command name (the mock's threads are `tokio-rt-worker`; a wake-up
that fired in interrupt context on an idle CPU — a remote wake-up — has the waker `swapper`).
"""

import glob
import json
import os
import re
import subprocess
import sys
from collections import Counter, defaultdict

LINE = re.compile(r"^\s*(.+?)\s+(\d+)/(\d+)\s+(?:\[\d+\]\s+)?([\w:]+):\s*(.*)$")
WAKEE = re.compile(r"comm=(.+?) pid=(\d+) ")
SWITCH = re.compile(r"prev_comm=(.+?) prev_pid=(\d+) prev_prio=\d+ prev_state=(\S+) ==> next_comm=(.+?) next_pid=(\d+)")
FUTEX_OP = re.compile(r"op: (0x[0-9a-f]+)")
OPS = {0: "wait", 1: "wake", 9: "wait_bitset", 10: "wake_bitset", 5: "wake_op", 3: "requeue", 4: "cmp_requeue"}


def classes(threads_file, pid):
    """tid → class for the threads alive when the recording began. The runtime's workers run on
    threads of its blocking pool (one name for both), so they are one class: `tokio`."""
    out = {}
    with open(threads_file) as f:
        for line in f:
            tid, _, comm = line.strip().partition(" ")
            tid = int(tid)
            if tid == pid:
                out[tid] = "main"
            elif comm.startswith("tokio-r"):
                out[tid] = "tokio"
            else:
                out[tid] = "tg:" + comm
    return out


def one(base):
    meta = json.load(open(base + ".meta"))
    pid = meta["pid"]
    cls = classes(base + ".threads", pid)
    text = subprocess.run(
        ["perf", "script", "-i", base + ".data", "-F", "comm,pid,tid,event,trace"],
        capture_output=True, text=True, check=False).stdout
    rows = []
    for line in text.splitlines():
        m = LINE.match(line)
        if m:
            rows.append(m.groups())
    # Threads of Tollgate born during the recording.
    for comm, p, tid, _, _ in rows:
        tid = int(tid)
        if int(p) == pid and tid not in cls:
            cls[tid] = "tokio(new)" if comm.startswith("tokio-r") else "tg:" + comm

    def who(tid, comm):
        if tid in cls:
            return cls[tid]
        return "swapper" if tid == 0 else comm

    wakes, switches, calls, ipis = Counter(), Counter(), Counter(), Counter()
    for comm, p, tid, event, trace in rows:
        tid = int(tid)
        ours = int(p) == pid
        if event == "sched:sched_wakeup":
            m = WAKEE.match(trace)
            if not m:
                continue
            wakee = int(m.group(2))
            if ours or wakee in cls:
                wakes[(who(tid, comm), who(wakee, m.group(1)))] += 1
        elif event == "sched:sched_switch":
            m = SWITCH.match(trace)
            if m and int(m.group(2)) in cls:
                switches[(cls[int(m.group(2))], m.group(3)[:1])] += 1
        elif event.startswith("irq_vectors:"):
            ipis[event.split(":")[1]] += 1
        elif ours and event.startswith("syscalls:sys_enter_"):
            name = event[len("syscalls:sys_enter_"):]
            if name == "futex":
                m = FUTEX_OP.search(trace)
                op = int(m.group(1), 16) & 0x7F if m else -1
                name = "futex_" + OPS.get(op, str(op))
            calls[(cls.get(tid, "?"), name)] += 1
    # CPU by thread class (ticks of /proc/<pid>/task/<tid>/stat over the window).
    ticks = os.sysconf("SC_CLK_TCK")
    cpu = Counter()
    try:
        t0 = dict(l.split() for l in open(base + ".tcpu0") if len(l.split()) == 2)
        t1 = dict(l.split() for l in open(base + ".tcpu1") if len(l.split()) == 2)
        for tid, v in t1.items():
            cpu[cls.get(int(tid), "?")] += (int(v) - int(t0.get(tid, 0))) / ticks * 1e6
    except (OSError, ValueError):
        pass
    return meta, wakes, switches, calls, ipis, cpu


def main():
    out = sys.argv[1]
    want = sys.argv[2] if len(sys.argv) > 2 else ""
    results = {}
    for meta_file in sorted(glob.glob(os.path.join(out, "*.meta"))):
        base = meta_file[: -len(".meta")]
        name = os.path.basename(base)
        if want not in name:
            continue
        meta, wakes, switches, calls, ipis, cpu = one(base)
        n = max(meta["requests"], 1)
        per = lambda c: {" → ".join(k) if isinstance(k, tuple) else k: round(v / n, 3) for k, v in sorted(c.items(), key=lambda kv: -kv[1]) if v / n >= 0.005}
        res = {
            "rps": round(meta["rps"]), "cpu_us_per_request": round(meta["cpu_us_per_request"], 1),
            "p99_ms": meta.get("p99_ms"), "box_idle": meta.get("box_idle"),
            "box_busy_us_per_request": meta.get("box_busy_us_per_request"),
            "wakeups total": round(sum(wakes.values()) / n, 2),
            "switches total": round(sum(switches.values()) / n, 2),
            "futex total": round(sum(v for (t, c), v in calls.items() if c.startswith("futex")) / n, 2),
            "ipis total": round(sum(ipis.values()) / n, 3),
            "wakeups": per(wakes),
            "switches (thread, state)": {f"{t} {s}": round(v / n, 3) for (t, s), v in sorted(switches.items(), key=lambda kv: -kv[1]) if v / n >= 0.005},
            "calls": {f"{t} {c}": round(v / n, 3) for (t, c), v in sorted(calls.items(), key=lambda kv: -kv[1]) if v / n >= 0.005},
            "ipis": per(ipis),
            "cpu µs by thread": {k: round(v / n, 1) for k, v in sorted(cpu.items(), key=lambda kv: -kv[1]) if v > 0},
        }
        results[name] = res
        print(f"== {name}: {res['rps']} rps, {res['cpu_us_per_request']} µs CPU/request, p99 {res['p99_ms']} ms, box idle {res['box_idle']}, box busy {res['box_busy_us_per_request']} µs/request; per request: "
              f"wake-ups {res['wakeups total']}, switches {res['switches total']}, futex {res['futex total']}, IPIs {res['ipis total']}")
        for key in ("cpu µs by thread", "wakeups", "switches (thread, state)", "calls", "ipis"):
            print(f"  {key}:")
            for k, v in res[key].items():
                print(f"    {v:8.3f}  {k}")
    json.dump(results, open(os.path.join(out, "hops.json"), "w"), indent=1)


if __name__ == "__main__":
    main()
