"""What docs/make_reference.py and docs/make_examples.py share: the pages' marked blocks, which
they make again (the reference's from the code, the examples' from real runs), and writing the
pages that changed or, with --check, naming them.

    <!-- BEGIN KIND: NAME -->
    ...
    <!-- END KIND: NAME -->

Importing it puts the repository root on sys.path: both scripts import parm."""

from __future__ import annotations

import re
import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent
ROOT = DOCS.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


def marked_block(kind: str) -> re.Pattern:
    """A block of `kind` (`generated`, `example`): group 1 the opening marker and its newline,
    `name` its name, `body` what lies between, group 4 the closing marker."""
    return re.compile(
        rf"(<!-- BEGIN {kind}: (?P<name>[\w-]+) -->\n)(?P<body>.*?)(<!-- END {kind}: (?P=name) -->)",
        re.S,
    )


def pages_with(block: re.Pattern) -> list[Path]:
    """The pages under docs/ that hold such a block."""
    return sorted(p for p in DOCS.rglob("*.md") if block.search(p.read_text(encoding="utf-8")))


def changed(made: dict[Path, str]) -> list[Path]:
    """The pages whose text made again differs from what they hold."""
    return [page for page, text in made.items() if text != page.read_text(encoding="utf-8")]


def write_or_check(made: dict[Path, str], argv: list[str], script: str) -> int:
    """With --check: name each page whose blocks are stale and exit 1 if any; else write them."""
    stale = changed(made)
    for page in stale:
        if "--check" in argv:
            print(f"{page.relative_to(ROOT)} is stale: run python docs/{script}")
        else:
            page.write_text(made[page], encoding="utf-8")
            print(f"wrote {page.relative_to(ROOT)}")
    return 1 if stale and "--check" in argv else 0
