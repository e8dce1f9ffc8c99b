"""The examples of the README and the docs pages, as the docs-example tier runs them.

Every ```bash and ```python block of the README and of ``docs/**/*.md`` is an example. An HTML comment on the line
before a block, ``<!-- example: KEY[=VALUE] ... -->``, says how it relates to the others (names hold across files: a
docs page may name an example of the README, and the other way round):

- ``id=NAME``: a name other examples can refer to;
- ``after=A,B``: it needs what examples A and B wrote (their run folders are linked into its folder);
- ``continues=A``: a Python block that goes on from block A: A's variables, in A's folder;
- ``alternatives``: each command of the bash block is another way to do one thing, each run from the block's
  starting folder (the one-GPU, torchrun and accelerate lines of one job, say).

An example without ``after`` or ``continues`` starts in an empty folder, as a reader who copies only it would.
Commands (``st-contrastive COMMAND ...`` and the paper scripts, ``python recipes/NAME.py ...``) are shrunk only by
capping steps and sizes (:data:`CAPS`, appended or lowered, never raised); Python blocks by the same caps applied
where they take effect (trainer steps and batch, corpus and NLI rows, evaluation rows), which the scripts, run in
the same process, meet too. Placeholders the docs use for "your model" (``MODEL``, ``PATH``) name the default model.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FENCE = re.compile(r"^```(\w*)\s*$")
MARKUP = re.compile(r"^<!--\s*example:(.*?)-->\s*$")
PLACEHOLDERS = ("MODEL", "PATH")

# Per sub-command, and per script of recipes/ by its path: option -> largest value an example runs with. An option the
# command gives is lowered to the cap, one it does not give is appended. These are sizes and steps only: what an
# example does stays what it says. A script without a row here fails the tier rather than run at the paper's size.
TRAINING = {"--max-steps": 2, "--batch-size": 4, "--eval-max-rows": 40}
DOCUMENTS = {"--max-rows": 8}
CAPS: dict[str, dict[str, int]] = {
    "declutr": TRAINING | DOCUMENTS | {"--max-span-length": 64, "--mini-batch-size": 2},
    "declutr-ablation": TRAINING | DOCUMENTS | {"--max-span-length": 64, "--max-seconds": 2},
    "simcse": TRAINING | DOCUMENTS | {"--max-sentences": 64},
    "tsdae": TRAINING | DOCUMENTS | {"--max-sentences": 64},
    "ct": TRAINING | DOCUMENTS | {"--max-sentences": 64},
    "supcon": TRAINING | {"--max-rows": 64, "--batch-size": 16, "--mini-batch-size": 8},
    "supcon-sweep": {"--max-steps": 2, "--batch-size": 16, "--max-rows": 64, "--eval-max-rows": 40},
    "chain": {
        "--declutr-steps": 2,
        "--supcon-steps": 2,
        "--batch-size": 4,
        "--eval-max-rows": 40,
        "--max-span-length": 64,
    }
    | DOCUMENTS,
    "pretrain-mlm": {
        "--max-steps": 2,
        "--batch-size": 4,
        "--max-rows": 8,
        "--vocab-size": 2000,
        "--hidden-size": 64,
        "--num-layers": 1,
        "--num-heads": 2,
        "--eval-blocks": 4,
        "--save-steps": 2,
    },
    "multiview": {
        "--max-steps": 2,
        "--batch-size": 40,
        "--max-rows": 2,
        "--max-sentences": 200,
        "--eval-max-rows": 40,
        "--dim": 32,
        "--word-dim": 32,
        "--vocab-size": 2000,
    },
    # 1 % of 600 rows is 6 labels (SetFit needs two of one class for a positive pair). One round of the simulated
    # oracle; a person's file (12 unlabelled rows) still gets a round of queries, so acquisition runs too.
    "active": {
        "--num-seeds": 1,
        "--pool-size": 600,
        "--budget": 0.01,
        "--test-size": 40,
        "--epochs": 1,
        "--from-base-epochs": 1,
        "--min-steps-per-class": 0,
    },
    "evaluate": {"--eval-max-rows": 40},
    "parse": {"--max-rows": 2},
    # The paper scripts take only the options a reader would change; each of these is one of them.
    "recipes/declutr.py": TRAINING | DOCUMENTS | {"--max-span-length": 64},
    "recipes/supcon_nli.py": TRAINING | {"--max-rows": 64, "--batch-size": 16},
    "recipes/multiview.py": {
        "--max-steps": 2,
        "--batch-size": 40,
        "--max-rows": 2,
        "--max-sentences": 200,
        "--eval-max-rows": 40,
        "--dim": 32,
        "--word-dim": 32,
    },
    "recipes/scale_active_learning.py": {
        "--num-seeds": 1,
        "--pool-size": 600,
        "--budget": 0.01,
        "--test-size": 40,
        "--epochs": 1,
    },
}
# Options whose cap stands only when the command already gives them (appending them would change what it does).
ONLY_LOWERED = {"--mini-batch-size", "--max-span-length", "--max-seconds"}


@dataclass
class Example:
    path: Path
    line: int  # of the opening fence
    language: str  # "bash" or "python"
    code: str
    options: dict[str, str] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return self.options.get("id") or f"{self.path.name}:{self.line}"

    @property
    def after(self) -> list[str]:
        return [name for name in self.options.get("after", "").split(",") if name]

    @property
    def needs(self) -> list[str]:
        return [*self.after, *[name for name in [self.options.get("continues")] if name]]


def documents() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("**/*.md"))]


def examples(paths: list[Path] | None = None) -> list[Example]:
    """Every bash and python block of the docs, in document order, with its markup."""
    found = []
    for path in paths or documents():
        lines = path.read_text(encoding="utf-8").splitlines()
        number = 0
        while number < len(lines):
            opening = FENCE.match(lines[number])
            if not opening:
                number += 1
                continue
            end = next(k for k in range(number + 1, len(lines)) if lines[k].startswith("```"))
            markup = MARKUP.match(lines[number - 1]) if number else None
            if opening.group(1) in ("bash", "python"):
                found.append(
                    Example(
                        path,
                        number + 1,
                        opening.group(1),
                        "\n".join(lines[number + 1 : end]),
                        parse_markup(markup.group(1)) if markup else {},
                    )
                )
            elif markup:
                raise ValueError(f"{path.name}:{number}: example markup on a ```{opening.group(1)} block")
            number = end + 1
    names = [example.name for example in found]
    repeated = sorted({name for name in names if names.count(name) > 1})
    if repeated:  # names hold across files, so one page's id must not shadow another's
        raise ValueError(f"more than one example is named {', '.join(repeated)}")
    for example in found:
        unknown = [name for name in example.needs if name not in names]
        if unknown:
            raise ValueError(f"{example.name}: refers to no example named {', '.join(unknown)}")
    return found


def parse_markup(text: str) -> dict[str, str]:
    options = {}
    for word in shlex.split(text):
        key, _, value = word.partition("=")
        if key not in ("id", "after", "continues", "alternatives"):
            raise ValueError(f"unknown example markup {key!r}")
        options[key] = value or "yes"
    return options


def in_run_order(found: list[Example]) -> list[Example]:
    """Document order, except that an example runs after those it names in ``after`` and ``continues``."""
    by_name, ordered, placed = {example.name: example for example in found}, [], set()

    def place(example: Example) -> None:
        if example.name in placed:
            return
        for name in example.needs:
            place(by_name[name])
        placed.add(example.name)
        ordered.append(example)

    for example in found:
        place(example)
    return ordered


def chains(found: list[Example]) -> list[list[Example]]:
    """The examples in sets that run together, each set in run order: an example, those it needs and those that
    need it. Sets come in the order of their first example."""
    leader = {example.name: example.name for example in found}

    def root(name: str) -> str:
        while leader[name] != name:
            name = leader[name]
        return name

    for example in found:
        for name in example.needs:
            leader[root(name)] = root(example.name)
    sets: dict[str, list[Example]] = {}
    for example in in_run_order(found):
        sets.setdefault(root(example.name), []).append(example)
    return list(sets.values())


def commands(code: str) -> list[list[str]]:
    """A bash block as argv lists: continuation lines joined, comments dropped, ``NAME="..."`` assignments of the
    block expanded where ``$NAME`` is used."""
    variables, found = {}, []
    for line in code.replace("\\\n", " ").splitlines():
        words = shlex.split(line, comments=True)
        if not words:
            continue
        assignment = re.fullmatch(r"([A-Z_][A-Z0-9_]*)=(.*)", words[0]) if len(words) == 1 else None
        if assignment:
            variables[assignment.group(1)] = assignment.group(2)
            continue
        expanded = []
        for word in words:
            match = re.fullmatch(r"\$([A-Z_][A-Z0-9_]*)", word)
            expanded += shlex.split(variables[match.group(1)]) if match else [word]
        found.append(expanded)
    return found


def shrink(argv: list[str], default_model: str) -> list[str]:
    """An ``st-contrastive`` argv (without the program), or a script's (its path, then its options), with its steps
    and sizes capped, placeholders resolved."""
    argv = [default_model if word in PLACEHOLDERS else word for word in argv]
    if not argv or "--help" in argv or "-h" in argv:
        return argv
    caps = CAPS.get(argv[0], {})
    argv = list(argv)
    for option, cap in caps.items():
        if option in argv:
            position = argv.index(option) + 1
            if float(argv[position]) > cap:
                argv[position] = str(cap)
        elif option not in ONLY_LOWERED:
            argv += [option, str(cap)]
    return argv
