"""Every distribution is publishable as it is: a package description (its README)
whose links work on the package index (absolute), Project-URLs, and the MIT
LICENSE file, the same at the root and in every distribution."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

tomllib = pytest.importorskip("tomllib")  # Python 3.11+

ROOT = Path(__file__).resolve().parents[1]
BASE = "https://github.com/prompt-style/prompt-style"
DISTRIBUTIONS = [ROOT, *sorted(p.parent for p in ROOT.glob("plugins/*/pyproject.toml"))]
DISTRIBUTIONS += sorted(p.parent for p in ROOT.glob("contrib/*/pyproject.toml"))
LINK = re.compile(r"\]\(([^)\s]+)\)")


def project(folder: Path) -> dict:
    return tomllib.loads((folder / "pyproject.toml").read_text(encoding="utf-8"))["project"]


def test_the_root_license_is_mit():
    text = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert text.startswith("MIT License\n") and "Permission is hereby granted, free of charge" in text


@pytest.mark.parametrize("folder", DISTRIBUTIONS, ids=lambda p: p.name)
def test_every_distribution_has_the_license(folder):
    assert project(folder)["license"] == "MIT"
    assert (folder / "LICENSE").read_bytes() == (ROOT / "LICENSE").read_bytes()


@pytest.mark.parametrize("folder", DISTRIBUTIONS, ids=lambda p: p.name)
def test_project_urls(folder):
    urls = project(folder)["urls"]
    assert set(urls) >= {"Homepage", "Documentation", "Source", "Issues"}
    assert all(url.startswith(BASE) for url in urls.values())
    source = BASE if folder == ROOT else f"{BASE}/tree/main/{folder.relative_to(ROOT).as_posix()}"
    assert urls["Source"] == source


@pytest.mark.parametrize("folder", DISTRIBUTIONS, ids=lambda p: p.name)
def test_package_descriptions_have_absolute_links_that_exist(folder):
    readme = folder / project(folder)["readme"]
    for target in LINK.findall(readme.read_text(encoding="utf-8")):
        if target.startswith("#"):
            continue
        assert target.startswith(("https://", "http://", "mailto:")), f"{readme}: relative link {target!r}"
        if target.startswith(BASE + "/"):
            path = re.sub(r"^(blob|tree)/main/", "", target[len(BASE) + 1 :]).split("#")[0]
            if path not in ("issues",):
                assert (ROOT / path).exists(), f"{readme}: {target} names no file of the repository"
