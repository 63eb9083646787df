"""engine.outputs.report.conclusions: the summary's sentences say what their figures say."""

from __future__ import annotations

from engine.audit.reads.agreement import ALL


def test_without_a_pair_of_raters_to_compare_the_reads_alpha_speaks(
    small_items_read_twice, monkeypatch
):
    """Many raters who each share few answers (the session sample's seven) leave no pair to
    judge, yet the answers read twice tell how consistent the reads are: the summary gives
    Krippendorff's alpha of the session against 0.667, not "parm cannot say"."""
    from engine.outputs.report import conclusions as module

    session = small_items_read_twice
    monkeypatch.setattr(module, "session_pairs", lambda s: [])
    found = module.conclusions(session)
    pooled = next(a for a in session.reads.agreement.alpha if a.item == ALL)
    alpha = pooled.levels["ordinal"].estimate
    verdict = "as" if alpha >= module.ALPHA_LOWEST else "less than"
    assert found.short.startswith(f"The reads agree {verdict} Krippendorff requires (alpha ")
    assert f"{alpha:.3f}" in found.short
    raters = found.points[0]
    assert raters.concern == (alpha < module.ALPHA_LOWEST)
    assert f"{pooled.answers:,} answers read twice or more" in raters.sentences[1]
    assert "cannot say" not in found.short


def test_without_second_reads_parm_says_it_cannot_tell(small_items_read_twice, monkeypatch):
    from engine.outputs.report import conclusions as module

    monkeypatch.setattr(module, "session_pairs", lambda s: [])
    monkeypatch.setattr(module, "reads_alpha", lambda s: None)
    found = module.conclusions(small_items_read_twice)
    assert found.short.startswith("parm cannot say how consistent the raters are")
    assert not found.points[0].concern
