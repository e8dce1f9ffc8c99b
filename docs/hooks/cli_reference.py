"""The command-line reference, written from the parsers at build time so it cannot drift from them.

A mkdocs hook: in a page, the line ``<!-- cli-reference -->`` becomes one section per entry of
``st_contrastive.commands.cli.COMMANDS``, holding the ``--help`` of that command's parser: ``build_parser().format_help()`` of
the recipe module that defines the command's function. A module without a ``build_parser`` of its own (one that only
imports another recipe's) is asked through its function instead, ``main(["--help"])``, which prints the same help
from the same parser. Building a parser imports no torch, so this takes a fraction of a second.
"""

from __future__ import annotations

import contextlib
import importlib
import io
import os

MARKER = "<!-- cli-reference -->"


def command_help(function) -> str:
    """The ``--help`` text of the command whose ``main`` is ``function``."""
    module = importlib.import_module(function.__module__)
    build_parser = getattr(module, "build_parser", None)
    if build_parser is not None and build_parser.__module__ == module.__name__:
        return build_parser().format_help()
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed), contextlib.suppress(SystemExit):
        function(["--help"])
    return printed.getvalue()


def reference() -> str:
    from st_contrastive.commands.cli import COMMANDS

    sections = []
    for name, (function, summary) in COMMANDS.items():
        text = command_help(function).rstrip()
        if not text:
            raise RuntimeError(f"st-contrastive {name}: its parser printed no help")
        sections.append(f"## `st-contrastive {name}`\n\n{summary[0].upper()}{summary[1:]}.\n\n```text\n{text}\n```\n")
    return "\n".join(sections)


def on_page_markdown(markdown: str, page, **_) -> str:
    if MARKER not in markdown:
        return markdown
    # The same text on every machine: argparse wraps at $COLUMNS, and colours its help where the terminal allows.
    saved = {key: os.environ.get(key) for key in ("COLUMNS", "NO_COLOR", "FORCE_COLOR")}
    os.environ.update(COLUMNS="110", NO_COLOR="1")
    os.environ.pop("FORCE_COLOR", None)
    try:
        return markdown.replace(MARKER, reference())
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
