"""The user documentation runs as written: every `dlasim ...` shell line in the code blocks of README.md,
docs/*.md, hardware_specs/README.md and validation/README.md goes through the CLI in-process (exit status 0,
some output), every ```python block executes; the README's zoo list and the layout of docs/DESIGN.md name
what the code has. A line that reads a file not in the repository (model.onnx, my-orin.toml) is skipped,
naming the file."""
from __future__ import annotations

import re
import shlex
import signal
from pathlib import Path

import pytest

from dlasim import zoo
from dlasim.cli import main

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), ROOT / "hardware_specs" / "README.md",
        ROOT / "validation" / "README.md"]
SHELL_LANGS = ("", "sh", "bash", "shell", "console")
READ_SUFFIXES = (".onnx", ".prototxt", ".json", ".toml", ".profile")   # files a command reads
OUTPUT_FLAGS = ("-o", "--output")
# trtexec flags whose values dlasim ignores (it writes no engine, profile or cache)
IGNORED_FILE_FLAGS = ("--saveEngine", "--loadEngine", "--exportProfile", "--exportLayerInfo", "--exportOutput",
                      "--exportTimes", "--timingCacheFile")
TIMEOUT_S = 120
REQUIRED_TOP = ("pip install -e . && dlasim estimate zoo:resnet50",
                "pip install -e '.[dev]' && python -m pytest -q")


def code_blocks(text: str) -> list[tuple[str, int, str]]:
    """(language, first line number, body) of every fenced block and every indented (4-space) block."""
    out, lines, i = [], text.splitlines(), 0
    while i < len(lines):
        line = lines[i]
        fence = re.match(r"^\s*```\s*([\w-]*)\s*$", line)
        if fence:
            j = i + 1
            while j < len(lines) and not re.match(r"^\s*```\s*$", lines[j]):
                j += 1
            out.append((fence.group(1), i + 2, "\n".join(lines[i + 1:j])))
            i = j + 1
            continue
        if line.startswith("    ") and (i == 0 or not lines[i - 1].strip()) and line.strip():
            j = i
            while j < len(lines) and (lines[j].startswith("    ") or not lines[j].strip()):
                j += 1
            out.append(("", i + 1, "\n".join(l[4:] for l in lines[i:j])))
            i = j
            continue
        i += 1
    return out


def shell_commands(text: str) -> list[tuple[int, list[str]]]:
    """(line number, argv after `dlasim`) of every dlasim command in the shell blocks: continuation lines
    joined, comments dropped, commands chained with && ; | split apart."""
    found = []
    for lang, start, body in code_blocks(text):
        if lang not in SHELL_LANGS:
            continue
        body = body.replace("\\\n", " ")
        for n, line in enumerate(body.splitlines()):
            try:
                tokens = shlex.split(line, comments=True)
            except ValueError:
                continue
            segment: list[str] = []
            for tok in tokens + ["&&"]:
                if tok in ("&&", "||", ";", "|"):
                    if segment and segment[0] == "dlasim":
                        found.append((start + n, segment[1:]))
                    segment = []
                else:
                    segment.append(tok)
    return found


def missing_inputs(argv: list[str], root: Path = ROOT) -> list[str]:
    """The files the command would read that are not in the repository."""
    missing, skip_next = [], False
    for tok in argv:
        if skip_next:
            skip_next = False
            continue
        if tok in OUTPUT_FLAGS:
            skip_next = True
            continue
        flag, eq, value = tok.partition("=")
        if eq and flag in IGNORED_FILE_FLAGS:
            continue
        path = value if eq and flag.startswith("-") else tok
        path = re.sub(r"(\.toml):[\w-]+$", r"\1", path)           # my.toml:15w
        if path.endswith(READ_SUFFIXES) and not (root / path).exists():
            missing.append(path)
    return missing


def with_outputs_in(argv: list[str], folder: Path) -> list[str]:
    """argv with every -o FILE moved into `folder`."""
    out = list(argv)
    for i, tok in enumerate(out[:-1]):
        if tok in OUTPUT_FLAGS:
            out[i + 1] = str(folder / Path(out[i + 1]).name)
    return out


def _documented_commands():
    seen, cases = set(), []
    for doc in DOCS:
        for line, argv in shell_commands(doc.read_text(encoding="utf-8")):
            if tuple(argv) not in seen:
                seen.add(tuple(argv))
                cases.append(pytest.param(argv, id=f"{doc.relative_to(ROOT)}:{line}"))
    return cases


def _python_blocks():
    return [pytest.param(body, id=f"{doc.relative_to(ROOT)}:{line}")
            for doc in DOCS for lang, line, body in code_blocks(doc.read_text(encoding="utf-8")) if lang == "python"]


class _Timeout(Exception):
    pass


