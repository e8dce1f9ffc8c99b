"""The docs site loads nothing from other hosts: no script, stylesheet, font or image from an http(s) address.

``make docs`` builds the site and then runs this file as a script on it (``python tests/docs/test_docs_site.py site``);
the tests below check the check itself, on pages written here, so they need no mkdocs.
"""

from __future__ import annotations

import re
import sys
from html.parser import HTMLParser
from pathlib import Path

REMOTE = re.compile(r"^\s*(https?:)?//", re.IGNORECASE)  # an absolute or protocol-relative address
# In CSS: url(...) (fonts, images) and @import "..." / @import url(...).
CSS_REFERENCE = re.compile(r"""url\(\s*['"]?([^'")\s]+)|@import\s+['"]([^'"]+)""", re.IGNORECASE)
# The HTML attributes that make a browser load something as the page opens (links a reader follows are not among
# them; <link> is, whatever its rel: stylesheet, preconnect, preload, icon).
LOADED = {
    "script": ("src",),
    "link": ("href",),
    "img": ("src", "srcset"),
    "source": ("src", "srcset"),
    "iframe": ("src",),
    "audio": ("src",),
    "video": ("src", "poster"),
    "embed": ("src",),
    "object": ("data",),
}


class _Loads(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.found: list[str] = []
        self._in_style = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for name, value in attrs:
            if value and name in LOADED.get(tag, ()):
                self.found += [
                    f"<{tag} {name}={part.split()[0]}>"
                    for part in value.split(",")
                    if part.strip() and REMOTE.match(part)
                ]
            elif value and name == "style":
                self.found += css_references(value)
        self._in_style = tag == "style"

    def handle_endtag(self, tag: str) -> None:
        self._in_style = False

    def handle_data(self, data: str) -> None:
        if self._in_style:
            self.found += css_references(data)


def css_references(css: str) -> list[str]:
    """The http(s) addresses a stylesheet loads (fonts, images, other stylesheets)."""
    return [
        f"css {address}"
        for match in CSS_REFERENCE.finditer(css)
        for address in match.groups()
        if address and REMOTE.match(address)
    ]


def remote_loads(site: Path) -> list[str]:
    """Each file of the built ``site`` with what it loads from another host, as ``file: what``."""
    found = []
    for path in sorted(site.rglob("*")):
        if path.suffix == ".html":
            parser = _Loads()
            parser.feed(path.read_text(encoding="utf-8"))
            found += [f"{path.relative_to(site)}: {item}" for item in parser.found]
        elif path.suffix == ".css":
            found += [f"{path.relative_to(site)}: {item}" for item in css_references(path.read_text(encoding="utf-8"))]
    return found


def test_scripts_stylesheets_fonts_and_images_from_other_hosts_are_found(tmp_path):
    (tmp_path / "assets").mkdir()
    (tmp_path / "index.html").write_text(
        '<html><head><link rel="stylesheet" href="assets/main.css">'
        '<link rel="preconnect" href="https://fonts.gstatic.com">'
        '<script src="//cdn.example.org/x.js"></script><script src="assets/search.js"></script>'
        "<style>@font-face { src: url('https://fonts.example.org/a.woff2') }</style></head>"
        '<body><a href="https://www.sbert.net">a link a reader follows</a><img src="logo.png"></body></html>'
    )
    (tmp_path / "assets" / "main.css").write_text(
        '@import "https://fonts.googleapis.com/css?family=Roboto"; .a { background: url(icon.svg) }'
    )
    assert remote_loads(tmp_path) == [
        "assets/main.css: css https://fonts.googleapis.com/css?family=Roboto",
        "index.html: <link href=https://fonts.gstatic.com>",
        "index.html: <script src=//cdn.example.org/x.js>",
        "index.html: css https://fonts.example.org/a.woff2",
    ]


def test_a_site_of_local_files_passes(tmp_path):
    (tmp_path / "index.html").write_text(
        '<link rel="stylesheet" href="assets/main.css"><script src="search.js">'
        '</script><a href="https://huggingface.co">Hub</a>'
    )
    (tmp_path / "main.css").write_text(".a { background: url('data:image/svg+xml;x') }")
    assert remote_loads(tmp_path) == []


if __name__ == "__main__":
    site = Path(sys.argv[1] if len(sys.argv) > 1 else "site")
    if not (site / "index.html").is_file():
        sys.exit(f"{site}: no built site here (make docs builds it)")
    remote = remote_loads(site)
    for line in remote:
        print(f"{site}/{line}", file=sys.stderr)
    sys.exit(f"the docs site loads {len(remote)} things from other hosts (listed above)" if remote else 0)
