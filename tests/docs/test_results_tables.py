"""Every results table of the README and the docs pages names the command that made it, and its wall time.

A table is a header row, a ``|---|`` separator and body rows (README.md, docs/*.md and the reports of the lab,
recipes/*/README.md). A **results table** is one of measured figures: a body cell begins with a decimal number (``86.72``, ``**87.29 ± 0.19**``, ``2.75 s``, ``22.9×``, ``+0.03``). Targets (``≤ 1.05``), settings
(``128``, ``4,518 Wikipedia articles``) and option or reference tables have none, so they are not results; no table
of the docs needs an exception to this rule.

The line directly before a results table says what made it:

    <!-- results: COMMAND | WALL TIME -->

COMMAND is the one the page names, several joined by ``&&`` or ``;``, each of them checked here without running:
``st-contrastive SUBCOMMAND ...`` must parse with that command's own parser (a comparison command passes the
options it does not take on to the command it runs, as its ``main`` does); ``python PATH ...`` and
``.venv/bin/python PATH ...`` must name a file of the repository (``python -m benchmarks`` the package,
``python -c CODE`` code that compiles); ``make TARGET`` a target of the Makefile. WALL TIME is what the page states
for the command (on 2 cores), or ``wall time not recorded``. A marker with no table after it is stale. The tables
themselves are not retrained: that takes hours. Where the command is one script of recipes/ or benchmarks/ with
``TABLES`` (its first argument NAME names the table, ``table`` when it has one), the page shows cell for cell what
``TABLES[NAME]()`` prints from the results kept beside the script.
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import importlib.util
import io
import re
import shlex
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
MARKER = re.compile(r"^\s*<!--\s*results:(.*?)-->\s*$")
MEASURED = re.compile(r"^[+\-−]?\d+\.\d+")  # a cell opening with a decimal number: 86.72, 25.79 ± 3.59, 2.75 s
PYTHONS = ("python", "python3", ".venv/bin/python")
# The scripts that print results tables: the lab's, and benchmarks/' for kept benchmark results.
SCRIPT_FOLDERS = ("recipes/", "benchmarks/")
# The comparison commands parse their own options and pass the rest on to the command they run.
PASSED_ON = {"declutr-ablation": "declutr", "chain": "declutr", "supcon-sweep": "supcon"}


@dataclass
class Table:
    path: str  # as shown in messages: README.md, docs/scale.md
    line: int  # of the header row, from 1
    header: str
    rows: list[list[str]]
    marker: str | None  # the text of the results marker on the line before, if there is one

    @property
    def is_results(self) -> bool:
        return any(MEASURED.match(cell.strip("* ")) for row in self.rows for cell in row)


def cells(row: str) -> list[str]:
    row = row.strip().removeprefix("|")
    row = row[:-1] if row.endswith("|") and not row.endswith("\\|") else row
    return [cell.strip() for cell in re.split(r"(?<!\\)\|", row)]  # \| is a pipe inside a cell


def is_separator(line: str) -> bool:
    line = line.strip()
    return "|" in line and "-" in line and set(line) <= set("|-: ")


def tables(text: str, path: str) -> list[Table]:
    """The tables of a page outside code blocks, each with the results marker on the line before it (if any)."""
    lines, found, in_code = text.splitlines(), [], False
    for number, line in enumerate(lines):
        if line.strip().startswith("```"):
            in_code = not in_code
        if in_code or number == 0 or not is_separator(line) or "|" not in lines[number - 1]:
            continue
        body = []
        for row in lines[number + 1 :]:
            if "|" not in row or not row.strip():
                break
            body.append(cells(row))
        marker = MARKER.match(lines[number - 2]) if number >= 2 else None
        found.append(Table(path, number, lines[number - 1].strip(), body, marker.group(1).strip() if marker else None))
    return found


def stale_markers(text: str, path: str) -> list[str]:
    """Results markers outside code blocks that no table follows, as FILE:LINE."""
    marked = {table.line - 1 for table in tables(text, path) if table.marker is not None}
    found, in_code = [], False
    for number, line in enumerate(text.splitlines(), 1):
        if line.strip().startswith("```"):
            in_code = not in_code
        elif not in_code and MARKER.match(line) and number not in marked:
            found.append(f"{path}:{number}")
    return found


def commands(text: str) -> list[list[str]]:
    """The argv of each command of a marker: shell words, commands joined by && or ;."""
    lexer = shlex.shlex(text, posix=True, punctuation_chars=";&")
    lexer.whitespace_split, lexer.commenters = True, ""
    argvs: list[list[str]] = [[]]
    for word in lexer:
        if word in ("&&", ";"):
            argvs.append([])
        else:
            argvs[-1].append(word)
    return [argv for argv in argvs if argv]


def parse_error(argv: list[str]) -> str | None:
    """argparse's last line on stderr for ``st-contrastive argv`` (an error, or a deprecated spelling's warning);
    None when it parses. The parsers are built and read, nothing runs."""
    from st_contrastive.commands.cli import COMMANDS

    if not argv or argv[0] not in COMMANDS:
        return "no such command"

    def parser(name):
        return importlib.import_module(COMMANDS[name][0].__module__).build_parser()

    said = io.StringIO()
    with contextlib.redirect_stderr(said), contextlib.redirect_stdout(io.StringIO()), contextlib.suppress(SystemExit):
        command, args = parser(argv[0]), argv[1:]
        if argv[0] in PASSED_ON:  # as its main() does: its own options, then the rest under its name
            _, args = command.parse_known_args(args)
            outer, command = command, parser(PASSED_ON[argv[0]])
            command.prog = outer.prog
        command.parse_args(args)
    lines = said.getvalue().strip().splitlines()
    return lines[-1].removeprefix(f"{command.prog}: ") if lines else None


@functools.cache
def make_targets() -> set[str]:
    text = (ROOT / "Makefile").read_text(encoding="utf-8")
    return set(re.findall(r"^([\w.-]+)\s*:(?!=)", text, flags=re.MULTILINE))


def command_problem(argv: list[str]) -> str | None:
    program, args = argv[0], argv[1:]
    if program == "st-contrastive":
        return parse_error(args)
    if program in PYTHONS and args[:1] == ["-m"]:
        module = ROOT / args[1].replace(".", "/") if len(args) > 1 else ROOT
        found = (module / "__main__.py").is_file() or module.with_suffix(".py").is_file()
        return None if len(args) > 1 and found else f"no module {' '.join(args[1:2])} in the repository"
    if program in PYTHONS and args[:1] == ["-c"]:
        try:
            compile(args[1], "<-c>", "exec")
        except (IndexError, SyntaxError) as error:
            return f"the code does not compile: {error}"
        return None
    if program in PYTHONS:
        return None if args and (ROOT / args[0]).is_file() else f"no file {' '.join(args[:1])} in the repository"
    if program == "make":
        missing = [word for word in args if "=" not in word and not word.startswith("-") and word not in make_targets()]
        return f"no target {', '.join(missing)} in the Makefile" if missing else None
    return "not a command this test checks (st-contrastive, python or make)"


def problems(table: Table) -> list[str]:
    """What keeps a results table from naming its command and wall time; each names the file and line."""
    if table.marker is None:
        return [
            (
                f"{table.path}:{table.line}: results table {table.header} has no "
                "'<!-- results: COMMAND | WALL TIME -->' line before it"
            )
        ]
    where = f"{table.path}:{table.line - 1}"
    command, _, wall = table.marker.partition(" | ")
    found = [] if wall.strip() else [f"{where}: no wall time after ' | ' ('wall time not recorded' if none is stated)"]
    if "](" in wall:  # the reproduce page lists the markers out of their page: a link to an anchor there breaks
        found.append(f"{where}: a link in the wall time ('{wall.strip()}'): name the section in words")
    argvs = commands(command)
    if not argvs:
        found.append(f"{where}: no command")
    for argv in argvs:
        problem = command_problem(argv)
        if problem:
            found.append(f"{where}: {' '.join(argv[:2])}: {problem}")
    return found


def pages() -> dict[str, str]:
    paths = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), *sorted((ROOT / "recipes").glob("*/README.md"))]
    return {path.relative_to(ROOT).as_posix(): path.read_text(encoding="utf-8") for path in paths}


DOCS_TABLES = [table for path, text in pages().items() for table in tables(text, path)]
RESULTS = [table for table in DOCS_TABLES if table.is_results]


def test_the_rule_finds_the_results_tables_of_the_docs():
    """Guards the parametrized test below, which would pass with nothing found."""
    assert len(DOCS_TABLES) >= 30 and len(RESULTS) >= 20


@pytest.mark.parametrize("table", RESULTS, ids=[f"{table.path}:{table.line}" for table in RESULTS])
def test_each_results_table_names_its_command_and_wall_time(table):
    assert problems(table) == []


def script(path: str):
    """A script of the lab as a module, imported from its file (the folders are not packages)."""
    # named by its path: benchmarks/tables.py must not take the name of the benchmarks package
    name = Path(path).with_suffix("").as_posix().replace("/", "_").replace("-", "_")
    spec = importlib.util.spec_from_file_location(name, ROOT / path)
    if spec.name in sys.modules:
        return sys.modules[spec.name]
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def printed_table(table: Table) -> Table | None:
    """The table the marker's one command prints, where that command is a script of recipes/ (or benchmarks/): run
    here, its ``TABLES[NAME]()`` for a first argument NAME (``table`` for a script of one table), from the results
    kept beside it. None for any other command, or a name the script has no table for."""
    argvs = commands(table.marker.partition(" | ")[0]) if table.marker else []
    if len(argvs) != 1 or argvs[0][0] not in PYTHONS or not argvs[0][1:2] or not argvs[0][1].startswith(SCRIPT_FOLDERS):
        return None
    argv = argvs[0]
    name = argv[2] if argv[2:3] and not argv[2].startswith("-") else "table"  # a script of several tables
    tables_of = getattr(script(argv[1]), "TABLES", {})
    return one_table(tables_of[name](), argv[1]) if name in tables_of else None


def one_table(text: str, path: str) -> Table:
    (found,) = tables(text, path)
    return found


def printed_difference(table: Table) -> str | None:
    """The first row where the page's table is not the one its script printed, as FILE:LINE; None when equal."""
    printed = printed_table(table)
    page = [cells(table.header), *table.rows]
    for number, (shown, written) in enumerate(zip(page, [cells(printed.header), *printed.rows])):
        if shown != written:
            return f"{table.path}:{table.line + number + (number > 0)}: {shown} where {printed.path} has {written}"
    if len(page) != len(printed.rows) + 1:
        return f"{table.path}:{table.line}: {len(page) - 1} rows where {printed.path} has {len(printed.rows)}"
    return None


