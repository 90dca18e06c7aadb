"""`python -m bench --chart`: the latest table (bench/results.json) drawn as an SVG for the README.

One bar per figure that has a target: how far it is from its target, as a multiple of it (1 is
the target; below 1 it is met with room to spare), green when met and red when missed. A target
such as `ratio ≤ 4` is read against the figure's ratio to its baseline, `p99 ≤ 20 ms` against its
value, `≥ 50,000 events/s` the other way round (the target over the value). A figure without a
target is listed with its ratio to its baseline, greyed, without a bar. The SVG is written by hand:
no plotting library.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from xml.sax.saxutils import escape

#: Bars are drawn to this multiple of the target; a longer one is cut and says so.
SCALE_MAX = 3.0
WIDTH = 1120
LABEL_W = 430
BAR_W = 300
ROW_H = 20
TOP = 74

_UNITS_S = {"ms": 0.001, "s": 1.0}
_NUMBER = r"([0-9][0-9,]*(?:\.[0-9]+)?)"


@dataclass(frozen=True)
class Bar:
    """One figure of the table as drawn."""

    row: int
    figure: str
    target: str
    #: The figure against its target (1: right at it), None when the target is not a number.
    score: float | None
    met: bool | None
    #: What the line says on the right.
    text: str


def _number(text: str) -> float:
    return float(text.replace(",", ""))


def _in_unit(value: float, unit: str, target_unit: str) -> float | None:
    """`value` (in `unit`) in `target_unit`; None when the two do not convert."""
    if unit == target_unit or not target_unit:
        return value
    if unit in _UNITS_S and target_unit in _UNITS_S:
        return value * _UNITS_S[unit] / _UNITS_S[target_unit]
    return None


def score(target: str, value: float | None, ratio: float | None, unit: str) -> float | None:
    """The figure against its target, as a multiple of it (≤ 1: met); None when not a number."""
    at_most = re.search(r"ratio\s*[≤<]\s*" + _NUMBER, target)
    if at_most and ratio is not None:
        return ratio / _number(at_most.group(1))
    at_least = re.search(r"[≥>]\s*" + _NUMBER + r"\s*×", target)
    if at_least and ratio is not None and ratio > 0:
        return _number(at_least.group(1)) / ratio
    bare = re.fullmatch(r"\s*[≤<]\s*" + _NUMBER + r"\s*", target)
    if bare and ratio is not None:
        return ratio / _number(bare.group(1))
    absolute = re.search(r"[≤<]\s*" + _NUMBER + r"\s*([A-Za-z/]+)", target)
    if absolute and value is not None:
        converted = _in_unit(value, unit, absolute.group(2))
        return None if converted is None else converted / _number(absolute.group(1))
    floor = re.search(r"[≥>]\s*" + _NUMBER, target)
    if floor and value is not None and value > 0:
        return _number(floor.group(1)) / value
    return None


def _fmt(value: float) -> str:
    if value >= 100:
        return f"{value:,.0f}"
    return f"{value:.2f}"


def bars(results: dict[str, Any]) -> list[Bar]:
    """The lines of a results document, as the chart draws them."""
    out: list[Bar] = []
    for line in results.get("rows", []):
        target = str(line.get("target") or "—")
        ratio, value = line.get("ratio"), line.get("value")
        unit = str(line.get("unit") or "")
        figure = str(line.get("figure", ""))
        if line.get("error"):
            out.append(Bar(int(line["row"]), figure, target, None, False, f"error: {line['error']}"))
            continue
        if target == "—":
            text = f"{_fmt(ratio)}× its baseline (no target)" if ratio is not None else "no target"
            out.append(Bar(int(line["row"]), figure, target, None, None, text))
            continue
        s = score(target, value, ratio, unit)
        shown = f"{_fmt(ratio)}× baseline" if ratio is not None else ""
        text = f"{s:.2f}× the target ({target}); {shown}" if s is not None else f"target: {target}; {shown}"
        out.append(Bar(int(line["row"]), figure, target, s, line.get("met"), text))
    return out


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def render(results: dict[str, Any]) -> str:
    """The SVG document of a results document (as `bench/results.json` holds it)."""
    drawn = bars(results)
    height = TOP + ROW_H * len(drawn) + 40
    x0 = LABEL_W
    scale = BAR_W / SCALE_MAX
    load = results.get("load_average") or {}
    machine = results.get("machine") or {}
    title = (
        f"python -m bench ({results.get('mode', '?')}), {results.get('started_at', '?')}: "
        f"{machine.get('cores', '?')} cores, {machine.get('kernel', '?')}, load average "
        f"{load.get('start', '?')} → {load.get('end', '?')}"
    )
    met = sum(1 for b in drawn if b.met is True)
    missed = sum(1 for b in drawn if b.met is False)
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" '
        f'viewBox="0 0 {WIDTH} {height}" font-family="sans-serif" font-size="12">',
        f"<title>{escape(title)}</title>",
        '<rect width="100%" height="100%" fill="#ffffff"/>',
        f'<text x="8" y="18" font-size="14" font-weight="bold">{escape(title)}</text>',
        f'<text x="8" y="38" fill="#444">Each bar: the figure against its target (the line at 1×); '
        f"green met, red missed ({met} met, {missed} missed). Bars stop at {SCALE_MAX:g}×.</text>",
    ]
    for tick in range(int(SCALE_MAX) + 1):
        x = x0 + tick * scale
        colour = "#222" if tick == 1 else "#ddd"
        parts.append(
            f'<line x1="{x:.1f}" y1="{TOP - 8}" x2="{x:.1f}" y2="{TOP + ROW_H * len(drawn)}" '
            f'stroke="{colour}" stroke-width="{2 if tick == 1 else 1}"/>'
        )
        parts.append(f'<text x="{x:.1f}" y="{TOP - 12}" text-anchor="middle" fill="#444">{tick}×</text>')
    for i, bar in enumerate(drawn):
        y = TOP + i * ROW_H
        label = f"{bar.row}. {bar.figure}"
        fill = "#222" if bar.met is not None else "#999"
        parts.append(
            f'<g class="row" data-row="{bar.row}"><text x="8" y="{y + 14}" fill="{fill}">'
            f"{escape(_clip(label, 64))}</text>"
        )
        if bar.score is not None and math.isfinite(bar.score):
            length = min(bar.score, SCALE_MAX) * scale
            colour = "#2e7d32" if bar.met else "#c62828"
            parts.append(
                f'<rect x="{x0}" y="{y + 4}" width="{max(length, 1):.1f}" height="{ROW_H - 8}" '
                f'fill="{colour}"/>'
            )
            if bar.score > SCALE_MAX:
                parts.append(f'<text x="{x0 + BAR_W + 2}" y="{y + 14}" fill="{colour}">▶</text>')
        elif bar.met is not None:
            mark = "met" if bar.met else "missed"
            colour = "#2e7d32" if bar.met else "#c62828"
            parts.append(f'<text x="{x0 + 4}" y="{y + 14}" fill="{colour}">{mark}</text>')
        parts.append(
            f'<text x="{x0 + BAR_W + 16}" y="{y + 14}" fill="{fill}">{escape(_clip(bar.text, 60))}</text></g>'
        )
    parts.append("</svg>")
    return "\n".join(parts) + "\n"


def write_chart(results_path: Path, out: Path) -> Path:
    """Draw `results_path` (a results document) into `out`; returns `out`."""
    results = json.loads(results_path.read_text(encoding="utf-8"))
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(render(results), encoding="utf-8")
    return out
