#!/usr/bin/env python3
"""Where a profiled `haul` run spends its CPU, by subsystem, and when.

Reads the text of `perf script` (a `perf record -g` of a whole `haul` process) on stdin and
prints two tables:

- the samples by the outermost Haul frame of their call chain (its module and type: a
  sample of the HTTP client called from `TransferRunner` counts for `TransferRunner`), and
  those without one by where they ran (NIO's event loop threads, the cooperative pool,
  SQLite, the dynamic loader);
- with --timeline END STEP, the same split for each STEP seconds of the first END seconds
  after the first sample: a run's first stretch, before its first request, uses one core, and
  this shows what fills it.

Why by outermost frame: a flat profile of a batch of small files has no function above a few
per cent; what a change can move is a subsystem's share (the manager, the runner, the store's
writer, the client). Usage: perf script -i perf.data | perf_breakdown.py [--timeline 0.25 0.01]
"""
import collections
import re
import sys

HAUL_FRAME = re.compile(r"\$s(4Haul|7HaulCLI|10HaulDaemon)(\d+)([A-Za-z_]+)")
MODULES = {"4Haul": "Haul", "7HaulCLI": "HaulCLI", "10HaulDaemon": "HaulDaemon"}


def subsystem(frames):
    """The subsystem a sample counts for; `frames` runs from the innermost frame out."""
    for frame in reversed(frames):
        match = HAUL_FRAME.search(frame)
        if match:
            length = int(match.group(2))
            return f"{MODULES[match.group(1)]}.{match.group(3)[:length]}"
    chain = " ".join(frames)
    if "ld-linux" in chain:
        return "(dynamic loader)"
    if "SelectableEventLoop" in chain:
        return "(NIO event loop, no Haul frame)"
    if "sqlite3" in chain or "GRDB" in chain:
        return "(SQLite, GRDB)"
    if "swift_job_run" in chain:
        return "(cooperative pool, no Haul frame)"
    return "(other)"


def samples(lines):
    """(time, frames) for each sample of `perf script`'s default output."""
    time, frames = None, []
    for line in lines:
        if not line.strip():
            if time is not None:
                yield time, frames
            time, frames = None, []
        elif not line[0].isspace():
            match = re.search(r"\s(\d+\.\d+):", line)
            time, frames = (float(match.group(1)) if match else 0.0), []
        else:
            parts = line.strip().split(None, 1)
            if len(parts) == 2:
                frames.append(parts[1])
    if time is not None:
        yield time, frames


def main():
    arguments = sys.argv[1:]
    timeline = None
    if arguments[:1] == ["--timeline"]:
        timeline = (float(arguments[1]), float(arguments[2]))
    totals = collections.Counter()
    buckets = collections.defaultdict(collections.Counter)
    start = None
    for time, frames in samples(sys.stdin):
        start = time if start is None else start
        name = subsystem(frames)
        totals[name] += 1
        if timeline and time - start < timeline[0]:
            buckets[int((time - start) / timeline[1])][name] += 1
    count = sum(totals.values())
    if not count:
        sys.exit("no samples: pipe the output of `perf script` in")
    print(f"| subsystem (outermost Haul frame) | samples | share |\n|---|---|---|")
    for name, number in totals.most_common(25):
        print(f"| {name} | {number} | {100 * number / count:.1f}% |")
    if timeline:
        print(f"\n| from s | samples | the most |\n|---|---|---|")
        for index in sorted(buckets):
            counter = buckets[index]
            top = ", ".join(f"{name} {number}" for name, number in counter.most_common(4))
            print(f"| {index * timeline[1]:.3f} | {sum(counter.values())} | {top} |")


if __name__ == "__main__":
    main()
