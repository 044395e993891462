#!/usr/bin/env python3
"""Which pages of a running binary's file are resident: per ELF section, per 64 KiB block, and the
largest symbols on resident pages (issue P17: peak RSS's file part).

    python3 scripts/rss-pages.py PID [--symbols N] [--json OUT]

Reads /proc/PID/maps and /proc/PID/pagemap (root), the binary's ELF headers (readelf) and its
symbols (nm). "resident" = mapped into the process (what RssFile counts), whether the process
touched the page or the kernel mapped it with a touched one (fault-around; on Linux 6.18 a whole
large folio of the page cache, 128 KiB on average).
"""
import bisect
import collections
import json
import os
import re
import struct
import subprocess
import sys

PAGE = os.sysconf("SC_PAGE_SIZE")


def mappings(pid, exe):
    out = []
    with open(f"/proc/{pid}/maps") as f:
        for line in f:
            parts = line.split(None, 5)
            if len(parts) < 6 or os.path.realpath(parts[5].strip()) != exe:
                continue
            lo, hi = (int(x, 16) for x in parts[0].split("-"))
            out.append((lo, hi, parts[1], int(parts[2], 16)))
    return out


def resident(pid, lo, hi):
    n = (hi - lo) // PAGE
    with open(f"/proc/{pid}/pagemap", "rb") as f:
        f.seek(lo // PAGE * 8)
        data = f.read(n * 8)
    pages = []
    for i in range(n):
        (e,) = struct.unpack_from("<Q", data, i * 8)
        if e >> 63 & 1:
            pages.append(i)
    return pages


def sections(exe):
    out = []
    txt = subprocess.run(["readelf", "-SW", exe], capture_output=True, text=True).stdout
    for m in re.finditer(r"\]\s+(\S+)\s+\S+\s+([0-9a-f]+)\s+([0-9a-f]+)\s+([0-9a-f]+)", txt):
        name, addr, off, size = m.group(1), int(m.group(2), 16), int(m.group(3), 16), int(m.group(4), 16)
        if addr and size:
            out.append((off, off + size, name, addr))
    return sorted(out)


def symbols(exe, secs):
    txt = subprocess.run(["nm", "-S", "--defined-only", "-C", exe], capture_output=True, text=True).stdout
    out = []
    for line in txt.splitlines():
        p = line.split(None, 3)
        if len(p) < 4 or len(p[2]) != 1:
            continue
        addr, size, name = int(p[0], 16), int(p[1], 16), p[3]
        for off, end, _, saddr in secs:
            if saddr <= addr < saddr + (end - off):
                out.append((addr - saddr + off, size, name))
                break
    return sorted(out)


def main():
    pid = int(sys.argv[1])
    nsym = 40
    if "--symbols" in sys.argv:
        nsym = int(sys.argv[sys.argv.index("--symbols") + 1])
    exe = os.path.realpath(f"/proc/{pid}/exe")
    secs = sections(exe)
    res_off = set()
    for lo, hi, perm, off in mappings(pid, exe):
        for i in resident(pid, lo, hi):
            res_off.add(off + i * PAGE)
    per_sec = collections.Counter()
    starts = [s[0] for s in secs]
    for o in res_off:
        # a page can hold several sections: count it for each overlapping one
        j = bisect.bisect_right(starts, o + PAGE - 1)
        hit = False
        for off, end, name, _ in secs[max(0, j - 8):j]:
            if off < o + PAGE and end > o:
                per_sec[name] += 1
                hit = True
        if not hit:
            per_sec["(headers/other)"] += 1
    size = os.path.getsize(exe)
    blocks = {o // 65536 for o in res_off}
    print(f"{exe}: file {size / 2**20:.1f} MiB, resident {len(res_off) * PAGE / 2**20:.2f} MiB "
          f"({len(res_off)} pages, {len(blocks)} distinct 64 KiB blocks)")
    for off, end, name, _ in secs:
        if per_sec[name]:
            print(f"  {name:24} size {(end - off) / 2**20:7.2f} MiB  resident {per_sec[name] * PAGE / 2**20:6.2f} MiB")
    if per_sec["(headers/other)"]:
        print(f"  (other) resident {per_sec['(headers/other)'] * PAGE / 2**20:.2f} MiB")
    syms = symbols(exe, secs)
    # the biggest symbols with any resident page, and how much of them is resident
    big = []
    for off, sz, name in syms:
        if sz < 16384:
            continue
        r = sum(1 for p in range(off // PAGE, (off + sz - 1) // PAGE + 1) if p * PAGE in res_off)
        if r:
            big.append((r * PAGE, sz, name))
    big.sort(reverse=True)
    print(f"largest resident symbols (resident KiB / size KiB):")
    for r, sz, name in big[:nsym]:
        print(f"  {r / 1024:8.0f} / {sz / 1024:8.0f}  {name[:140]}")
    if "--json" in sys.argv:
        with open(sys.argv[sys.argv.index("--json") + 1], "w") as f:
            json.dump({"exe": exe, "pages": sorted(res_off)}, f)


main()
