"""The list of every results table in the docs with the command that made it, written at build time.

A mkdocs hook: in a page, the line ``<!-- results-index -->`` becomes a table with one row per results table of
docs/*.md: the page and section it is in (linked), the command and the wall time its ``<!-- results: COMMAND |
WALL TIME -->`` marker states (tests/docs/test_results_tables.py checks that every results table has one and that each
command parses). Reading the markers at build time keeps the list from drifting from the pages.
"""

from __future__ import annotations

import re
from pathlib import Path

from markdown.extensions.toc import slugify

MARKER = "<!-- results-index -->"
RESULTS = re.compile(r"^\s*<!--\s*results:(.*?)-->\s*$")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
INLINE = re.compile(r"[`*_]|\[([^\]]*)\]\([^)]*\)")  # code, emphasis and links, as the rendered heading drops them


def anchor(heading: str, seen: dict[str, int]) -> str:
    """The id mkdocs' toc gives ``heading``: its text slugified, ``_1``, ``_2`` … for a repeat on the page."""
    slug = slugify(INLINE.sub(lambda m: m.group(1) or "", heading), "-")
    count = seen.get(slug, 0)
    seen[slug] = count + 1
    return slug if count == 0 else f"{slug}_{count}"


def markers(page: Path) -> list[tuple[str, str, str, str]]:
    """(section title, anchor, command, wall time) of each results marker in ``page``, in order."""
    found, seen, section, section_anchor, fenced = [], {}, page.stem, "", False
    for line in page.read_text(encoding="utf-8").splitlines():
        if line.lstrip().startswith("```"):
            fenced = not fenced
        heading = None if fenced else HEADING.match(line)
        if heading:
            section, section_anchor = (
                INLINE.sub(lambda m: m.group(1) or "", heading.group(2)),
                anchor(heading.group(2), seen),
            )
        results = RESULTS.match(line)
        if results:
            command, _, wall_time = results.group(1).rpartition("|")
            found.append((section, section_anchor, command.strip(), wall_time.strip()))
    return found


def index(docs: Path, current: str) -> str:
    rows = ["| page, section | command | wall time (2 cores unless stated) |", "|---|---|---|"]
    for page in sorted(docs.glob("*.md")):
        if page.name == current:
            continue
        for section, section_anchor, command, wall_time in markers(page):
            link = page.name + (f"#{section_anchor}" if section_anchor else "")
            code = command.replace("|", "\\|")
            rows.append(f"| [{page.stem}: {section}]({link}) | `{code}` | {wall_time} |")
    return "\n".join(rows)


def on_page_markdown(markdown: str, page, config, **_) -> str:
    if MARKER not in markdown:
        return markdown
    return markdown.replace(MARKER, index(Path(config["docs_dir"]), Path(page.file.src_path).name))
