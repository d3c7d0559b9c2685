"""Every relative link in README.md and docs/ resolves, and the README names nothing outside the repo.

A link is `[text](target)` outside fenced code blocks and code spans; `http(s)://` and `mailto:` targets
are not followed. A `#fragment` must name a heading of the target file (GitHub's anchor rule). Every
`make <target>` the documents show is a target of the Makefile, and every `python -m <module>` a module
of the repository. Every environment variable the service and its tools name is listed in
docs/configuration.md, in exactly one row.
"""

from __future__ import annotations

import importlib.util
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCUMENTS = sorted([ROOT / "README.md", *(ROOT / "docs").rglob("*.md")])

# Pages other engineers write on their own branches; a link to one of them may dangle only until it lands
# (once it exists it is checked like any other). Empty this set when those branches are merged.
LANDING_ELSEWHERE: frozenset[str] = frozenset()

# Make targets and modules other branches add, documented as they will be; the same rule as above.
TARGETS_LANDING_ELSEWHERE: frozenset[str] = frozenset()
MODULES_LANDING_ELSEWHERE: frozenset[str] = frozenset()

FENCE = re.compile(r"^\s*(```|~~~)")
CODE_SPAN = re.compile(r"(`+)(.+?)\1")
LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]*)>?(?:\s+\"[^\"]*\")?\s*\)")
EXTERNAL = re.compile(r"^[a-z][a-z0-9+.-]*:", re.IGNORECASE)
# A code span that names a file path: no spaces, a slash, and a file name with an extension or a trailing slash.
PATH_SPAN = re.compile(r"^[\w.~-]+(?:/[\w.{}<>*-]+)*/(?:[\w.{}<>*-]*\.[A-Za-z0-9]+)?$")
GENERATED = {"build", ".venv", "node_modules"}  # made by make targets; never in git


MAKE_COMMAND = re.compile(r"(?<![\w-])make\s+((?:[a-z][\w-]*\s*)+)")
PYTHON_MODULE = re.compile(r"python3?(?:\.\d+)?\s+-m\s+([A-Za-z_][\w.]*)")
MAKE_TARGET = re.compile(r"^([A-Za-z0-9_.%-]+(?:\s+[A-Za-z0-9_.%-]+)*)\s*:(?!=)", re.MULTILINE)


def makefile_targets(makefile: Path) -> list[str]:
    """Targets as the Makefile writes them, pattern rules (`package-%`) included."""
    return [t for match in MAKE_TARGET.finditer(makefile.read_text(encoding="utf-8")) for t in match.group(1).split()]


def is_target(name: str, targets: list[str]) -> bool:
    return any(re.fullmatch(re.escape(t).replace("%", ".+"), name) for t in targets if not t.startswith("."))


def commands(path: Path) -> Iterator[tuple[int, str, str]]:
    """(line, "make"|"python", name) for every make target and python module in code, fenced or not."""
    in_fence = False
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if FENCE.match(line):
            in_fence = not in_fence
            continue
        code = [line] if in_fence else [m.group(2) for m in CODE_SPAN.finditer(line)]
        for text in code:
            for match in MAKE_COMMAND.finditer(text):
                for word in match.group(1).split():
                    yield number, "make", word
            for match in PYTHON_MODULE.finditer(text):
                yield number, "python", match.group(1)


def is_module(name: str, root: Path = ROOT) -> bool:
    """A module of the repository, or, when its top package is not the repository's, an installed one."""
    parts = name.split(".")
    if not (root / parts[0]).exists() and not (root / f"{parts[0]}.py").exists():
        return importlib.util.find_spec(parts[0]) is not None
    base = root.joinpath(*parts)
    return base.with_suffix(".py").is_file() or (base / "__init__.py").is_file()


def prose_lines(path: Path) -> Iterator[tuple[int, str]]:
    """Lines outside fenced code blocks, numbered from 1."""
    fenced = False
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if FENCE.match(line):
            fenced = not fenced
            continue
        if not fenced:
            yield number, line


def links(path: Path) -> Iterator[tuple[int, str]]:
    for number, line in prose_lines(path):
        for match in LINK.finditer(CODE_SPAN.sub("", line)):
            yield number, match.group(1)