PRINTED = [table for table in RESULTS if printed_table(table)]


def test_the_rule_finds_the_tables_that_scripts_print():
    """Guards the parametrized test below: the Matryoshka, multi-view, active-learning, DeCLUTR and benchmark tables."""
    assert len(PRINTED) >= 39


def test_no_results_table_is_transcribed():
    """Each results table is printed by a script of the lab, none copied by hand into its page."""
    assert [f"{table.path}:{table.line}" for table in RESULTS if not printed_table(table)] == []


@pytest.mark.parametrize("table", PRINTED, ids=[f"{table.path}:{table.line}" for table in PRINTED])
def test_a_table_that_a_script_prints_is_shown_as_printed(table):
    assert printed_difference(table) is None


def test_a_table_that_differs_from_what_its_script_printed_is_reported():
    path = "recipes/matryoshka/reproduce.py"
    marker = f"<!-- results: .venv/bin/python {path} nli-heads | 6 min -->\n"
    printed = script(path).TABLES["nli-heads"]()
    first_figure = re.search(r"\| (\d+\.\d+) ", printed).group(1)
    (table,) = tables(marker + printed.replace(first_figure, "99.99", 1), "page.md")
    assert printed_difference(table).startswith("page.md:4: ")
    assert "99.99" in printed_difference(table) and first_figure in printed_difference(table)
    (short,) = tables(marker + "\n".join(printed.splitlines()[:-1]), "page.md")
    assert printed_difference(short) == f"page.md:2: 1 rows where {path} has 2"


