"""Format checks for the transcribed paper tables in ``reports/targets/*.csv``.

Each file is one published table, ``<paper>-table<N>.csv``, with the header
``paper,table,row,column,value,unit`` and one line per numeric cell (see
``reports/targets/README.md``).
"""

from __future__ import annotations

import csv
import math
import re
from pathlib import Path

import pytest

TARGETS = Path(__file__).resolve().parents[1] / "reports" / "targets"
HEADER = "paper,table,row,column,value,unit"
PAPERS = {"jmlr2008", "icml2006", "nips2006", "sigir2006", "icml2013"}
NAME = re.compile(r"^(?P<paper>[a-z0-9]+)-table(?P<table>\d+)\.csv$")
FILES = sorted(TARGETS.glob("*.csv"))


def _records(path: Path) -> list[dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def test_targets_exist():
    assert FILES, f"no CSV files in {TARGETS}"


@pytest.mark.parametrize("path", FILES, ids=[p.name for p in FILES])
def test_target_file(path: Path):
    text = path.read_text(encoding="utf-8")
    assert text.isascii(), f"{path.name}: non-ASCII characters"
    assert text.split("\n", 1)[0].rstrip("\r") == HEADER, f"{path.name}: header must be exactly {HEADER!r}"

    m = NAME.match(path.name)
    assert m, f"{path.name}: file name must be <paper>-table<N>.csv"

    rows = _records(path)
    assert rows, f"{path.name}: no data rows"
    for i, r in enumerate(rows, start=2):
        where = f"{path.name}:{i}"
        assert None not in r and all(v is not None for v in r.values()), f"{where}: wrong number of fields"
        assert r["paper"] in PAPERS, f"{where}: unknown paper {r['paper']!r}"
        assert r["paper"] == m["paper"], f"{where}: paper {r['paper']!r} does not match the file name"
        assert r["table"] == m["table"], f"{where}: table {r['table']!r} does not match the file name"
        assert r["row"].strip() and r["column"].strip(), f"{where}: empty row or column label"
        assert r["unit"].strip(), f"{where}: empty unit"
        try:
            value = float(r["value"])
        except ValueError:
            pytest.fail(f"{where}: value {r['value']!r} is not a number")
        assert math.isfinite(value), f"{where}: value {r['value']!r} is not finite"


def test_no_duplicate_keys():
    seen: dict[tuple[str, str, str, str], str] = {}
    for path in FILES:
        for i, r in enumerate(_records(path), start=2):
            key = (r["paper"], r["table"], r["row"], r["column"])
            assert key not in seen, f"{path.name}:{i}: duplicate key {key} (first in {seen[key]})"
            seen[key] = f"{path.name}:{i}"
