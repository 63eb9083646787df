"""The invariants every output set of parm must hold, whatever the file (issue 43), as checks
that list each breach with the file, the place and the offending values, so a test that fails
says exactly what is wrong where. Shared by the gauntlet of real files (test_gauntlet) and the
property tests of random designs (test_invariants); never tuned to what parm writes today.

- figures: every figure in its range or left blank (not estimable): kappa, QWK, alpha, PRMSE in
  [-1, 1]; proportions, probabilities and p-values in [0, 1]; each row's score probabilities sum
  to 1; an interval contains its estimate; no NaN or infinity written as a figure; no figure an
  overflow made (a decimal of a million or more where a range is known);
- consensus: where an answer's reads all agree the consensus is their score; otherwise it lies
  within their range (one of them, for unordered labels); its probability in [0, 1]; the reads
  listed are the file's, and every answer read twice or more has its row;
- raters: every rater of the file in raters.csv with a verdict and as many reads as the file
  gives them; a rater called lenient or harsh is so by at least 3 standard errors and 0.15 of
  the reads' residual SD, in the verdict's direction (the documented rule: no verdict for a
  difference too small to matter, however sure); rater names in every output the file's (its rater names or score columns), never
  "read 1" or "rater 1";
- sentences: a sentence comparing figures agrees with them (a difference said to be within a
  limit is within it; "a < b" holds; a stated gap is the difference of the figures it names);
- the same reads in two shapes (long and wide) give the same raters, agreement and consensus.
"""

from __future__ import annotations

import json
from pathlib import Path

from engine.results.lead import GAP
from invariants.figures import (
    Breach,
    csv_breaches,
    describe,
    figure_range,
    items_breaches,
    json_breaches,
)
from invariants.reads import (
    FileReads,
    bias_breaches,
    consensus_breaches,
    long_reads,
    naming_breaches,
    rater_breaches,
    reads_of,
    shape_breaches,
    wide_reads,
)
from invariants.text import (
    comparison_breaches,
    html_parts,
    least_pair_breaches,
    markdown_parts,
    prose_breaches,
    table_breaches,
)

__all__ = ["FAMILIES", "Breach", "FileReads", "describe", "figure_range", "long_reads",
           "of_family", "output_breaches", "reads_of", "shape_breaches", "wide_reads"]  # fmt: skip

# The checks by the invariant they serve (a test asks for one family of an output set's breaches).
FAMILIES = {
    "figures": ("in range", "finite", "interval holds its estimate", "probabilities sum to 1"),
    "sentences": ("comparison holds", "difference and its limit", "memorised figure marked",
                  "stated gap is the figures' difference", "part within its whole",
                  "the cross-fitted figure is compared", "no Python None in a sentence",
                  "the least-agreeing pair named"),
    "consensus": ("consensus", "consensus = agreeing reads", "consensus within the reads",
                  "consensus reads kept"),
    "raters": ("every rater in raters.csv", "raters named as the file names them",
               "a lenient or harsh verdict has its size and significance",
               "a bias cell's averages on its item's scale"),
}  # fmt: skip


def of_family(breaches: list[Breach], family: str) -> list[Breach]:
    return [b for b in breaches if b.check in FAMILIES[family]]


def output_breaches(
    folder: Path, reads: FileReads | None = None, input_columns=(), printed: str = ""
) -> list[Breach]:
    """Every invariant on an output set (and on what the command printed): figures, sentences,
    and, given the file's reads, the consensus, the raters and their names."""
    found = []
    for path in sorted(folder.glob("*.csv")):
        found += csv_breaches(path, input_columns)
    found += json_breaches(folder / "report.json")
    found += items_breaches(folder)
    texts = {
        "report.md": markdown_parts((folder / "report.md").read_text(encoding="utf-8")),
        "report.html": html_parts((folder / "report.html").read_text(encoding="utf-8")),
        "printed": (printed.splitlines(), []),
    }
    if (folder / "warnings.txt").exists():
        texts["warnings.txt"] = ((folder / "warnings.txt").read_text("utf-8").splitlines(), [])
    report = json.loads((folder / "report.json").read_text(encoding="utf-8"))
    for name, (prose, tables) in texts.items():
        found += prose_breaches(prose, name, GAP)
        found += comparison_breaches(prose, name, report)
        found += least_pair_breaches(prose, name, report)
        for table in tables:
            found += table_breaches(table)
    if reads is not None:
        found += consensus_breaches(folder, reads)
        found += rater_breaches(folder, reads)
        found += bias_breaches(folder, reads)
        found += naming_breaches(folder, reads)
    unknown = {b.check for b in found} - {c for checks in FAMILIES.values() for c in checks}
    assert not unknown, f"checks without a family: {unknown}"
    return list(dict.fromkeys(found))
