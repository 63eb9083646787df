"""What a rater-lead concludes from a run, in plain words: the first screen of report.html and
the first section of report.md. Four points, then what to do first:

- how consistent the raters are: every pair of raters over the session against the field's
  minimum (RSMTool's QWK 0.70, held to kappa where the scores have no order), where answers are
  read twice or more;
- how many scores look wrong and how sure parm is: the flagged scores; parm's own cross-fitted
  agreement against the same minimum (a model under it is a reading list, not a judge); where
  answers are read twice, whether another read disputes the scores parm's severity alone flags
  (their own reads unseen: engine.outputs.report.flag_check) more often than the others, by more than
  the 95% margin of the difference;
- which raters and items need attention: the raters with a verdict, the items whose raters
  agree under the minimum, the items whose model falls short of their raters by more than the
  field's degradation limit (0.10; items too small for their scores are not judged so);
- what to do first, in order, from the points above.

Every sentence that sets two figures side by side is engine.results.compare's; the counts are
the run's. Plain strings; report.html escapes them, report.md escapes them with md_text.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from engine.audit.reads.agreement import ALL, THRESHOLDS
from engine.input.several_reads import read_pair
from engine.outputs.report.flag_check import flags_check
from engine.outputs.report.item_content import DEGRADATION_THRESHOLD, FIELD_THRESHOLDS
from engine.results.compare import SHORTFALL, Comparison, Limit, compare, minimum
from engine.results.figures import run_figures
from engine.results.lead import SMALL_RULE, session_wrong, wrong_phrase
from engine.results.session import SessionResult

# The field's minimum for agreement (QWK 0.70), held to kappa where scores have no order.
AGREE = FIELD_THRESHOLDS["qwk"]
# Items the summary's first line names where some item's raters agree under the minimum.
CAVEAT_ITEMS = 3
MINIMUM = "the field's minimum"
# The model's agreement with a rater may fall below the raters' own by at most this.
DEGRADATION = Limit(
    DEGRADATION_THRESHOLD, SHORTFALL, "the field's limit on degradation",
    "the model falls short of the raters",
)  # fmt: skip
NAMED = 3  # items named in a sentence
# Krippendorff (2004, Content Analysis, 241): alpha >= .800 to rely on, .667 the lowest for
# tentative conclusions.
ALPHA_LOWEST = 0.667


@dataclass(frozen=True)
class Point:
    """One of the summary's points: its heading, its sentences, and whether it calls for
    action (concern)."""

    heading: str
    sentences: tuple[str, ...]
    concern: bool


@dataclass(frozen=True)
class Conclusions:
    """short: the whole in two sentences; points: raters, scores, attention; steps: what to do
    first, in order; items: the items that need attention (attention_items), most first."""

    short: str
    points: tuple[Point, ...]
    steps: tuple[str, ...]
    items: tuple[tuple[str, str, Comparison], ...] = field(default=())


def conclusions(session: SessionResult, review: dict | None = None) -> Conclusions:
    """The summary of a run (review: report.json's `review`, for what the review has done)."""
    raters = _raters_point(session)
    sure = _flags_point(session)
    items = attention_items(session)
    attention = _attention_point(session, items)
    steps = _steps(session, raters, items, review)
    short = f"{_raters_short(session)} {_flags_short(session)}"
    return Conclusions(short, (raters, sure, attention), tuple(steps), tuple(items))


def sentence(text: str) -> str:
    """A sentence from a clause: its first letter up (not parm's name, written in lower case),
    a full stop at its end."""
    text = text if text.startswith("parm") else text[:1].upper() + text[1:]
    return text if text.endswith(".") else text + "."


def _flags_short(session: SessionResult) -> str:
    """The flags and how sure parm is, in one sentence, from the two checks' verdicts."""
    flagged, total = int(session.flagged.sum()), session.n_responses
    if not flagged:
        return f"parm flags none of the {total:,} scores: it estimates none of them wrong."
    head = (f"parm flags {flagged:,} of {total:,} scores ({flagged / max(total, 1):.1%}) as likely "
            f"wrong, {wrong_phrase(session_wrong(session.results))}")  # fmt: skip
    model, check = model_comparison(session), flags_check(session)
    if model is None and check is not None and check.within:
        assert check.value is not None and check.other_value is not None  # judged: both known
        return (f"{head}; another read disputes the scores its severity alone flags more often "
                f"than the others "
                f"({check.shown(check.value)} against {check.shown(check.other_value)}).")  # fmt: skip
    if model is None:
        return head + "; how sure it is cannot be said without cross-fitting."
    assert model.value is not None  # a cross-fitted kappa or QWK is finite (model.metrics)
    figure = f"{model.figure.split('(')[-1].rstrip(')')} {model.shown(model.value)}"
    if model.within:
        return f"{head}, and its model meets {MINIMUM} ({figure}): they are worth a review."
    weak = f"{head}, but its model is under {MINIMUM} ({figure})"
    if check is not None and check.within:
        assert check.value is not None and check.other_value is not None  # judged: both known
        return (f"{weak}; still, another read disputes the scores its severity alone flags more "
                f"often than the others ({check.shown(check.value)} against {check.shown(check.other_value)}).")  # fmt: skip
    return weak + ": read its flags as a reading list, not as verdicts."


# -- the raters ----------------------------------------------------------------------------------
def _figure_name(pair) -> str:
    return "qwk" if "qwk" in pair.figures else "kappa"


def _label(name: str) -> str:
    return "QWK" if name == "qwk" else "kappa"


def session_pairs(session: SessionResult) -> list:
    """The pairs of raters over the whole session with enough shared answers to judge."""
    if session.reads is None:
        return []
    return [p for p in session.reads.agreement.pairs if p.item == ALL and not p.too_few]


def pair_comparison(session: SessionResult, pair, prefix: str = "") -> Comparison:
    """A pair's QWK (kappa for unordered scores) against the field's minimum."""
    assert session.reads is not None  # the pair is one of its reads' pairs
    names = session.reads.raters
    name = _figure_name(pair)
    who = f"{prefix}{names[pair.rater_a]} and {names[pair.rater_b]}"
    return minimum(
        f"the {_label(name)} of {who} on the {pair.n:,} answers both read",
        pair.figures[name].estimate, THRESHOLDS.get(name, AGREE), MINIMUM,
    )  # fmt: skip


def reads_alpha(session: SessionResult) -> Comparison | None:
    """Where no pair of raters shares enough answers, the reads still tell: Krippendorff's alpha
    over the session's answers read twice or more (ordinal where the scores have an order)
    against Krippendorff's lowest acceptable 0.667. None without such answers."""
    if session.reads is None:
        return None
    pooled = [a for a in session.reads.agreement.alpha if a.item == ALL and a.answers > 0]
    if not pooled:
        return None
    level = "ordinal" if "ordinal" in pooled[0].levels else "nominal"
    figure = pooled[0].levels[level]
    if figure.estimate is None or figure.estimate != figure.estimate:
        return None
    return minimum(
        f"Krippendorff's {level} alpha of the reads of the {pooled[0].answers:,} answers read "
        "twice or more", figure.estimate, ALPHA_LOWEST, "Krippendorff's lowest acceptable",
    )  # fmt: skip


def _raters_point(session: SessionResult) -> Point:
    pairs = session_pairs(session)
    heading = "How consistent the raters are"
    alpha = reads_alpha(session) if not pairs else None
    if alpha is not None:
        agree = "as" if alpha.within else "less than"
        return Point(heading, (
            f"No pair of raters shares enough answers to compare them pair by pair; over every answer "
            f"read twice or more the reads agree {agree} Krippendorff requires.",
            sentence(alpha.sentence)), alpha.within is False)  # fmt: skip
    if not pairs:
        return Point(heading, (_no_pairs(session), "A second read of a sample of answers would "
                               "tell."), False)  # fmt: skip
    found = [pair_comparison(session, p) for p in pairs]
    below = [c for c in found if c.within is False]
    verdict = "as" if not below else "less than"
    count = "" if len(found) == 1 else (
        f" ({len(below)} of {len(found)} pairs of raters under its minimum)")  # fmt: skip
    sentences = [f"The raters agree {verdict} the field requires{count}."]
    sentences += [sentence(c.sentence) for c in found]
    worst = items_below(session)
    if worst:
        sentences.append(
            f"On {len(worst)} of {len(session.results)} item(s) a pair of raters agrees under "
            "the minimum (each item's figure rests on its own answers read twice)."
        )  # fmt: skip
    return Point(heading, tuple(sentences), bool(below or worst))


def _no_pairs(session: SessionResult) -> str:
    why = ("no answer is read twice" if session.reads is None
           else "no pair of raters shares enough answers")  # fmt: skip
    return f"parm cannot say how consistent the raters are: {why}."


def _raters_short(session: SessionResult) -> str:
    """'The raters agree less than the field requires (QWK 0.412, minimum 0.70).'"""
    pairs = session_pairs(session)
    alpha = reads_alpha(session) if not pairs else None
    if alpha is not None:
        assert alpha.value is not None  # reads_alpha gives none for an unknown alpha
        agree = "as" if alpha.within else "less than"
        return (f"The reads agree {agree} Krippendorff requires (alpha {alpha.shown(alpha.value)} "
                f"over the answers read twice or more, lowest acceptable {ALPHA_LOWEST:.3f}).")  # fmt: skip
    if not pairs:
        return _no_pairs(session)
    found = [pair_comparison(session, p) for p in pairs]
    below = [c for c in found if c.within is False]
    verdict = "as" if not below else "less than"
    if len(found) == 1:
        c = found[0]
        assert c.value is not None  # a pair with enough shared answers: a finite kappa or QWK
        said = f"{_label(_figure_name(pairs[0]))} {c.shown(c.value)}, minimum {c.other_value:.2f}"
    else:
        said = f"{len(below)} of {len(found)} pairs under the minimum of {AGREE:.2f}"
    return f"The raters agree {verdict} the field requires ({said}){_items_caveat(session, below)}."


def _items_caveat(session: SessionResult, below: list) -> str:
    """', but on 2 of 5 item(s) a pair agrees under it (3, 13)' where the pooled pairs meet the
    minimum and some item's do not (Powergrading: every pooled pair above 0.70, items 3 and 13
    under it); "" otherwise (the pooled verdict already says less)."""
    worst = items_below(session)
    if below or not worst:
        return ""
    named = ", ".join(item for item, _, _ in worst[:CAVEAT_ITEMS])
    more = ", …" if len(worst) > CAVEAT_ITEMS else ""
    return (f", but on {len(worst)} of {len(session.results)} item(s) a pair agrees under it "
            f"({named}{more})")  # fmt: skip


def items_below(session: SessionResult) -> list[tuple[str, Comparison, str]]:
    """(item, comparison, the pair: "G1 and G3") for each item whose least-agreeing pair of
    raters is under the minimum, the lowest first; pairs with too few shared answers are not
    judged."""
    if session.reads is None or not session.by_item:
        return []
    names = session.reads.raters
    lowest: dict[str, tuple[float, Comparison, str]] = {}  # each item's least figure
    for p in session.reads.agreement.pairs:
        if p.item == ALL or p.too_few:
            continue
        found = pair_comparison(session, p)
        if found.within is False:
            assert found.value is not None  # judged: its figure is known
            if p.item not in lowest or found.value < lowest[p.item][0]:
                pair = f"{names[p.rater_a]} and {names[p.rater_b]}"
                lowest[p.item] = (found.value, found, pair)
    ordered = sorted(lowest.items(), key=lambda entry: (entry[1][0], entry[0]))
    return [(item, found, pair) for item, (_, found, pair) in ordered]


# -- the flags -----------------------------------------------------------------------------------
def model_comparison(session: SessionResult) -> Comparison | None:
    """parm's own pooled cross-fitted QWK (kappa for unordered scores) against the minimum;
    None without cross-fitting."""
    figures = run_figures(session)
    ordered = figures.cross_qwk is not None
    value = figures.cross_qwk if ordered else figures.cross_kappa
    if value is None:
        return None
    return minimum(
        f"parm's own agreement with the scores (cross-fitted {'QWK' if ordered else 'kappa'})",
        value, AGREE, MINIMUM,
        beyond="its flags say where to look, not what the score should be",
        inside="its flags are worth a reviewer's time",
    )  # fmt: skip


def _flags_point(session: SessionResult) -> Point:
    flagged, total = int(session.flagged.sum()), session.n_responses
    sentences = [
        f"parm flags {flagged:,} of {total:,} scores ({flagged / max(total, 1):.1%}) as likely "
        f"wrong, {wrong_phrase(session_wrong(session.results))}: each item's flags are the top "
        "of its queue (the scores the answers most like them dispute most), as many as it has "
        "estimated wrong scores."
    ]
    model = model_comparison(session)
    if model is None:
        sentences.append("parm's own agreement with the scores cannot be judged: the run was "
                         "not cross-fitted (cross_fit_folds).")  # fmt: skip
    else:
        sentences.append(sentence(model.sentence))
    check = flags_check(session)
    if check is not None:
        sentences.append(sentence(check.sentence))
    small = sum(s.small for s in session.overview)
    if small:
        sentences.append(
            f"{small} of {len(session.results)} item(s) have {SMALL_RULE}: parm's figures for "
            "each of them rest on a few answers."
        )
    weak = (model is not None and not model.within) and not (check is not None and check.within)
    return Point("Scores that look wrong, and how sure parm is", tuple(sentences), weak)


# -- attention -----------------------------------------------------------------------------------
RATERS, MODEL = "raters", "model"


def attention_items(session: SessionResult) -> list[tuple[str, str, Comparison]]:
    """(item, why, comparison) for the items that need attention, most first: those whose
    raters agree under the minimum (why RATERS, lowest first), then those whose model falls
    short of their raters by more than the degradation limit (why MODEL; not judged on an item
    too small for its scores)."""
    found = [(item, RATERS, c) for item, c, _ in items_below(session)]
    named = {item for item, _, _ in found}
    for result, row in zip(session.results, session.overview):
        short = degradation(result)
        if row.item in named or row.small or short is None or short.within is not False:
            continue
        found.append((row.item if session.by_item else "the scores", MODEL, short))
    return found


def degradation(result) -> Comparison | None:
    """The model's cross-fitted agreement with rater 1 against the two raters' own on the
    answers both scored, under the field's degradation limit; None without a second rater or
    cross-fitting."""
    second = result.second_rater
    model = model_against_first(result)
    if second is None or second.human_human is None or model is None:
        return None
    name = "qwk" if "qwk" in second.human_human and model and "qwk" in model else "kappa"
    first, other = raters_named(result)
    return compare(
        f"the model's cross-fitted {_label(name)} against {first}", model[name],
        f"that of {first} and {other},", second.human_human[name], DEGRADATION,
    )  # fmt: skip


def model_against_first(result) -> dict | None:
    """The cross-fitted model's agreement with rater 1 on the answers both raters scored
    (engine.audit.queue.second_rater.cross_fitted_vs_first); None without cross-fitting."""
    from engine.audit.queue.second_rater import cross_fitted_vs_first

    responses = result.responses
    if result.cross_fit is None:
        return None
    return cross_fitted_vs_first(responses.scores, responses.second_scores,
                                 result.cross_fit.predicted, responses.n_classes,
                                 responses.ordered)  # fmt: skip


def raters_named(result) -> tuple[str, str]:
    """The two raters of an item with a second score column, named as every output names them
    (engine.input.several_reads.read_pair)."""
    return read_pair([result.responses.reads])


def _attention_point(session: SessionResult, items: list) -> Point:
    sentences = []
    raters = needs_word(session)
    if raters:
        sentences.append("Raters who need a word: "
                         + "; ".join(f"{r.rater} ({r.verdict})" for r in raters) + ".")  # fmt: skip
    elif session.raters is not None:
        sentences.append("No rater needs a word: every judged rater is fine.")
    disputed_items = items_below(session)  # `items`' RATERS entries, with their pairs
    if disputed_items:
        label = disputed_items[0][1].figure.split()[1]  # "the QWK of ..." -> "QWK"
        # The pair: an item's other pairs may agree well (Powergrading's item 3: G1 and G2
        # 0.700 in the item-by-item table, G1 and G3 0.511 here).
        # Named where there are more than two raters (with two, the pair is the only one).
        assert session.reads is not None  # disputed items come from its pairs
        several = len(session.reads.raters) > 2
        listed = []
        for item, c, pair in disputed_items:
            assert c.value is not None  # judged: items_below keeps only those
            listed.append(f"{item} ({pair + ', ' if several else ''}{c.shown(c.value)})")
        sentences.append(
            f"Items whose raters agree least ({label}{' of the least-agreeing pair' * several} "
            f"under {MINIMUM} of {AGREE:.2f}): " + _listed(listed) + "."
        )
    model = [(item, c) for item, why, c in items if why == MODEL]
    if model and not session.by_item:
        sentences.append(sentence(model[0][1].sentence) + " The model, not the raters, is at "
                         "odds; the scores themselves hold together.")  # fmt: skip
    elif model:
        sentences.append(
            "Items where the model, not the raters, is at odds (its cross-fitted agreement more "
            f"than {DEGRADATION_THRESHOLD:.2f} below the raters'): "
            + _listed([f"{item} ({c.gap()})" for item, c in model]) + "."
        )  # fmt: skip
    if not items:
        sentences.append("No item's figures call for attention by the rules above.")
    # Only the scoring calls for the lead's action: a model at odds with agreeing raters is parm's.
    return Point("Who and what needs attention", tuple(sentences), bool(raters or disputed_items))


def needs_word(session: SessionResult) -> list:
    """The judged raters with a verdict other than fine, farthest from the rest first."""
    if session.raters is None:
        return []
    return [r for r in session.raters.rows if r.judged and r.verdict != "fine"]


def _listed(names: list[str], shown: int = 5) -> str:
    more = f", and {len(names) - shown} more (the items table)" if len(names) > shown else ""
    return ", ".join(names[:shown]) + more


# -- what to do first ----------------------------------------------------------------------------
def _steps(session, raters: Point, items, review) -> list[str]:
    steps = []
    if raters.concern:
        where = [item for item, why, _ in items[:NAMED] if why == RATERS]
        start = "" if not where else (
            f", starting with item{'s' if len(where) > 1 else ''} {', '.join(where)}")  # fmt: skip
        steps.append(f"Go over the rubric with the raters{start}: where raters disagree, every "
                     "score is uncertain, whoever gave it.")  # fmt: skip
    words = [r.rater for r in needs_word(session)]
    if words:
        steps.append(f"Talk to {', '.join(words[:NAMED])} about their verdicts (the Raters "
                     "section gives each one's figures and rule).")  # fmt: skip
    if session.reads is not None and session.reads.third_reads:
        steps.append(f"Have another rater read the {session.reads.third_reads:,} answers "
                     "consensus.csv ranks (third_read_rank 1 first): their reads disagree and "
                     "the consensus is unsure.")  # fmt: skip
    steps.append(_review_step(session, review))
    return steps


def _review_step(session, review: dict | None) -> str:
    """Review the flags: all of them where parm's model meets the minimum; as a reading list
    where it does not but the flags pick out disputed scores; the top of the queue only where
    neither holds."""
    flagged = int(session.flagged.sum())
    if not flagged:
        return "Nothing is flagged: spot-check a few scores of each item in the review."
    model, check = model_comparison(session), flags_check(session)
    if review is not None and review.get("status") == "reviewed":
        left = review["counts"]["flagged"]["undecided"]
        head = f"Finish the review: {left:,} of {flagged:,} flagged scores are still undecided"
    else:
        head = f"Review the {flagged:,} flagged scores, most severe first (open the file in parm)"
    if model is not None and model.within:
        return head + "."
    weak = ("the run was not cross-fitted, so how good parm's model is cannot be said"
            if model is None else "parm's model is under the field's minimum")  # fmt: skip
    if check is not None and check.within:
        return (f"{head}, as a reading list: {weak}, though another read disputes the "
                "scores its severity alone flags more often than the other scores.")  # fmt: skip
    return (f"Read only the top of the review queue, as a reading list: {weak} on this file, "
            "so its flags are not findings.")  # fmt: skip
