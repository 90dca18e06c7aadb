"""The results: one line per figure, printed as an aligned table and saved as JSON."""

from __future__ import annotations

import json
import re
import textwrap
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

MS = "ms"
SECONDS = "s"
MB = "MB"
RATIO = "x"


@dataclass
class Line:
    """One figure beside its baseline (both measured in the same run)."""

    row: int
    figure: str
    value: float | None = None
    unit: str = MS
    baseline: str = "—"
    baseline_value: float | None = None
    #: value / baseline_value unless given.
    ratio: float | None = None
    target: str = "—"
    met: bool | None = None
    samples: int | None = None
    note: str = ""
    #: Why the figure is missing (the row failed or its feature is unavailable).
    error: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.ratio is None and self.value is not None and self.baseline_value:
            self.ratio = self.value / self.baseline_value


def fmt(value: float | None, unit: str) -> str:
    if value is None:
        return "—"
    if unit == MB:
        return f"{value:.0f} MB"
    if unit == RATIO:
        return f"{value:.2f}x"
    if unit == "":
        return f"{value:.0f}"
    if abs(value) < 10:
        return f"{value:.2f} {unit}"
    if abs(value) < 100:
        return f"{value:.1f} {unit}"
    return f"{value:.0f} {unit}"


def _met(line: Line) -> str:
    if line.error is not None:
        return "n/a"
    if line.met is None:
        return ""
    return "yes" if line.met else "NO"


HEADERS = ("#", "figure", "value", "baseline (same run)", "value", "ratio", "target", "met")


def render(lines: list[Line]) -> str:
    """The aligned table, then the notes and errors keyed by row."""
    rows: list[tuple[str, ...]] = []
    last_row = None
    for line in lines:
        number = str(line.row) if line.row != last_row else ""
        last_row = line.row
        if line.error is not None:
            rows.append((number, line.figure, "—", line.baseline, "—", "—", line.target, _met(line)))
            continue
        rows.append(
            (
                number,
                line.figure,
                fmt(line.value, line.unit),
                line.baseline,
                fmt(line.baseline_value, line.unit),
                "—" if line.ratio is None else f"{line.ratio:.2f}",
                line.target,
                _met(line),
            )
        )
    widths = [max(len(r[i]) for r in [HEADERS, *rows]) for i in range(len(HEADERS))]
    right = {2, 4, 5}

    def cell(i: int, text: str) -> str:
        return text.rjust(widths[i]) if i in right else text.ljust(widths[i])

    out = ["  ".join(cell(i, h) for i, h in enumerate(HEADERS)).rstrip()]
    out.append("  ".join("-" * w for w in widths))
    out.extend("  ".join(cell(i, c) for i, c in enumerate(r)).rstrip() for r in rows)
    notes = [
        f"  {line.row}. {line.figure}: {line.error if line.error is not None else line.note}"
        for line in lines
        if line.error is not None or line.note
    ]
    if notes:
        out.append("")
        out.append("notes:")
        out.extend(notes)
    return "\n".join(out)


def to_json(lines: list[Line], meta: dict[str, Any]) -> str:
    return json.dumps({**meta, "rows": [asdict(line) for line in lines]}, indent=2, ensure_ascii=False) + "\n"


BENCH_START = "<!-- bench:start -->"
BENCH_END = "<!-- bench:end -->"


def readme_section(command: str, table: str, machine_sentence: str) -> str:
    intro = (
        "Each figure is measured side by side with its baseline in the same run (alternating A B A B, "
        "medians and p99 over repeated runs), against a real daemon started as a subprocess on a free "
        "port with a fresh data dir:"
    )
    usage = (
        "It sets up what it needs first (the project's venv, task-spooler from the system's "
        "packages for row 3, and the project's `bench` extra, jupyter_client and ipykernel, for "
        "row 19) and saves the results as `bench/results.json` too. `--quick` runs a "
        "reduced set in under two minutes; `--only 1,4` runs some rows; `--profile cpu|wall` samples "
        "the daemon with py-spy during each row and prints its top frames. A row that fails says why "
        "in its line instead of stopping the run. `--chart` draws the latest table as "
        "`docs/bench.svg` (a full run draws it too): each figure against its target."
    )
    return (
        f"{BENCH_START}\n"
        "## Benchmarks\n\n"
        f"{textwrap.fill(intro, 100)}\n\n"
        f"```sh\n{command}\n```\n\n"
        f"{textwrap.fill(usage, 100)}\n\n"
        f"```\n{table}\n```\n\n"
        "![Each figure of the table against its target](docs/bench.svg)\n\n"
        f"{textwrap.fill(machine_sentence, 100)}\n"
        f"{BENCH_END}"
    )


def update_readme(readme: Path, section: str) -> None:
    """Replace the text between the bench markers (markers included) with `section`."""
    text = readme.read_text(encoding="utf-8")
    pattern = re.compile(re.escape(BENCH_START) + r".*?" + re.escape(BENCH_END), re.S)
    if not pattern.search(text):
        raise ValueError(f"{readme.name} has no {BENCH_START} … {BENCH_END} markers")
    readme.write_text(pattern.sub(lambda _: section, text, count=1), encoding="utf-8")
