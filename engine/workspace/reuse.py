"""A finished run used again: `parm audit` of a file whose bytes (SHA-256) and settings digest
(engine.input.settings.config.settings_digest) match a kept run this parm computed
(engine.saved.method) opens that run instead of computing it again, as the app offers to
resume it. A changed byte is another file (another
digest, no kept runs); a changed setting that counts in the digest is another run.

Settings that are not in the digest change nothing the run computes (where it runs, who
reviews, the lead's lists, how many runs are kept), so the run is restored under the settings
given now: the outputs follow them. Vectors handed in (`--embeddings`) are not part of the key,
so such a run is never reused, nor reused by a run without them."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from engine.workspace.files import OpenedFile
from engine.workspace.prepare import Prepared

if TYPE_CHECKING:
    from engine.input.settings.config import AuditConfig
    from engine.outputs.manifest import OutputSet
    from engine.results.decision import Decisions
    from engine.results.session import SessionResult
    from engine.saved.store import SavedSession


@dataclass(frozen=True)
class Reused:
    """A kept run restored: the run as saved, its result (under the settings given now), the
    output set of this run that `out` holds, whole and intact (None: none there), and the one
    in the folder the run was last written to when that is another folder (`earlier_set`)."""

    saved: SavedSession
    session: SessionResult
    out_set: OutputSet | None
    earlier_set: OutputSet | None = None

    @property
    def same_set_in_out(self) -> bool:
        """Whether `out` holds this run's set (replacing it loses nothing)."""
        return self.out_set is not None

    def sentence(self, file: OpenedFile) -> str:
        return (
            f"Reused the finished run {self.saved.run_id} of {file.path} (same file and "
            "settings); --rerun to compute it again."
        )


def finished_run(file: OpenedFile, config: AuditConfig) -> SavedSession | None:
    """The file's newest kept run whose settings digest is that of `config`, computed by this
    parm (engine.saved.method: its version and engine sources; a run an earlier or another parm
    kept is computed again); None when there is none (or its record cannot be read)."""
    from engine.core.errors import ResumeError
    from engine.input.settings.config import settings_digest
    from engine.saved.method import method_version
    from engine.saved.store import list_runs

    if file.digest is None:
        return None
    wanted = settings_digest(config)
    try:
        runs = list_runs(file.digest)
    except ResumeError:
        return None
    for run in runs:
        if run.method != method_version():
            continue
        try:
            if settings_digest(run.config()) == wanted:
                return run
        except ResumeError:
            continue
    return None


def reuse(prepared: Prepared, out: Path | None = None) -> Reused | None:
    """The kept run of the prepared file with the same settings, restored with nothing run
    again; None when there is none or it cannot be used (damaged files, vectors handed in)."""
    from engine.core.errors import ResumeError
    from engine.embedding.vectors import PRECOMPUTED
    from engine.saved.store import restore_session

    saved = finished_run(prepared.file, prepared.config)
    if saved is None:
        return None
    try:
        session = restore_session(saved, prepared.items, prepared.config)
    except ResumeError:
        return None
    if any(result.embedding.model == PRECOMPUTED for result in session.results):
        return None
    if out is None:
        return Reused(saved, session, None)
    earlier = None
    if saved.out_folder is not None and Path(saved.out_folder) != Path(out).expanduser().absolute():
        earlier = _run_set(Path(saved.out_folder), saved.run_id)
    return Reused(saved, session, _run_set(out, saved.run_id), earlier)


def _run_set(out: Path, run_id: str) -> OutputSet | None:
    """The output set in `out` when it is one whole, intact set of run `run_id`."""
    from engine.outputs.manifest import read_set

    if not out.is_dir():
        return None
    found = read_set(out)
    return found if found.one_run and found.run_id == run_id else None


def unchanged_set(reused: Reused, names: list[str], store: Decisions | None) -> bool:
    """Whether the set in `out` is what writing the reused run now would write, so it can be
    kept as it is: this run's files, exactly `names`, written under the same settings
    (report.json's config: the lists and reviewer follow settings outside the digest), and the
    review as it was (decisions.csv as it would be written now; no reads typed in the review,
    whose consensus it does not show). Anything else: the set is written again."""
    return _as_written_now(reused.out_set, reused, names, store)


def copyable_set(reused: Reused, names: list[str], store: Decisions | None) -> OutputSet | None:
    """The set in the folder the reused run was last written to, when it is what writing the
    run now would write (as `unchanged_set` judges the one in `out`): `copy_set` puts it in
    `out` instead of writing it again (no file of a set names its folder). None otherwise."""
    found = reused.earlier_set
    return found if _as_written_now(found, reused, names, store) else None


def _as_written_now(found: OutputSet | None, reused: Reused, names, store) -> bool:
    import json

    from engine.outputs.names import DECISIONS_FILE, REPORT_JSON
    from engine.outputs.session import decisions_csv

    if found is None or store is None or store.added_reads():
        return False
    if {entry.name for entry in found.files} != set(names) or DECISIONS_FILE not in names:
        return False
    try:
        report = json.loads((found.folder / REPORT_JSON).read_text(encoding="utf-8"))
        written = (found.folder / DECISIONS_FILE).read_bytes()
    except (OSError, ValueError):
        return False
    settings = json.loads(json.dumps(reused.session.config.to_dict()))
    now = decisions_csv(store, reused.session).encode("utf-8", "replace")
    # The file as named now (the same bytes may be read from another path).
    source = (report.get("input") or {}).get("file")
    return (
        report.get("config") == settings
        and written == now
        and source == reused.session.items.source
    )