def anchor(heading: str) -> str:
    """GitHub's heading anchor: lower case, punctuation dropped, spaces become hyphens."""
    text = CODE_SPAN.sub(lambda m: m.group(2), heading.strip().lower())
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(path: Path) -> set[str]:
    found: set[str] = set()
    for _, line in prose_lines(path):
        heading = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if heading:
            slug = base = anchor(heading.group(1))
            n = 0
            while slug in found:
                n += 1
                slug = f"{base}-{n}"
            found.add(slug)
    return found


def broken_link(source: Path, target: str, root: Path = ROOT) -> str | None:
    """Why `target` (as written in `source`) does not resolve, or None when it does."""
    if not target or EXTERNAL.match(target):
        return None
    file_part, _, fragment = target.partition("#")
    resolved = (source.parent / file_part).resolve() if file_part else source
    if not resolved.is_relative_to(root):
        return "points outside the repository"
    if not resolved.exists():
        if resolved.relative_to(root).as_posix() in LANDING_ELSEWHERE:
            return None
        return "no such file"
    if fragment and resolved.suffix == ".md" and fragment not in anchors(resolved):
        return f"no heading #{fragment} in {resolved.relative_to(root).as_posix()}"
    return None


def names_outside(candidate: str) -> bool:
    """Whether a path as written (in a code span, or a bare word of prose) lies outside the repository."""
    if candidate.startswith(("../", "~/")) or re.match(r"^/(work|home|tmp|Users|srv|opt)/", candidate):
        return True
    if PATH_SPAN.match(candidate) and not EXTERNAL.match(candidate):
        top = candidate.split("/", 1)[0]
        return top not in GENERATED and not (ROOT / top).exists()
    return False


def outside_repo_references(line: str) -> list[str]:
    """Code spans, bare paths and link targets on a README line that name a path outside the repository."""
    found = [span for match in CODE_SPAN.finditer(line) if names_outside(span := match.group(2).strip())]
    prose = LINK.sub(" ", CODE_SPAN.sub(" ", line))
    found += [word for raw in prose.split() if names_outside(word := raw.strip("()[]{}<>,;:!?\"'*_").rstrip("."))]
    for match in LINK.finditer(CODE_SPAN.sub("", line)):
        target = match.group(1)
        if target.startswith("/") or target.startswith("file:"):
            found.append(target)
    return found


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_relative_link_resolves(document: Path) -> None:
    broken = [
        f"{document.relative_to(ROOT)}:{number}: {target} ({why})"
        for number, target in links(document)
        if (why := broken_link(document, target))
    ]
    assert broken == []


def test_readme_points_at_nothing_outside_the_repository() -> None:
    readme = ROOT / "README.md"
    outside = [
        f"README.md:{number}: {reference}"
        for number, line in prose_lines(readme)
        for reference in outside_repo_references(line)
    ]
    assert outside == []


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_documented_command_exists(document: Path) -> None:
    targets = makefile_targets(ROOT / "Makefile")
    missing = [
        f"{document.relative_to(ROOT)}:{number}: {kind} {name}"
        for number, kind, name in commands(document)
        if (kind == "make" and not is_target(name, targets) and name not in TARGETS_LANDING_ELSEWHERE)
        or (kind == "python" and not is_module(name) and name not in MODULES_LANDING_ELSEWHERE)
    ]
    assert missing == []


def test_the_docs_map_is_reachable_from_the_readme() -> None:
    targets = {target.partition("#")[0] for _, target in links(ROOT / "README.md")}
    assert "docs/index.md" in targets


# The checks themselves must be able to fail: each rule shown on a document written to a temporary repo.
@pytest.mark.parametrize(
    ("target", "reason"),
    [
        ("missing.md", "no such file"),
        ("../../outside.md", "points outside the repository"),
        ("page.md#no-such-heading", "no heading #no-such-heading in docs/page.md"),
        ("#nowhere", "no heading #nowhere in docs/index.md"),
    ],
)
def test_a_broken_link_is_reported(tmp_path: Path, target: str, reason: str) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "page.md").write_text("# Page\n\n## Real heading\n", encoding="utf-8")
    source = docs / "index.md"
    source.write_text(f"# Index\n\nSee [it]({target}).\n", encoding="utf-8")
    assert [t for _, t in links(source)] == [target]
    assert broken_link(source, target, root=tmp_path) == reason


