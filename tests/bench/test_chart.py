"""`python -m bench --chart`: the SVG drawn from a small results document."""

from __future__ import annotations

import json
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

from bench.chart import render, score

SVG = "{http://www.w3.org/2000/svg}"
ROOT = Path(__file__).resolve().parents[2]


def _line(row: int, figure: str, target: str, value: float, ratio: float, met: bool | None, **kw: Any) -> Any:
    return {
        "row": row,
        "figure": figure,
        "value": value,
        "unit": kw.get("unit", "ms"),
        "baseline": "b",
        "baseline_value": value / ratio,
        "ratio": ratio,
        "target": target,
        "met": met,
        "error": kw.get("error"),
    }


RESULTS = {
    "mode": "full",
    "started_at": "2026-01-01T00:00:00+00:00",
    "machine": {"cores": 2, "kernel": "Linux <test>"},
    "load_average": {"start": 0.5, "end": 0.7},
    "rows": [
        _line(1, "run+wait `true`, p50", "ratio ≤ 4", 8.0, 5.0, False),
        _line(1, "run+wait `true`, p99", "—", 20.0, 6.0, None),
        _line(5, "tail latency & <SSE>, p99", "p99 ≤ 20 ms", 10.0, 16.0, True),
        _line(11, "recovery", "≤ 2 s", 1.5, 1.1, True, unit="s"),
        _line(26, "events/s", "≥ 50,000 events/s", 100_000.0, 0.05, True, unit=""),
        _line(25, "1000 clients", "every one answered, none lost", 14.0, 800.0, True),
        _line(9, "broken row", "ratio ≤ 1.5", 0.0, 1.0, None, error="boom"),
    ],
}


def _rows(root: ET.Element) -> dict[int, list[ET.Element]]:
    out: dict[int, list[ET.Element]] = {}
    for group in root.iter(f"{SVG}g"):
        out.setdefault(int(group.attrib["data-row"]), []).append(group)
    return out


def test_the_chart_parses_and_draws_every_figure_of_every_row() -> None:
    root = ET.fromstring(render(RESULTS))
    rows = _rows(root)
    assert sorted(rows) == [1, 5, 9, 11, 25, 26]
    assert sum(len(g) for g in rows.values()) == len(RESULTS["rows"])
    texts = " ".join(t.text or "" for t in root.iter(f"{SVG}text"))
    assert "tail latency & <SSE>, p99" in texts  # escaped in the document, itself once parsed
    assert "error: boom" in texts
    # A bar for each figure whose target is a number: red when missed, green when met.
    fills = {n: [r.attrib["fill"] for g in gs for r in g.iter(f"{SVG}rect")] for n, gs in rows.items()}
    assert fills[1] == ["#c62828"] and fills[5] == ["#2e7d32"] and fills[26] == ["#2e7d32"]
    assert fills[25] == [] and fills[9] == []


def test_a_figure_is_scored_against_its_own_kind_of_target() -> None:
    assert score("ratio ≤ 4", 8.0, 5.0, "ms") == 1.25
    assert score("faster than tsp (ratio < 1)", 5.0, 2.0, "s") == 2.0
    assert score("p50 ≤ 50 ms", 10.0, 50.0, "ms") == 0.2
    assert score("≤ 2 s", 1500.0, 1.0, "ms") == 0.75  # converted to the target's unit
    assert score("≤ 1.2", 20.0, 0.6, "MB") == 0.5
    assert score("≥ 1×", 5.0, 2.0, "lines/s") == 0.5
    assert score("≥ 50,000 events/s", 100_000.0, 0.05, "") == 0.5
    assert score("every one answered, none lost", 1.0, 1.0, "ms") is None


def test_bench_chart_writes_the_svg_from_a_results_file(tmp_path: Path) -> None:
    # From the command line, on the project's own results document: every row it holds is drawn.
    out = tmp_path / "bench.svg"
    subprocess.run(
        [sys.executable, "-m", "bench", "--chart", str(out)],
        cwd=ROOT,
        check=True,
        capture_output=True,
        timeout=60,
    )
    results = json.loads((ROOT / "bench" / "results.json").read_text(encoding="utf-8"))
    drawn = _rows(ET.parse(out).getroot())
    assert sorted(drawn) == sorted({line["row"] for line in results["rows"]})
