"""The distribution installs one import package, ``s3vm_bench``, whose modules import each other by
their installed names, so that nothing generic lands at the top of ``site-packages``."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

import s3vm_bench

ROOT = Path(__file__).resolve().parent.parent
FOLDERS = ("data_registry", "solvers", "harness")


def _package_files():
    for folder in FOLDERS:
        yield from sorted((ROOT / folder).rglob("*.py"))


@pytest.mark.parametrize("path", list(_package_files()), ids=lambda p: str(p.relative_to(ROOT)))
def test_no_module_imports_a_folder_by_its_top_level_name(path):
    # Run from the repository, `import solvers` would find the folder; installed, it fails.
    bad = []
    for node in ast.walk(ast.parse(path.read_bytes())):
        names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
            [node.module or ""] if isinstance(node, ast.ImportFrom) and not node.level else []
        bad += [f"line {node.lineno}: {n}" for n in names if n.split(".")[0] in FOLDERS]
    assert not bad, f"{path.name} imports top-level names: {bad}"


def test_every_module_imports_outside_the_repository(tmp_path):
    # A fresh interpreter in an empty folder, without the repository on sys.path (-I: isolated).
    code = ("import importlib, pkgutil, s3vm_bench\n"
            "for sub in s3vm_bench.PACKAGES:\n"
            "    pkg = importlib.import_module('s3vm_bench.' + sub)\n"
            "    for m in pkgutil.walk_packages(pkg.__path__, pkg.__name__ + '.'):\n"
            "        importlib.import_module(m.name)\n"
            "import sys\n"
            "print(sorted(n for n in sys.modules if n.split('.')[0] in s3vm_bench.PACKAGES))\n")
    out = subprocess.run([sys.executable, "-I", "-c", code], cwd=tmp_path, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"  # nothing was imported under a generic top-level name


def test_project_names_round_trip():
    assert s3vm_bench.import_name("solvers.newton") == "s3vm_bench.solvers.newton"
    assert s3vm_bench.project_name("s3vm_bench.harness.protocol") == "harness.protocol"
    assert s3vm_bench.import_name("mypkg.solver") == "mypkg.solver"  # an outside module is left alone
    assert s3vm_bench.project_name("s3vm_bench") == "s3vm_bench"


def test_shipped_reports_are_found_beside_the_subpackages():
    assert (s3vm_bench.PACKAGE_DIR / "reports" / "targets" / "jmlr2008-table8.csv").is_file()
    assert (s3vm_bench.PACKAGE_DIR / "harness" / "optima" / "coil3.json").is_file()


def test_optima_are_read_from_the_shipped_store_and_written_to_the_work_folder(work_folder):
    import json

    from s3vm_bench.harness.optima import OPTIMA_DIR, load_store, save_store

    shipped = (OPTIMA_DIR / "coil3.json").read_bytes()
    store = load_store("coil3")
    assert len(store["entries"]) == 30  # the shipped, certified entries
    path = save_store(store)
    assert path == work_folder / "optima" / "coil3.json"
    assert (OPTIMA_DIR / "coil3.json").read_bytes() == shipped  # never written to
    assert load_store("coil3") == json.loads(path.read_text())  # read from the work folder from now on


def test_out_names_the_work_folder_of_every_command(tmp_path, capsys):
    from s3vm_bench.harness.cli import main

    assert main(["reproduce", "nips2006-table1", "--quick", "--splits", "1", "--from-cache", "--no-progress",
                 "--out", str(tmp_path / "w")]) == 0
    assert (tmp_path / "w" / "reports" / "nips2006-table1.md").is_file()
    assert main(["figures", "sigir2006-fig3", "--out", str(tmp_path / "w")]) == 0
    assert (tmp_path / "w" / "figures" / "sigir2006-fig3.svg").is_file()
    blocked = tmp_path / "file"
    blocked.write_text("")
    assert main(["figures", "sigir2006-fig3", "--out", str(blocked / "sub")]) == 2  # cannot be created
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "Traceback" not in err
    assert main(["demo", "--out", ""]) == 2


def test_reproduce_prints_the_values_beside_the_papers_unless_summary_is_asked(tmp_path, capsys):
    from s3vm_bench.harness.cli import main

    args = ["reproduce", "nips2006-table1", "--quick", "--splits", "1", "--from-cache", "--no-progress",
            "--out", str(tmp_path / "w")]
    assert main(args) == 0
    out = capsys.readouterr().out
    # NIPS 2006 Table 1's published nabla-S3VM test error and objective, in brackets beside ours
    assert "| Test error |" in out and "[59.3]" in out and "[13.64]" in out
    assert "## Protocol" not in out  # only the head of the report, not its notes
    assert main(args + ["--summary"]) == 0
    out = capsys.readouterr().out
    assert "nips2006-table1:" in out and "[59.3]" not in out