@pytest.mark.parametrize(
    "target", ["page.md", "page.md#real-heading", "#index", "https://example.org/x", "page.md#page"]
)
def test_a_good_link_is_accepted(tmp_path: Path, target: str) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "page.md").write_text("# Page\n\n## Real heading\n", encoding="utf-8")
    source = docs / "index.md"
    source.write_text(f"# Index\n\n[it]({target})\n", encoding="utf-8")
    assert broken_link(source, target, root=tmp_path) is None


def test_links_inside_code_are_not_links(tmp_path: Path) -> None:
    source = tmp_path / "a.md"
    source.write_text("```\n[x](gone.md)\n```\n`[y](gone.md)` and [z](here.md)\n", encoding="utf-8")
    assert [t for _, t in links(source)] == ["here.md"]


@pytest.mark.parametrize(
    ("line", "outside"),
    [
        ("a copy of `shared/contract/rp.openapi.yaml`", ["shared/contract/rp.openapi.yaml"]),
        ("see `../shared/seeds/001.txt`", ["../shared/seeds/001.txt"]),
        ("read `/work/shared/research/placement.md`", ["/work/shared/research/placement.md"]),
        ("[the contract](/work/shared/contract.yaml)", ["/work/shared/contract.yaml"]),
        ("the contract is `chalicelib/contract/openapi.yaml`", []),
        ("packages land in `build/dev/sam.json`", []),
        ("`POST /resource-provisioning/{site}/reports` with `application/json`", []),
        ("the contract is a copy of shared/contract/rp.openapi.yaml.", ["shared/contract/rp.openapi.yaml"]),
        ("(see ../shared/seeds/001.txt)", ["../shared/seeds/001.txt"]),
        ("read docs/index.md or https://example.org/a/b.html", []),
    ],
)
def test_outside_references_are_recognised(line: str, outside: list[str]) -> None:
    assert outside_repo_references(line) == outside


def test_anchor_follows_github() -> None:
    assert anchor("A report, with `curl`") == "a-report-with-curl"
    assert anchor("Keys: issue, rotate & revoke") == "keys-issue-rotate--revoke"


def test_commands_are_found_in_code_only(tmp_path: Path) -> None:
    source = tmp_path / "a.md"
    source.write_text(
        "To make sure, run `make test-unit`.\n```sh\nmake package STAGE=dev\n"
        ".venv/bin/python -m chalicelib.cli keys list\n```\nmake nothing of prose\n",
        encoding="utf-8",
    )
    assert [(kind, name) for _, kind, name in commands(source)] == [
        ("make", "test-unit"), ("make", "package"), ("python", "chalicelib.cli"),
    ]


def test_targets_and_modules_are_checked(tmp_path: Path) -> None:
    makefile = tmp_path / "Makefile"
    makefile.write_text(".PHONY: run\nrun: setup\n\tpython x\npackage-%: setup\nPY := x\n", encoding="utf-8")
    targets = makefile_targets(makefile)
    assert is_target("run", targets) and is_target("package-dev", targets)
    assert not is_target("deploy", targets) and not is_target("PY", targets) and not is_target("package-", targets)
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("", encoding="utf-8")
    (tmp_path / "pkg" / "cli.py").write_text("", encoding="utf-8")
    assert is_module("pkg.cli", tmp_path) and is_module("pkg", tmp_path)
    assert not is_module("pkg.server", tmp_path)
    assert is_module("pytest", tmp_path) and not is_module("no_such_tool_xyz", tmp_path)


# --- docs/configuration.md lists every environment variable once -----------------------------------------
CONFIGURATION = ROOT / "docs" / "configuration.md"
# The service and the tools people run (make targets); test-only fixtures document their own variables.
CONFIGURED_CODE = ("app.py", "chalicelib", "devkit", "infra", "bench", "loadtest", "tests/fuzz", "tests/support")
# A whole name: a prefix such as "RP_OPENSTACK_" (read as a family of variables) ends in "_" and is no name.
VARIABLE = re.compile(r"""["']((?:RP|AWS|POWERTOOLS|LOAD|FUZZ|BENCH)_[A-Z0-9_]*[A-Z0-9]|PORT)["']""")


def variables_named_in_code(root: Path = ROOT) -> set[str]:
    found: set[str] = set()
    for entry in CONFIGURED_CODE:
        path = root / entry
        for source in [path] if path.is_file() else sorted(path.rglob("*.py")):
            found.update(VARIABLE.findall(source.read_text(encoding="utf-8")))
    return found


