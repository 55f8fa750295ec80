"""Every relative link of README.md and docs/*.md resolves: the file or
folder exists, and a ``#fragment`` names a heading of the target page, as
GitHub makes anchors of headings.  Links inside code (fenced blocks, inline
code) are not links; web addresses are not checked (CI reaches no web)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]

FENCE = re.compile(r"^(```|~~~).*?^\1", re.S | re.M)
INDENTED = re.compile(r"^(?: {4}|\t).*$", re.M)
INLINE_CODE = re.compile(r"`[^`\n]*`")
LINK = re.compile(r"\[(?:[^\[\]]|\[[^\]]*\])*\]\(([^()\s]+)\)")
HEADING = re.compile(r"^#{1,6}\s+(.*?)\s*#*\s*$", re.M)


def _prose(text: str) -> str:
    """The page without its code, where brackets are not links."""
    return INLINE_CODE.sub("", INDENTED.sub("", FENCE.sub("", text)))


def _slug(heading: str) -> str:
    """GitHub's anchor of a heading: markup dropped, lower case, punctuation
    but hyphens and underscores removed, spaces turned into hyphens."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)       # a link's text
    text = text.replace("`", "").replace("*", "").lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(page: Path) -> set[str]:
    seen: dict[str, int] = {}
    out = set()
    for heading in HEADING.findall(FENCE.sub("", page.read_text(encoding="utf-8"))):
        slug = _slug(heading)
        n = seen.get(slug, 0)
        seen[slug] = n + 1
        out.add(slug if n == 0 else f"{slug}-{n}")
    return out


def links(page: Path) -> list[str]:
    return LINK.findall(_prose(page.read_text(encoding="utf-8")))


def broken(page: Path) -> list[str]:
    bad = []
    for target in links(page):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target):       # https:, mailto:
            continue
        path, _, fragment = target.partition("#")
        dest = (page.parent / path).resolve() if path else page
        if not dest.exists():
            bad.append(f"{target}: no such file")
        elif fragment and dest.suffix == ".md" and fragment not in anchors(dest):
            bad.append(f"{target}: no heading #{fragment} in {dest.name}")
    return bad


def test_the_pages_exist_and_link_to_each_other() -> None:
    assert len(PAGES) > 1, "docs/ holds no pages"
    readme_links = {t.partition("#")[0] for t in links(ROOT / "README.md")}
    unlinked = [p.name for p in PAGES[1:] if f"docs/{p.name}" not in readme_links]
    assert not unlinked, f"README.md does not link to {unlinked}"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_resolves(page: Path) -> None:
    assert broken(page) == []


def test_the_checker_tells_a_broken_link(tmp_path: Path) -> None:
    (tmp_path / "b.md").write_text("# Target page\n\n## A section's `code` title\n")
    page = tmp_path / "a.md"
    page.write_text("[ok](b.md) [ok](b.md#a-sections-code-title) [web](https://x.org/y)\n"
                    "`[code](nowhere.md)`\n\n    [indented](nowhere.md)\n"
                    "[missing](c.md) [bad anchor](b.md#no-such) [self](#target)\n"
                    "# Here\n")
    assert [b.split(":")[0] for b in broken(page)] == ["c.md", "b.md#no-such", "#target"]
