"""What the benchmarks on the ASAP-SAS prompt files share (bench_paper.py, bench_colbert.py):
where the files are, their columns as settings, and the two prompts each prints a table for."""

from __future__ import annotations

from pathlib import Path

from engine.input.responses import load_responses
from engine.input.settings.config import load_defaults

# ../shared/data/asap-sas beside the repository
ASAP_SAS = Path(__file__).resolve().parents[3] / "shared" / "data" / "asap-sas"
TWO_PROMPTS = ("prompt1-train.csv", "prompt2-train.csv")


def asap_config(**changes):
    """The defaults on an ASAP-SAS prompt file, no bootstrap nor cross-fitting unless changed."""
    columns = {"text_column": "EssayText", "score_column": "Score1", "id_column": "Id"}
    return load_defaults().updated(
        **columns, **{"bootstrap_samples": 0, "cross_fit_folds": 0, **changes}
    )


def each_prompt(folder: Path, config, header: str):
    """Prompts 1 and 2 read with `config`, each after the lines that open its table (its size
    and labels, then `header`)."""
    for prompt in TWO_PROMPTS:
        responses = load_responses(folder / prompt, config)
        print(f"\n{prompt}: N = {len(responses)}, labels {responses.labels}")
        print(header)
        yield responses
