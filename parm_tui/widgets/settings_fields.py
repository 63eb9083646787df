"""The Settings form's fields: each key's label and one line of help, which keys are technical
(the Advanced section, closed by default), the choices of the dropdowns, and the layout of one
field: a box holding its row (label and widgets), its help (shown while the box has the focus:
`show_help`, `.field-box.-focused` in parm.tcss) and the engine's message about it."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.widgets import Label, Static

from engine.core.metric_names import METRIC_NAMES

POWER_MODES = [("fixed", "fixed"), ("list (grid)", "list"), ("interval (Brent)", "interval")]
TOP_K_MODES = [("off: dense graph", "off"), ("fixed", "fixed"), ("list (grid)", "list")]
MAXSIM_CHOICES = [("normalised by length", "normalised"), ("raw sum (paper)", "raw")]
CHOICES = {
    "selection_metric": [(m, m) for m in METRIC_NAMES],
    "class_weight": [("balanced", "balanced"), ("none", "none")],
    "on_bad_rows": [("error: stop", "error"), ("skip: leave out", "skip")],
}
# The dropdowns of the Advanced section: where a run happens, not what it computes.
ADVANCED_CHOICES = {
    "device": [("auto: a GPU when PyTorch sees one", "auto"), ("cpu", "cpu"), ("cuda", "cuda")],
}
# Number fields among the audit's choices, and the technical ones (the Advanced section).
INPUT_KEYS = ("near_duplicate_threshold", "bootstrap_samples", "cross_fit_folds", "seed")
ADVANCED_KEYS = (
    "similarity_top_k_chunk",
    "embedding_batch_size",
    "jobs",
    "scheduler",
    "scheduler_timeout",
    "saved_runs",
    "reviewer",
)
# Text settings: what is typed is the value ('' is none), never read as a number.
TEXT_KEYS = ("scheduler", "reviewer")
PLACEHOLDERS = {
    "scheduler": "none: this machine; tcp://HOST:8786 or local:N (Dask)",
    "reviewer": "none: your login name",
}
LABELS = {
    "embedding_model": "Embedding model",
    "normalize_similarities": "Normalise similarities",
    "similarity_power": "Power p",
    "similarity_top_k": "Top-K neighbours",
    "similarity_top_k_symmetric": "Symmetric top-K",
    "similarity_top_k_chunk": "Chunk size (rows)",
    "colbert_top_k": "ColBERT top-K",
    "colbert_batch_size": "ColBERT batch size",
    "colbert_maxsim": "ColBERT MaxSim",
    "selection_metric": "Selection metric",
    "class_weight": "Class weighting",
    "on_bad_rows": "Bad rows",
    "score_order": "Score order",
    "embedding_batch_size": "Embedding batch",
    "near_duplicate_threshold": "Near-duplicate cos",
    "bootstrap_samples": "Bootstrap samples",
    "cross_fit_folds": "Cross-fit folds",
    "seed": "Seed",
    "jobs": "Worker processes",
    "saved_runs": "Saved runs per file",
    "scheduler": "Dask scheduler",
    "scheduler_timeout": "Connect timeout s",
    "device": "Embedding device",
    "reviewer": "Reviewer",
}
# One line each: at most HELP_WIDTH characters, so it fits at 80 columns.
HELP_WIDTH = 72
HELP = {
    "embedding_model": "The model that turns answers into vectors (the bundled one is offline).",
    "normalize_similarities": "Rescale similarities to 0-1 over all pairs before the power.",
    "similarity_power": "Higher p leans harder on the closest neighbours (a grid tunes it).",
    "similarity_top_k": "How many similar answers each score is compared with (a grid is tuned).",
    "similarity_top_k_symmetric": "Two answers are neighbours when either lists the other.",
    "colbert_top_k": "Candidates per answer found before token-level (MaxSim) scoring.",
    "colbert_batch_size": "Answer pairs per MaxSim batch: memory against speed.",
    "colbert_maxsim": "Normalised: MaxSim over the answer's length; raw: the paper's sum.",
    "selection_metric": "The agreement figure that chooses K and p (for nll the lowest wins).",
    "class_weight": "Balanced: rare scores weigh as much as common ones in the fit.",
    "on_bad_rows": "Rows with no usable score: stop with a message, or leave them out.",
    "score_order": "Score labels lowest first; text labels need it for QWK and 'off by 2'.",
    "near_duplicate_threshold": "Cosine above which two answers count as the same answer.",
    "bootstrap_samples": "Resamples for the 95% intervals (0: none; more is slower).",
    "cross_fit_folds": "Folds for the cross-fitted (out-of-sample) figures (0: none).",
    "seed": "Seed of the bootstrap and the folds: one seed, the same figures.",
    "similarity_top_k_chunk": "Rows per block of the neighbour search: memory against speed.",
    "embedding_batch_size": "Answers per embedding batch (32 is fastest on a CPU).",
    "jobs": "Worker processes auditing a session's items side by side.",
    "saved_runs": "How many runs of each file are kept to resume and reopen (the newest).",
    "scheduler": "A Dask cluster for the items (tcp://HOST:8786, local:N); empty: here.",
    "scheduler_timeout": "Seconds to wait for the scheduler and a worker before stopping.",
    "device": "Where the embedding model runs: auto (a GPU if there is one), cpu, cuda.",
    "reviewer": "Who decides in the review (decisions.csv names them); empty: your login.",
}


def show_help(screen, focused) -> None:
    """Mark the field box holding the focused widget (its help line shows), and no other."""
    box = next((node for node in focused.ancestors if "field-box" in node.classes), None)
    for other in screen.query(".field-box.-focused"):
        if other is not box:
            other.remove_class("-focused")
    if box is not None:
        box.add_class("-focused")


def error_line(key: str) -> Static:
    """Where the engine's message about `key` appears (hidden while there is none)."""
    return Static("", id=f"error-{key}", classes="field-error")


def help_line(key: str) -> Static:
    return Static(HELP[key], id=f"help-{key}", classes="field-help")


def field_row(key: str, *widgets) -> ComposeResult:
    """A field's row: its label and widgets."""
    with Horizontal(classes="field", id=f"field-{key}"):
        yield Label(LABELS[key], classes="field-label")
        yield from widgets


def field(key: str, *widgets) -> ComposeResult:
    """One field: its row, its help (while focused) and the engine's message about it."""
    with Vertical(classes="field-box", id=f"box-{key}"):
        yield from field_row(key, *widgets)
        yield help_line(key)
        yield error_line(key)


def sub_row(label: str, *widgets, row_id: str | None = None) -> ComposeResult:
    """A row under a field (the values of a mode)."""
    with Horizontal(classes="field sub", id=row_id):
        yield Label(f"  {label}", classes="field-label")
        yield from widgets