@pytest.fixture
def time_limit():
    def expire(signum, frame):
        raise _Timeout(f"longer than {TIMEOUT_S} s")
    old = signal.signal(signal.SIGALRM, expire)
    signal.alarm(TIMEOUT_S)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, old)


@pytest.mark.parametrize("argv", _documented_commands())
def test_documented_command_runs(argv, capsys, monkeypatch, tmp_path, time_limit):
    missing = missing_inputs(argv)
    if missing:
        pytest.skip(f"needs {', '.join(missing)} (not in the repository)")
    monkeypatch.chdir(ROOT)
    argv = with_outputs_in(argv, tmp_path)
    try:
        rc = main(argv)
    except SystemExit as e:                  # --help, --version
        rc = e.code
    out = capsys.readouterr()
    assert rc == 0, f"dlasim {' '.join(argv)}: exit {rc}: {out.err.strip()}"
    assert "Traceback" not in out.err
    written = [p for p in tmp_path.iterdir() if p.stat().st_size > 0]
    assert out.out.strip() or written, f"dlasim {' '.join(argv)} printed and wrote nothing"


@pytest.mark.parametrize("code", _python_blocks())
def test_documented_python_runs(code, monkeypatch, tmp_path, capsys, time_limit):
    monkeypatch.chdir(tmp_path)              # snippets may write files (g.to_onnx("cand.onnx"))
    exec(compile(code, "<doc snippet>", "exec"), {"__name__": "__doc_snippet__"})


def test_readme_starts_with_the_two_commands():
    blocks = [body for _, _, body in code_blocks((ROOT / "README.md").read_text(encoding="utf-8"))]
    assert tuple(b.strip() for b in blocks[:2]) == REQUIRED_TOP


def test_the_documentation_has_commands_and_snippets():
    readme = shell_commands((ROOT / "README.md").read_text(encoding="utf-8"))
    assert readme[0][1] == ["estimate", "zoo:resnet50"]           # from "pip install -e . && dlasim ..."
    assert len(readme) >= 20 and len(_python_blocks()) >= 5


def test_extractor_on_a_made_up_page():
    page = ("text\n\n    dlasim zoo list      # a comment\n\n```text\ndlasim estimate MODEL [--hw X]\n```\n"
            "```sh\npip install x && dlasim specs show a100\ndlasim estimate zoo:resnet18 \\\n"
            "    --batch 2\necho dlasim not\n```\n```python\nimport dlasim\n```\n")
    assert [argv for _, argv in shell_commands(page)] == [
        ["zoo", "list"], ["specs", "show", "a100"], ["estimate", "zoo:resnet18", "--batch", "2"]]
    assert [lang for lang, _, _ in code_blocks(page)] == ["", "text", "sh", "python"]


def test_missing_input_rule():
    assert missing_inputs(["estimate", "model.onnx", "-o", "out.json"]) == ["model.onnx"]
    assert missing_inputs(["estimate", "--onnx=model.onnx", "--saveEngine=x.plan"]) == ["model.onnx"]
    assert missing_inputs(["estimate", "zoo:resnet50", "--hw", "./my.toml:15w"]) == ["./my.toml"]
    assert missing_inputs(["estimate", "--deploy=validation/data/seeds/kernel_1x1.prototxt",
                           "--exportProfile=p.json", "-o", "e.json"]) == []
    assert with_outputs_in(["sweep", "zoo:x", "-o", "a/b.html"], Path("/t")) == ["sweep", "zoo:x", "-o", "/t/b.html"]


def test_readme_zoo_list_is_complete():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text[text.index("## Built-in networks"):]
    section = section[:section.index("\n## ")]
    listed = set(re.findall(r"`zoo:([\w.-]+)`", section))
    assert listed == set(zoo.names())


def test_design_layout_names_every_module():
    text = (ROOT / "docs" / "DESIGN.md").read_text(encoding="utf-8")
    section = text[text.index("## Layout"):]
    section = section[:section.index("\n## ")]
    named = set(re.findall(r"`([\w./]+)`", section))
    words = {re.sub(r"\.py$", "", n.rstrip("/").split("/")[-1]) for n in named}
    pkg = ROOT / "dlasim"
    for path in pkg.rglob("*.py"):
        rel = path.relative_to(pkg)
        if "_data" in rel.parts or rel.name.startswith("_"):
            continue
        assert rel.stem in words, f"docs/DESIGN.md Layout does not name dlasim/{rel}"
        if len(rel.parts) > 1:
            assert f"{rel.parts[0]}/" in named, f"docs/DESIGN.md Layout does not name dlasim/{rel.parts[0]}/"
    for name in named:                       # and names nothing that is gone
        if name.endswith(".py"):
            assert list(pkg.rglob(Path(name).name)), f"docs/DESIGN.md Layout names {name}, not in dlasim/"
