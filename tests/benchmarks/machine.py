"""What the benchmarks share about the machine: the line every benchmark starts with (what
machine, how busy: timings on a shared machine mean little without the load average beside
them), one process timed under /usr/bin/time -v, a call timed again and again, and their options
(numeric ones; the datasets, seeds and items per file of those over the shared data)."""

from __future__ import annotations

import argparse
import os
import platform
import re
import subprocess
import time


def machine_line() -> str:
    return (
        f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
        f"load average {os.getloadavg()[0]:.1f}"
    )


def timed(command: list[str], **run_options) -> dict:
    """Run `command` (a `parm audit` process) under /usr/bin/time -v: wall seconds, CPU seconds
    (user + system; on a busy machine wall clock says more about the others) and peak resident
    memory in GB. A failed run stops the benchmark with its output."""
    started = time.perf_counter()
    done = subprocess.run(
        ["/usr/bin/time", "-v", *command], capture_output=True, text=True, check=False,
        **run_options,
    )  # fmt: skip
    wall = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"parm audit failed:\n{done.stdout}\n{done.stderr[-3000:]}")
    rss = re.search(r"Maximum resident set size \(kbytes\): (\d+)", done.stderr)
    cpu = sum(
        float(x) for x in re.findall(r"(?:User|System) time \(seconds\): ([\d.]+)", done.stderr)
    )
    peak = int(rss.group(1)) / 1024**2 if rss else float("nan")
    return {"wall": wall, "cpu": cpu, "peak_gb": peak}


def repeated(action, repeat: int) -> list[float]:
    """Wall seconds of each of `repeat` calls of `action` (the benchmarks print best and median)."""
    seconds = []
    for _ in range(repeat):
        started = time.perf_counter()
        action()
        seconds.append(time.perf_counter() - started)
    return seconds


def options(doc: str, **numbers) -> argparse.ArgumentParser:
    """A benchmark's parser: its description the docstring's first line, and an option per
    keyword (`top_k=10` gives `--top-k`, an int of default 10; its type is the default's)."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    for name, default in numbers.items():
        parser.add_argument("--" + name.replace("_", "-"), type=type(default), default=default)
    return parser


def dataset_options(doc: str, names, seeds: int) -> argparse.ArgumentParser:
    """A benchmark over the shared data's datasets: which ones (`names` by default), how many
    seeds of each simulated or planted task, and at most `--limit` items per file."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--datasets", nargs="+", default=list(names))
    parser.add_argument("--seeds", type=int, default=seeds)
    parser.add_argument("--limit", type=int, default=None, help="items per file (a quick look)")
    return parser