def variables_by_row(configuration: Path) -> dict[str, int]:
    """How many table rows name each variable in their first cell."""
    rows: dict[str, int] = {}
    for _, line in prose_lines(configuration):
        cells = line.split("|")
        if line.startswith("|") and len(cells) > 2:
            for name in re.findall(r"`([A-Z][A-Z0-9_]+)`", cells[1]):
                rows[name] = rows.get(name, 0) + 1
    return rows


def test_every_environment_variable_is_documented_once() -> None:
    rows = variables_by_row(CONFIGURATION)
    undocumented = sorted(v for v in variables_named_in_code() if v not in rows)
    repeated = sorted(v for v, n in rows.items() if n > 1)
    assert undocumented == [], "add a row for each to docs/configuration.md"
    assert repeated == [], "each variable belongs to one row of docs/configuration.md"


def test_variables_are_found_in_code_and_rows(tmp_path: Path) -> None:
    (tmp_path / "chalicelib").mkdir()
    (tmp_path / "chalicelib" / "config.py").write_text(
        'a = os.environ.get("RP_NEW_SETTING", "1")\nb = _int("LOAD_CLIENTS", 3)\nc = "RP_OPENSTACK_" + x\n',
        encoding="utf-8",
    )
    assert variables_named_in_code(tmp_path) == {"RP_NEW_SETTING", "LOAD_CLIENTS"}
    page = tmp_path / "configuration.md"
    page.write_text(
        "| variable | meaning |\n| --- | --- |\n| `RP_A`, `RP_B` | uses `RP_C` |\n| `RP_A` | again |\n",
        encoding="utf-8",
    )
    assert variables_by_row(page) == {"RP_A": 2, "RP_B": 1}


# --- pointers to a document's section from code and the Makefile: `docs/testing.md "Test stores"` ---------
POINTER_SOURCES = ("Makefile", "app.py", "chalicelib", "devkit", "infra", "bench", "loadtest", "fakes", "tests")
SECTION_POINTER = re.compile(r"""\b(README(?:\.md)?|docs/[\w./-]+\.md)\s*\(?"([^"\n]{2,80})"\)?""")
# Files another branch rewrites; their pointers are fixed there. Empty once those branches are merged.
POINTERS_FIXED_ELSEWHERE: frozenset[str] = frozenset()
POINTER_CHECKS = "tests/unit/test_docs_links.py"  # this file's own examples


def headings(path: Path) -> set[str]:
    """Heading texts, lower case; a pointer names one by its start ("Rules" for "Rules (pure; rules.py)")."""
    return {re.sub(r"\s+", " ", CODE_SPAN.sub(lambda m: m.group(2), match.group(1))).strip().lower()
            for _, line in prose_lines(path) if (match := re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line))}


def dead_section_pointers(root: Path = ROOT) -> list[str]:
    dead = []
    for entry in POINTER_SOURCES:
        path = root / entry
        for source in [path] if path.is_file() else sorted(path.rglob("*.py")):
            relative = source.relative_to(root).as_posix()
            if relative in POINTERS_FIXED_ELSEWHERE or relative == POINTER_CHECKS:
                continue
            for number, line in enumerate(source.read_text(encoding="utf-8").splitlines(), start=1):
                for match in SECTION_POINTER.finditer(line):
                    document = root / (match.group(1) if match.group(1).endswith(".md") else "README.md")
                    if not document.is_file():
                        dead.append(f"{relative}:{number}: {match.group(1)} (no such file)")
                    elif not any(heading.startswith(match.group(2).strip().lower()) for heading in headings(document)):
                        dead.append(f"{relative}:{number}: {match.group(1)} \"{match.group(2)}\" (no such section)")
    return dead


def test_every_pointer_to_a_section_names_one_that_exists() -> None:
    assert dead_section_pointers() == []


def test_a_dead_section_pointer_is_found(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "testing.md").write_text("# Testing\n\n## Test stores\n", encoding="utf-8")
    (tmp_path / "README.md").write_text("# Readme\n\n## The two commands\n", encoding="utf-8")
    (tmp_path / "Makefile").write_text('# docs/testing.md "Test stores", README "Deployment"\n'
                                       '# README ("The two commands"), docs/gone.md "X y"\n', encoding="utf-8")
    assert dead_section_pointers(tmp_path) == [
        'Makefile:1: README "Deployment" (no such section)', "Makefile:2: docs/gone.md (no such file)"]