def test_every_marked_table_is_a_results_table():
    """The other way round from the test above: a table its page marks as results the rule takes for one too. A
    marker before an options or settings table, or measured figures the rule no longer reads (a change of MEASURED),
    is named here."""
    assert [f"{table.path}:{table.line}" for table in DOCS_TABLES if table.marker and not table.is_results] == []


def test_no_marker_is_stale():
    assert [where for path, text in pages().items() for where in stale_markers(text, path)] == []


# The detector itself, on small pages.

RESULTS_TABLE = "| arm | accuracy |\n|---|---|\n| ce | 86.72 |\n"


def test_a_results_table_without_a_marker_is_reported():
    (table,) = tables("Measured:\n\n" + RESULTS_TABLE, "page.md")
    assert table.is_results
    assert problems(table) == [
        "page.md:3: results table | arm | accuracy | has no '<!-- results: COMMAND | WALL TIME -->' line before it"
    ]


def test_options_targets_and_settings_tables_are_not_results_measured_figures_are():
    options = "| option | meaning |\n|---|---|\n| `--temperature` | τ, default `0.05` |\n| `--batch-size` | 16 |\n"
    targets = "| figure | target |\n|---|---|\n| step ratio | ≤ 1.05 |\n| parse | ≥ 1,000 sentences/s |\n"
    measured = "| cell | batched | ratio |\n|---|---|---|\n| binary | 1,011 sentences/s | **20.5×** |\n"
    assert [table.is_results for table in tables(f"{options}\n{targets}\n{measured}", "page.md")] == [
        False,
        False,
        True,
    ]


def test_a_marker_with_commands_that_exist_is_accepted():
    # supcon-sweep passes --temperature on to supcon, chain passes --max-span-length on to declutr
    marker = (
        "<!-- results: st-contrastive supcon-sweep --model m --supcon-weight 0 0.3 --temperature 0.1 && "
        "st-contrastive chain --model m --max-span-length 64; make bench && "
        "python benchmarks/tree_lstm_throughput.py && python -m benchmarks --only cached_memory"
        " | 100 min on 2 cores -->\n"
    )
    (table,) = tables(marker + RESULTS_TABLE, "page.md")
    assert problems(table) == []


