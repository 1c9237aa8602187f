"""``prompt-style new``: the generated plugin distributions, their names and errors; and
(slow) each kind installed into a fresh virtual environment, passing its own tests."""

from __future__ import annotations

import ast
import importlib.util
import os
import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

import prompt_style
from prompt_style.cli import main
from prompt_style.cli.new import KINDS, files, names

tomllib = pytest.importorskip("tomllib", reason="Python 3.11 reads pyproject.toml files")

ROOT = Path(__file__).resolve().parents[1]
KIND_NAMES = {"style": "roman", "meta": "human-assistant", "retriever": "shuffled", "format": "tiny"}


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def one_error_line(code, err, fragment):
    assert code == 2
    [line] = err.splitlines()
    assert line.startswith("prompt-style: error: ") and fragment in line, line


@pytest.fixture(params=list(KIND_NAMES))
def generated(request, tmp_path, capsys):
    kind, name = request.param, KIND_NAMES[request.param]
    code, out, err = run(capsys, "new", kind, name, "--out", str(tmp_path))
    assert code == 0, err
    return kind, name, tmp_path / f"prompt-style-{name}", out


def load_module(folder: Path, package: str):
    """Import the generated package from its folder, under a unique name."""
    unique = f"{package}_{uuid.uuid4().hex[:6]}"
    spec = importlib.util.spec_from_file_location(unique, folder / "src" / package / "__init__.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[unique] = module
    spec.loader.exec_module(module)
    return module


# -- what is generated ---------------------------------------------------------------


def test_the_files_of_each_kind(generated):
    kind, name, folder, out = generated
    made = names(name)
    expected = {
        "pyproject.toml",
        "README.md",
        "LICENSE",
        f"src/{made.package}/__init__.py",
        f"tests/test_{made.package.removeprefix('prompt_style_')}.py",
    }
    if KINDS[kind].golden:
        expected.add(f"tests/golden/{KINDS[kind].golden}")
    found = {p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()}
    assert found == expected
    assert out.startswith(f"created {folder} ") and f"pip install -e '{folder}[test]'" in out


def test_the_pyproject_declares_the_entry_point_and_the_test_settings(generated):
    kind, name, folder, _ = generated
    made = names(name)
    pyproject = tomllib.loads((folder / "pyproject.toml").read_text(encoding="utf-8"))
    project = pyproject["project"]
    assert project["name"] == f"prompt-style-{name}"
    assert project["entry-points"]["prompt_style"] == {made.slug: made.package}
    assert project["dependencies"][0].startswith("prompt-style")
    assert project["optional-dependencies"]["test"] == ["pytest>=8"]
    assert project["license"] == "MIT" and project["readme"] == "README.md"
    assert pyproject["tool"]["pytest"]["ini_options"]["prompt_style_plugin"] == made.package
    assert pyproject["tool"]["hatch"]["build"]["targets"]["wheel"]["packages"] == [f"src/{made.package}"]


def test_the_module_registers_and_provides_the_name(generated):
    kind, name, folder, _ = generated
    made = names(name)
    module = load_module(folder, made.package)
    manager = prompt_style.create_plugin_manager(entry_points=False, environ={}, plugins=[(made.slug, module)])
    provider = manager.resolve(KINDS[kind].hook, name)
    assert provider.plugin.name == made.slug


def test_the_code_uses_the_public_api_only(generated):
    _, name, folder, _ = generated
    public = set(prompt_style.__all__)
    for path in folder.rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("prompt_style"):
                if node.module == "prompt_style.testing":
                    continue
                assert node.module == "prompt_style", f"{path.name} imports {node.module}"
                assert {a.name for a in node.names} <= public, path.name
            elif (
                isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "prompt_style"
            ):
                assert node.attr in public, f"{path.name}: prompt_style.{node.attr}"


def test_the_tests_run_the_conformance_kit(generated):
    kind, name, folder, _ = generated
    [test_file] = (folder / "tests").glob("test_*.py")
    text = test_file.read_text(encoding="utf-8")
    assert f"from prompt_style.testing import {KINDS[kind].kit}" in text
    assert f"class TestConformance({KINDS[kind].kit}):" in text


def test_readme_and_license(generated):
    kind, name, folder, _ = generated
    readme = (folder / "README.md").read_text(encoding="utf-8")
    assert readme.startswith(f"# prompt-style-{name}\n")
    assert 'pip install -e ".[test]"' in readme and "\npytest\n" in readme
    assert f"`{KINDS[kind].hook}`" in readme and "--prompt-style-update-goldens" in readme
    assert "$" not in readme.replace("$ ", "")  # every placeholder filled
    license_text = (folder / "LICENSE").read_text(encoding="utf-8")
    assert license_text.startswith("MIT License\n\nCopyright (c) 20") and f"prompt-style-{name} authors" in license_text


def test_the_generated_code_is_lint_clean(generated):
    ruff = shutil.which("ruff") or str(Path(sys.executable).parent / "ruff")
    if not Path(ruff).exists():
        pytest.skip("ruff is not installed")
    _, _, folder, _ = generated  # with the generated pyproject's own ruff settings
    check = subprocess.run([ruff, "check", "--no-cache", "."], cwd=folder, capture_output=True, text=True)
    assert check.returncode == 0, check.stdout
    form = subprocess.run(
        [ruff, "format", "--no-cache", "--check", "--diff", "."], cwd=folder, capture_output=True, text=True
    )
    assert form.returncode == 0, form.stdout


def test_a_family_variant_name():
    made = names("mcq::roman")
    assert (made.dist, made.package, made.slug, made.cls, made.factory) == (
        "prompt-style-mcq-roman",
        "prompt_style_mcq_roman",
        "mcq-roman",
        "McqRoman",
        "mcq_roman",
    )
    generated = files("style", "mcq::roman", "0.1.0")
    assert 'NAME = "mcq::roman"' in generated["src/prompt_style_mcq_roman/__init__.py"]
    assert 'dependencies = ["prompt-style>=0.1.0"]' in generated["pyproject.toml"]
    assert 'dependencies = ["prompt-style"]' in files("style", "x", None)["pyproject.toml"]


# -- bad input -----------------------------------------------------------------------


@pytest.mark.parametrize("name", ["Roman", "my plugin", "1st", "-x", "x-", "a::b::c", "a__b", "é", "a.b", ""])
def test_a_bad_name_is_one_error_line(capsys, tmp_path, name):
    code, out, err = run(capsys, "new", "style", "--out", str(tmp_path), "--", name)
    one_error_line(code, err, f"NAME: {name!r} cannot be a plugin name (start with a letter")
    assert not any(tmp_path.iterdir())


def test_an_unknown_kind_is_one_error_line(capsys, tmp_path):
    code, _, err = run(capsys, "new", "retreiver", "x", "--out", str(tmp_path))
    one_error_line(code, err, "KIND: unknown kind 'retreiver' (did you mean 'retriever'?)")


def test_a_first_party_name_is_refused(capsys, tmp_path):
    code, _, err = run(capsys, "new", "style", "mmlu", "--out", str(tmp_path))
    one_error_line(code, err, "prompt-style-mmlu is a first-party distribution of prompt-style (plugins/mmlu)")


def test_a_name_already_provided_is_refused(capsys, tmp_path):
    code, _, err = run(capsys, "new", "meta", "llama-3", "--out", str(tmp_path))
    one_error_line(
        code, err, "meta template 'llama-3' is already provided by 'chat-formats' (prompt-style-chat-formats 0.1.0)"
    )
    code, _, err = run(capsys, "new", "style", "mcq", "--out", str(tmp_path))
    one_error_line(code, err, "e.g. mcq::mine")


def test_an_existing_folder_needs_force(capsys, tmp_path):
    assert run(capsys, "new", "style", "roman", "--out", str(tmp_path))[0] == 0
    code, _, err = run(capsys, "new", "style", "roman", "--out", str(tmp_path))
    one_error_line(code, err, "exists and is not empty (choose another --out, or add --force to write into it)")
    assert run(capsys, "new", "style", "roman", "--out", str(tmp_path), "--force")[0] == 0


def test_out_that_is_a_file_is_an_error(capsys, tmp_path):
    path = tmp_path / "file"
    path.write_text("", encoding="utf-8")
    code, _, err = run(capsys, "new", "style", "roman", "--out", str(path))
    one_error_line(code, err, "is not a folder")


# -- installed into a fresh environment ------------------------------------------------


def venv_python(venv: Path) -> Path:
    return venv / ("Scripts/python.exe" if os.name == "nt" else "bin/python")


PIP_SECONDS = 420
"""The longest the fresh-venv test's ``pip install`` runs may take together (they take
seconds): below the suite's per-test timeout (600 s), so that a slow index skips the
test rather than failing it."""
_UNREACHABLE = ("Retrying (Retry(", "NewConnectionError", "ConnectTimeoutError", "ReadTimeoutError")
"""What pip prints when the package index does not answer."""


@pytest.mark.slow
def test_each_kind_installs_into_a_fresh_venv_and_passes_its_own_tests(tmp_path):
    venv = tmp_path / "venv"
    made = subprocess.run([sys.executable, "-m", "venv", str(venv)], capture_output=True, text=True, timeout=120)
    if made.returncode != 0:
        pytest.skip(f"cannot create a virtual environment: {made.stderr.strip()[-200:]}")
    python = str(venv_python(venv))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PROMPT_STYLE_", "VIRTUAL_ENV", "PYTHONPATH"))}
    deadline = time.monotonic() + PIP_SECONDS  # for the pip installs together

    def pip(*args: str, cwd: Path | None = None) -> None:
        # pip reaches the package index (the build backend, the dependencies): a stalled
        # index is waited for a bounded time (the machine's pip may wait minutes a request)
        # and then skips the test, naming it; any other failure fails it.
        command = [python, "-m", "pip", "install", "--quiet", "--timeout", "30", "--retries", "2", *args]
        left = deadline - time.monotonic()
        try:
            done = subprocess.run(command, capture_output=True, text=True, env=env, cwd=cwd, timeout=max(left, 1))
        except subprocess.TimeoutExpired:
            pytest.skip(f"pip install took over {PIP_SECONDS} s in all: is the package index reachable?")
        output = done.stdout[-3000:] + done.stderr[-3000:]
        if done.returncode != 0 and any(sign in output for sign in _UNREACHABLE):
            said = next(line for line in output.splitlines() if any(sign in line for sign in _UNREACHABLE))
            pytest.skip(f"the package index could not be reached: {said.strip()[:300]}")
        assert done.returncode == 0, output

    # the core from this checkout (built into a wheel by pip), then the installed command scaffolds
    pip(str(ROOT))
    folders = []
    for kind, name in KIND_NAMES.items():
        new = [python, "-m", "prompt_style", "new", kind, name, "--out", str(tmp_path / "plugins")]
        done = subprocess.run(new, capture_output=True, text=True, env=env)
        assert done.returncode == 0, done.stderr
        folders.append(tmp_path / "plugins" / f"prompt-style-{name}")
    # each generated plugin with its test extra, as its README says
    pip(*[f"{f}[test]" for f in folders])
    listed = subprocess.run([python, "-m", "prompt_style", "plugins"], capture_output=True, text=True, env=env)
    for name in KIND_NAMES.values():
        assert f"\tprompt-style-{name}\t0.1.0\t" in listed.stdout, listed.stdout
    for folder in folders:
        tests = subprocess.run(
            [python, "-m", "pytest", "-q", "-p", "no:cacheprovider"],
            cwd=folder,
            capture_output=True,
            text=True,
            env=env,
            timeout=120,
        )
        assert tests.returncode == 0, f"{folder.name}:\n{tests.stdout[-4000:]}{tests.stderr[-2000:]}"
        assert " passed" in tests.stdout and "skipped" not in tests.stdout, tests.stdout[-500:]

    # a first-party name that is not installed: the hint says how to install it from a checkout, and it works
    probe = (
        "import prompt_style\ntry:\n    prompt_style.create_plugin_manager().resolve('format_prompt', 'mcq::mmlu')\n"
    )
    probe += "except prompt_style.PromptStyleError as e:\n    print(e)\n"
    hint = subprocess.run([python, "-c", probe], capture_output=True, text=True, env=env, cwd=tmp_path).stdout.strip()
    assert hint == (
        "unknown style 'mcq::mmlu' (it comes with prompt-style-mmlu, which is not on the package index: "
        "in a prompt-style checkout, pip install ./plugins/mmlu)"
    )
    command = hint.rsplit("in a prompt-style checkout, pip install ", 1)[1].rstrip(")")
    pip(command, cwd=ROOT)
    found = subprocess.run([python, "-c", probe], capture_output=True, text=True, env=env, cwd=tmp_path).stdout
    assert found == ""
