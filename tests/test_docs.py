"""The docs site (docs/, mkdocs.yml): the reference is made from the code and is fresh, every
command, option, setting, output column, key and exit code is in it, every link between the
pages resolves, and the examples of the tutorial and the how-to guides run.

The examples: in docs/tutorial/ and docs/how-to/, each page's ```bash blocks are read for
`parm audit|export|embed|review|cache` commands and its ```python blocks, in page order, in a
fresh folder holding a copy of sample_data/. A command that names sample_data/ must run and
exit 0; another runs when every file it reads exists there by its turn (made by the page's
earlier commands; `parm cache` reads none), and is left out otherwise (examples with files of your own, such as
answers.csv). A ```python block runs when the files it opens (open(...), read_csv(...)) exist. Commands that
open the app (`parm FILE`) are not run.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re
import shlex
import shutil
import sys
import unicodedata
from pathlib import Path

import pytest
from helpers import ROOT

DOCS = ROOT / "docs"
sys.path.insert(0, str(DOCS))
import make_examples  # noqa: E402
import make_reference  # noqa: E402

REFERENCE = DOCS / "reference"
SUBCOMMANDS = {"audit", "export", "embed", "review", "cache"}
# Options whose value is a file the command reads.
READS_FILE = {"--embeddings", "--answers", "--config"}


def page(name: str) -> str:
    return (REFERENCE / name).read_text(encoding="utf-8")


def test_the_generated_reference_is_fresh():
    assert make_reference.stale() == [], "run python docs/make_reference.py"


def test_every_generated_block_has_a_generator_and_every_generator_a_page():
    names = {
        match["name"]
        for path in DOCS.rglob("*.md")
        for match in make_reference.BLOCK.finditer(path.read_text(encoding="utf-8"))
    }
    assert names == set(make_reference.GENERATORS)


def test_every_command_and_option_is_in_the_cli_reference():
    from typer.main import get_command

    from parm_tui.cli import app

    text = page("cli.md")

    def walk(path, command):
        assert f"### `{path}`" in text
        section = text.split(f"### `{path}`", 1)[1].split("\n### ", 1)[0]
        for param in command.params:
            for name in [*param.opts, *param.secondary_opts]:
                shown = name if name.startswith("-") else (param.metavar or name.upper())
                assert f"`{shown}`" in section, (path, name)
        for name, sub in getattr(command, "commands", {}).items():
            walk(f"{path} {name}", sub)

    walk("parm", get_command(app))


def test_every_setting_is_in_the_settings_reference():
    from engine.input.settings.declared import SETTINGS

    rows = re.findall(r"^\| `(\w+)` \|", page("settings.md"), flags=re.M)
    assert rows == [setting.name for setting in SETTINGS]


def test_every_output_file_and_column_is_in_the_outputs_reference():
    from engine.outputs import declared
    from engine.outputs.names import MANIFEST_FILE, SET_FILES

    text = page("outputs.md")
    for name in (*SET_FILES, MANIFEST_FILE):
        assert f"| `{name}` |" in text, name
    for table in declared.TABLES:
        section = text.split(f"### `{table.file}`", 1)[1].split("\n### ", 1)[0]
        for column in (*table.columns, *table.families):
            assert f"- `{column.name}`" in section, (table.file, column.name)


def bindings_in_the_app():
    """(class name, key as shown, action) for every binding a class of parm_tui declares, found by
    importing every module of the package (not the reference's own list of holders)."""
    import parm_tui

    found = []
    for info in pkgutil.walk_packages(parm_tui.__path__, "parm_tui."):
        module = importlib.import_module(info.name)
        for _, cls in inspect.getmembers(module, inspect.isclass):
            if cls.__module__ == module.__name__ and "BINDINGS" in vars(cls):
                for binding in vars(cls)["BINDINGS"]:
                    shown = binding.key_display or binding.key.split(",")[0].strip()
                    found.append((cls.__name__, shown, binding.action))
    return found


def test_every_key_of_the_app_is_in_the_keys_reference():
    text = page("app.md")
    found = bindings_in_the_app()
    assert len(found) > 40
    for name, key, action in found:
        section = text.split(f"\n### {name}\n", 1)[1].split("\n### ", 1)[0]
        rows = [line for line in section.splitlines() if f"| `{action}` |" in line]
        assert any(row.startswith(f"| `{key}`") for row in rows), (name, key, action)


def test_every_exit_code_is_in_the_errors_reference():
    from engine.core import errors
    from parm_tui.headless import EXIT_CODES

    text = page("errors.md")
    for code, _ in EXIT_CODES:
        assert re.search(rf"^\| {code} \|", text, flags=re.M), code
    for name, cls in inspect.getmembers(errors, inspect.isclass):
        if issubclass(cls, errors.ParmError):
            assert f"| `{name}` |" in text, name


def test_the_site_builds_strictly(tmp_path):
    """What .ci/run does: a warning (a broken link or anchor, a page not in the navigation)
    fails the build. Skipped where the docs extra is not installed."""
    import subprocess

    pytest.importorskip("mkdocs")
    pytest.importorskip("material")
    command = [sys.executable, "-m", "mkdocs", "build", "--strict", "-d", str(tmp_path / "site")]
    built = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert built.returncode == 0, built.stderr
    assert (tmp_path / "site" / "reference" / "outputs.html").is_file()


# --- links --------------------------------------------------------------------------------
LINK = re.compile(r"\]\(([^)\s]+)\)")


def slug(heading: str) -> str:
    """The anchor Python-Markdown's toc extension gives a heading (its default slugify)."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading).replace("`", "").replace("*", "")
    text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    text = re.sub(r"[^\w\s-]", "", text).strip().lower()
    return re.sub(r"[-\s]+", "-", text)


def anchors(path: Path) -> set[str]:
    text = re.sub(r"```.*?```", "", path.read_text(encoding="utf-8"), flags=re.S)
    return {slug(m[1]) for m in re.finditer(r"^#{1,6} (.+)$", text, flags=re.M)}


def test_every_link_between_the_pages_resolves():
    broken = []
    for path in sorted(DOCS.rglob("*.md")):
        text = re.sub(r"```.*?```", "", path.read_text(encoding="utf-8"), flags=re.S)
        text = re.sub(r"`[^`\n]*`", "", text)  # code spans hold no links
        for target in LINK.findall(text):
            if re.match(r"[a-z]+:", target):
                continue
            file, _, anchor = target.partition("#")
            linked = (path.parent / file).resolve() if file else path
            if not linked.is_file():
                broken.append(f"{path.relative_to(ROOT)}: {target}")
            elif anchor and linked.suffix == ".md" and anchor not in anchors(linked):
                broken.append(f"{path.relative_to(ROOT)}: {target} (no such heading)")
    assert broken == []


def test_the_readme_links_into_the_docs_a_clone_has_and_says_what_to_do_after_command_1():
    """The front page: every link resolves in a clone (no ../shared/data, which a clone lacks),
    anchors too; "what to do after command 1" follows the two commands, before the test
    suite's paragraph; the trust section keeps one short table."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    prose = re.sub(r"```.*?```", "", readme, flags=re.S)
    for target in LINK.findall(prose):
        if re.match(r"[a-z]+:", target):
            continue
        file, _, anchor = target.partition("#")
        assert "shared" not in file, target
        linked = (ROOT / file).resolve()
        assert linked.is_file() and linked.is_relative_to(ROOT), target
        assert not anchor or anchor in anchors(linked), target
    commands = [m.start() for m in re.finditer(r"^```bash\n", readme, flags=re.M)][:2]
    after = readme.index("What to do after command 1")
    assert commands[1] < after < readme.index("`.ci/run` installs")
    trust = readme.split("## How far to trust it", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in trust.splitlines() if line.startswith("| ")]
    assert 3 <= len(rows) <= 8 and sum(row.startswith("| --- ") for row in rows) == 1


def test_every_page_is_in_the_navigation():
    yaml = pytest.importorskip("yaml")

    def listed(node):
        if isinstance(node, str):
            yield node
        elif isinstance(node, list):
            for entry in node:
                yield from listed(entry)
        elif isinstance(node, dict):
            for value in node.values():
                yield from listed(value)

    config = yaml.load((ROOT / "mkdocs.yml").read_text(), Loader=yaml.BaseLoader)
    pages = {str(p.relative_to(DOCS)) for p in DOCS.rglob("*.md")}
    assert set(listed(config["nav"])) == pages


# --- the examples -------------------------------------------------------------------------
FENCE = re.compile(
    r"^(?P<indent>[ \t]*)```(?P<lang>\w*)\n(?P<body>.*?)^(?P=indent)```", re.M | re.S
)
# The files a Python example reads: string literals given to open(...) or read_csv(...).
OPENED = re.compile(r"(?:open|read_csv)\(\s*[\"']([^\"']+)[\"']")
# The tutorial's pages follow one another in one folder (the review exports the first audit);
# each how-to page starts afresh.
TUTORIAL = [DOCS / "tutorial" / f"{name}.md" for name in ("first-audit", "review", "session")]
EXAMPLES = {"tutorial": TUTORIAL} | {
    f"how-to/{path.stem}": [path] for path in sorted(DOCS.glob("how-to/*.md"))
}


def examples(path: Path):
    """("parm", argv) and ("python", code) in page order."""
    for block in FENCE.finditer(path.read_text(encoding="utf-8")):
        body = inspect.cleandoc("\n" + block["body"]) if block["indent"] else block["body"]
        if block["lang"] == "python":
            yield "python", body
        elif block["lang"] == "bash":
            for line in body.replace("\\\n", " ").splitlines():
                words = shlex.split(line, comments=True)
                if words[:1] == ["parm"] and len(words) > 1 and words[1] in SUBCOMMANDS:
                    yield "parm", words[1:]


def files_read(argv: list[str]) -> list[str]:
    """The files a command reads: its positional arguments and the values of READS_FILE."""
    read, skip = [], False
    for previous, word in zip(["", *argv], argv):
        if skip:
            skip = False
            if previous in READS_FILE:
                read.append(word)
            continue
        if word.startswith("-"):
            skip = "=" not in word and word not in ("--force", "--quiet", "-q", "--no-guess")
        elif word not in SUBCOMMANDS and word not in ("import", "clear"):
            read.append(word)
    return read


def test_the_examples_are_found():
    """The reader on the examples: every tutorial page has a command that runs on the sample."""
    assert sorted(TUTORIAL) == sorted(DOCS.glob("tutorial/*.md"))
    for path in TUTORIAL:
        commands = [argv for kind, argv in examples(path) if kind == "parm"]
        assert any("sample_data/" in " ".join(argv) for argv in commands), path.name
    assert files_read(["audit", "a.csv", "--out", "x", "--embeddings", "v.npy", "--force"]) == [
        "a.csv",
        "v.npy",
    ]
    assert files_read(["review", "import", "a.csv", "d.csv"]) == ["a.csv", "d.csv"]


@pytest.mark.slow
@pytest.mark.parametrize("pages", EXAMPLES.values(), ids=EXAMPLES.keys())
def test_the_examples_run(
    pages, tmp_path, monkeypatch, sample_embeddings, sessions_embeddings_file
):
    """The two fixtures embed the samples once per test session, into the embedding cache the
    examples' runs read (tests/conftest.py), so they embed nothing themselves."""
    from parm_tui.cli import main

    shutil.copytree(ROOT / "sample_data", tmp_path / "sample_data")
    monkeypatch.chdir(tmp_path)
    for path, (kind, example) in ((p, e) for p in pages for e in examples(p)):
        text = example if kind == "python" else " ".join(example)
        needed = files_read(example) if kind == "parm" else OPENED.findall(example)
        ready = all(Path(f).exists() for f in needed) and (kind == "parm" or needed)
        if "sample_data/" not in text and not ready:
            continue
        if kind == "python":
            exec(compile(example, f"{path.name}:python", "exec"), {"__name__": "__doc_example__"})
            continue
        with pytest.raises(SystemExit) as leaving:
            main(example)
        assert leaving.value.code in (0, None), f"parm {text}"


# --- the output the tutorial shows ---------------------------------------------------------
# A figure the prose quotes from an example: a three-decimal figure or an "N of M" count.
QUOTED = re.compile(r"\b\d\.\d{3}\b|\b\d[\d,]* of [\d,]+\b")


def test_every_example_block_follows_its_command_and_its_prose_quotes_it():
    """Each example block has a `parm audit` command above it, and every figure the paragraph
    after it quotes is in it, so the prose goes stale with the block, and the check below
    catches both."""
    found = 0
    for path in make_examples.pages():
        text = path.read_text(encoding="utf-8")
        for match in make_examples.BLOCK.finditer(text):
            found += 1
            assert make_examples.command_before(text, match.start())[0] == "audit"
            paragraph = text[match.end() :].strip("\n").split("\n\n", 1)[0]
            for figure in QUOTED.findall(paragraph):
                assert figure in match["body"], (path.name, figure)
    assert found >= 2


@pytest.mark.slow
def test_the_tutorials_shown_output_is_what_its_commands_print_now(
    sample_embeddings, sessions_embeddings_file
):
    """The tutorial's audits run again (about 30 s; the fixtures fill the embedding cache
    they read): what they print now is what the pages show (python docs/make_examples.py
    writes it)."""
    import difflib

    for page, fresh in make_examples.fresh_runs(make_examples.pages()).items():
        shown = page.read_text(encoding="utf-8")
        diff = "\n".join(difflib.unified_diff(shown.splitlines(), fresh.splitlines(), lineterm=""))
        assert fresh == shown, f"{page.name} is stale (python docs/make_examples.py):\n{diff}"