@pytest.mark.parametrize(
    ("marker", "problem"),
    [
        (
            "st-contrastive declutr --max-steps 150 --no-such-option 1 | 5 min on 2 cores",
            "st-contrastive declutr: error: unrecognized arguments: --no-such-option 1",
        ),
        (
            "st-contrastive supcon-sweep --max-span-length 64 | 5 min on 2 cores",  # passed on to supcon, which lacks it
            "st-contrastive supcon-sweep: error: unrecognized arguments: --max-span-length 64",
        ),
        (
            "st-contrastive declutr --documents wiki | 5 min on 2 cores",  # a retired spelling
            "st-contrastive declutr: error: unrecognized arguments: --documents wiki",
        ),
        ("st-contrastive train | 5 min on 2 cores", "st-contrastive train: no such command"),
        ("make bench && make benchmark | 15 min on 2 cores", "make benchmark: no target benchmark in the Makefile"),
        (
            "python benchmarks/missing.py | 1 min on 2 cores",
            "python benchmarks/missing.py: no file benchmarks/missing.py in the repository",
        ),
        ("python -m nowhere | 1 min on 2 cores", "python -m: no module nowhere in the repository"),
        (
            "python -c 'print(' | 1 min on 2 cores",
            "python -c: the code does not compile: '(' was never closed (<-c>, line 1)",
        ),
        (
            "bash run.sh | 1 min on 2 cores",
            "bash run.sh: not a command this test checks (st-contrastive, python or make)",
        ),
        ("make bench", "no wall time after ' | ' ('wall time not recorded' if none is stated)"),
        (
            "make bench | 1 min ([below](#below))",
            "a link in the wall time ('1 min ([below](#below))'): name the section in words",
        ),
    ],
)
def test_a_marker_that_names_no_real_command_or_no_wall_time_is_reported(marker, problem):
    (table,) = tables(f"<!-- results: {marker} -->\n" + RESULTS_TABLE, "page.md")
    assert problems(table) == [f"page.md:1: {problem}"]  # the marker's file and line


def test_a_marker_that_no_table_follows_is_stale():
    text = "<!-- results: make bench | 15 min on 2 cores -->\n\n" + RESULTS_TABLE
    code = "\n```\n<!-- results: x | y -->\n```\n"  # a marker shown in a code block is text, not a marker
    assert stale_markers(text + code, "page.md") == ["page.md:1"]


# The SCALe report's kept results: recipes/scale-against-setfit/results.json, which its tables print from.
SCALE = script("recipes/scale-against-setfit/reproduce.py")


def test_the_scale_results_keep_what_the_tables_read_and_no_more():
    """Every run and arm a table of the report reads is kept, and nothing that no table reads."""
    SCALE.READ.clear()
    for name, table in SCALE.TABLES.items():
        if name != "runs":  # the list of every kept run's command reads them all
            table()
    assert SCALE.READ == {(run, arm) for run, entry in SCALE.RESULTS.items() for arm in entry["arms"]}


def test_each_kept_scale_run_has_every_level_of_each_seed_in_every_arm():
    """A run's arms hold the same seeds (the paired tables compare them seed by seed), each seed every level with its
    accuracy, seconds and steps; and the run says how to make it again."""
    for run, entry in SCALE.RESULTS.items():
        assert entry["command"].startswith("st-contrastive active ") and len(entry["commit"]) == 7, run
        seeds = {tuple(sorted(by_seed)) for by_seed in entry["arms"].values()}
        assert len(seeds) == 1 and len(next(iter(seeds))) >= 2, run
        for arm, by_seed in entry["arms"].items():
            for seed, levels in by_seed.items():
                assert list(levels) == list(SCALE.LEVELS), (run, arm, seed)
                assert all(len(values) == 3 and values[2] >= 0 for values in levels.values()), (run, arm, seed)


def test_the_final_runs_trained_at_todays_defaults_with_the_command_the_report_gives():
    """Every RoundTraining field there is today has the value the final table's runs trained with, and the command the
    report gives for them parses with today's parser."""
    from dataclasses import asdict

    from st_contrastive.config.scale import RoundTraining

    today = asdict(RoundTraining())
    readme = (ROOT / "recipes/scale-against-setfit/README.md").read_text(encoding="utf-8").replace("\\\n    ", "")
    assert SCALE.TODAY["trec"] in readme
    for dataset, run in SCALE.FINAL.items():
        assert {field: SCALE.RESULTS[run]["settings"][field] for field in today} == today, run
        assert parse_error(shlex.split(SCALE.TODAY[dataset])[1:]) is None
