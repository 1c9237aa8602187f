"""The entry-point scanner agrees with importlib.metadata."""

from __future__ import annotations

import sys
from importlib import metadata

import pytest

from prompt_style import _entry_points


def _ours(group):
    return sorted((ep.name, ep.value, ep.distribution, ep.version) for ep in _entry_points.entry_points(group))


def _stdlib(group):
    return sorted(
        (ep.name, ep.value, ep.dist.metadata["Name"], ep.dist.version) for ep in metadata.entry_points(group=group)
    )


@pytest.mark.parametrize("group", ["prompt_style", "console_scripts", "pytest11"])
def test_same_entry_points_as_importlib_metadata(group):
    assert _ours(group) == _stdlib(group)


def test_fake_distributions_are_found_like_importlib_metadata(fake_dists):
    fake_dists.add("acme-styles", "acme", "X = 1\n", version="2.5")
    assert _ours("prompt_style") == _stdlib("prompt_style")
    found = {ep.name: ep for ep in _entry_points.entry_points("prompt_style")}
    assert found["acme"].distribution == "acme-styles"
    assert found["acme"].version == "2.5"
    assert found["acme"].load().X == 1


def test_first_distribution_on_sys_path_wins(tmp_path, monkeypatch):
    for where, version in (("a", "1.0"), ("b", "2.0")):
        info = tmp_path / where / "dupe_dist-{}.dist-info".format(version)
        info.mkdir(parents=True)
        (info / "METADATA").write_text(f"Name: dupe-dist\nVersion: {version}\n")
        (info / "entry_points.txt").write_text("[ps_test_group]\nx = os.path:join\n")
    monkeypatch.syspath_prepend(str(tmp_path / "b"))
    monkeypatch.syspath_prepend(str(tmp_path / "a"))
    assert _ours("ps_test_group") == [("x", "os.path:join", "dupe-dist", "1.0")]
    assert _ours("ps_test_group") == _stdlib("ps_test_group")
    (ep,) = _entry_points.entry_points("ps_test_group")
    import os.path

    assert ep.load() is os.path.join


def test_a_zip_on_sys_path_falls_back_to_importlib_metadata(tmp_path, monkeypatch):
    archive = tmp_path / "x.zip"
    import zipfile

    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("zipped_dist-1.0.dist-info/METADATA", "Name: zipped-dist\nVersion: 1.0\n")
        zf.writestr("zipped_dist-1.0.dist-info/entry_points.txt", "[ps_zip_group]\nz = json\n")
    monkeypatch.setattr(sys, "path", [str(archive), *sys.path])
    assert _ours("ps_zip_group") == [("z", "json", "zipped-dist", "1.0")]


def test_core_version_is_read():
    assert _entry_points.distribution_version("prompt-style") == metadata.version("prompt-style")
    assert _entry_points.distribution_version("no-such-distribution-xyz") is None
