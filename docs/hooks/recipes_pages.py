"""The lab's reports (``recipes/**/README.md``) as pages of the docs site, with the files they link to.

A mkdocs hook. The site's pages live in ``docs/`` and the lab beside it in ``recipes/``, and a link is written as
GitHub resolves it: ``docs/scale.md`` links ``../recipes/scale-against-setfit/README.md``, a report links
``../../docs/scale.md``. The site holds both trees: every file under ``recipes/`` is added at ``recipes/...``
(reports as pages, scripts, results and plots as files), and each link is rewritten to where its target sits in the
site, so that ``mkdocs build --strict`` checks it. A report's link to another file of the repository (a module of
the package, the top-level README) keeps its text and loses its target, since the site does not hold those files;
a link to a file that does not exist is left as written, so that the build names it.
``recipes/README.md`` is in the nav (mkdocs.yml); the reports it links to are pages outside the nav.
"""

from __future__ import annotations

import posixpath
import re
from pathlib import Path

from mkdocs.structure.files import File, InclusionLevel

LINK = re.compile(r"(!?\[[^\]]*\])\(([^)\s]+)\)")
SKIPPED = {"__pycache__", ".ipynb_checkpoints"}


def _root(config) -> Path:
    return Path(config["docs_dir"]).resolve().parent


def on_files(files, config, **_):
    lab = _root(config) / "recipes"
    for path in sorted(lab.rglob("*")):
        if not path.is_file() or SKIPPED & set(path.parts) or path.name.startswith(".") or path.suffix == ".pyc":
            continue
        src_uri = path.relative_to(lab.parent).as_posix()
        in_nav = src_uri == "recipes/README.md"
        inclusion = InclusionLevel.UNDEFINED if in_nav else InclusionLevel.NOT_IN_NAV
        files.append(File.generated(config, src_uri, abs_src_path=str(path), inclusion=inclusion))
    return files


def _site_target(target: str, page_uri: str, root: Path) -> str | None:
    """Where ``target``, a link of the page at ``page_uri`` (``docs/x.md`` or ``recipes/q/README.md``), sits in the
    site relative to the page's source; ``None`` where the site does not hold it."""
    path, hash_, anchor = target.partition("#")
    if not path:
        return target  # an anchor on the same page
    in_repo = posixpath.normpath(posixpath.join(posixpath.dirname(page_uri), path))
    if not (root / in_repo).exists():
        return target  # left as written: the strict build names it
    if in_repo.startswith("docs/"):
        site_path = in_repo.removeprefix("docs/")
    elif in_repo.startswith("recipes/"):
        site_path = in_repo
    else:
        return None
    site_page = page_uri.removeprefix("docs/")
    return posixpath.relpath(site_path, posixpath.dirname(site_page) or ".") + hash_ + anchor


def on_page_markdown(markdown: str, page, config, **_) -> str:
    src_uri = page.file.src_uri
    page_uri = src_uri if src_uri.startswith("recipes/") else f"docs/{src_uri}"
    root = _root(config)

    def rewrite(match: re.Match) -> str:
        text, target = match.groups()
        if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # https:, mailto: ...
            return match.group(0)
        if not page_uri.startswith("recipes/") and "recipes/" not in target:
            return match.group(0)  # a docs page's other links are mkdocs' own
        site = _site_target(target, page_uri, root)
        if site is None:
            return text[1:-1] if not text.startswith("!") else match.group(0)
        return f"{text}({site})"

    if not page_uri.startswith("recipes/") and "../recipes/" not in markdown:
        return markdown
    fenced, lines = False, []
    for line in markdown.split("\n"):
        if line.lstrip().startswith("```"):
            fenced = not fenced
        lines.append(line if fenced else LINK.sub(rewrite, line))
    return "\n".join(lines)
