"""Write what the tutorial's commands print from real runs of them, so the pages cannot show
output an earlier parm printed.

A page holds an example's output between two markers, right after the ```bash block of its
command:

    ```bash
    parm audit sample_data/plant_growth.csv --out parm-out
    ```
    ... (text by hand) ...
    <!-- BEGIN example: first-audit -->
    ```text
    (what that command printed)
    ```
    <!-- END example: first-audit -->

and this script runs the last `parm audit` command of the ```bash blocks above each marker, in
a fresh folder holding a copy of sample_data/ and a data folder of its own (no saved runs, no
review), and writes what it printed between the markers: the progress bars left out (their
timing varies), the folder's path left out of the paths. The embedding cache is the usual one
(PARM_CACHE_DIR), so a second run embeds nothing; what is printed does not depend on it.

    python docs/make_examples.py          # run the examples, rewrite the blocks
    python docs/make_examples.py --check  # exit 1, naming the pages, when a block is stale

tests/test_docs.py runs the check (a slow test: the two tutorial audits take about 30 s).
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import sys
import tempfile
from pathlib import Path

from marked_blocks import ROOT, changed, marked_block, pages_with, write_or_check

BLOCK = marked_block("example")
COMMAND = re.compile(r"```bash\n(?P<body>.*?)```", re.S)
# A progress bar's line (Rich draws its bars with this character): its times vary.
BAR = "━"


def command_before(text: str, position: int) -> list[str]:
    """The arguments of the last `parm audit` line in the ```bash blocks before `position`."""
    found = None
    for block in COMMAND.finditer(text, 0, position):
        for line in block["body"].replace("\\\n", " ").splitlines():
            words = shlex.split(line, comments=True)
            if words[:2] == ["parm", "audit"]:
                found = words[1:]
    if found is None:
        raise ValueError("an example block with no `parm audit` command above it")
    return found


def printed(argv: list[str], folder: Path) -> str:
    """What `parm ARGV` prints, run in `folder` (which holds sample_data/), progress bars and
    the folder's path left out."""
    from typer.testing import CliRunner

    from parm_tui.cli import app

    here = Path.cwd()
    os.chdir(folder)
    try:
        result = CliRunner().invoke(app, argv, env={"COLUMNS": "100"})
    finally:
        os.chdir(here)
    if result.exit_code != 0:
        raise RuntimeError(f"parm {shlex.join(argv)} exited {result.exit_code}:\n{result.output}")
    lines = [line.rstrip() for line in result.output.splitlines() if BAR not in line]
    text = "\n".join(line for line in lines if line)
    return text.replace(f"{folder.resolve()}/", "").replace(f"{folder}/", "")


def refreshed(text: str, folder: Path) -> str:
    """The page's text with every example block made again from its command's run."""
    out, last = [], 0
    for match in BLOCK.finditer(text):
        body = printed(command_before(text, match.start()), folder)
        out += [text[last : match.start()], match.group(1), f"```text\n{body}\n```\n", match[4]]
        last = match.end()
    return "".join(out) + text[last:]


def pages() -> list[Path]:
    """The pages holding an example block."""
    return pages_with(BLOCK)


def fresh_runs(pages_: list[Path]) -> dict[Path, str]:
    """Each page's text with its examples run again, in one fresh folder per page (a copy of
    sample_data/, a data folder of its own: nothing saved from an earlier run)."""
    made = {}
    for page in pages_:
        with tempfile.TemporaryDirectory(prefix="parm-examples-") as name:
            folder = Path(name)
            shutil.copytree(ROOT / "sample_data", folder / "sample_data")
            before = os.environ.get("PARM_DATA_DIR")
            os.environ["PARM_DATA_DIR"] = str(folder / "data")
            try:
                made[page] = refreshed(page.read_text(encoding="utf-8"), folder)
            finally:
                if before is None:
                    os.environ.pop("PARM_DATA_DIR", None)
                else:
                    os.environ["PARM_DATA_DIR"] = before
    return made


def stale() -> list[Path]:
    """The pages whose example blocks differ from what their commands print now."""
    return changed(fresh_runs(pages()))


def main(argv: list[str]) -> int:
    return write_or_check(fresh_runs(pages()), argv, "make_examples.py")


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
