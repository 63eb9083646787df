"""The line every benchmark starts with: what machine, how busy (timings on a shared machine
mean little without the load average beside them)."""

from __future__ import annotations

import os
import platform


def machine_line() -> str:
    return (
        f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
        f"load average {os.getloadavg()[0]:.1f}"
    )
