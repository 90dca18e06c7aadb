"""`python -m bench [--quick] [--only 1,4] [--profile]`: the benchmark table (see README.md).

Sets itself up first: the project's venv (through scripts/setup.sh), task-spooler from the system's
packages for the row that compares with it, the `bench` extra (jupyter_client and ipykernel) for
row 19's baseline, and py-spy when profiling. Each row is measured against its baseline in the
same run; a row that fails prints its error in the table instead of stopping the run. Every
process a run starts is ended when it stops, even on Ctrl-C or SIGTERM.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path
from types import FrameType

ROOT = Path(__file__).resolve().parent.parent
VENV = ROOT / ".venv"
CHART = ROOT / "docs" / "bench.svg"


def _in_venv() -> bool:
    return Path(sys.prefix).resolve() == VENV.resolve()


def _say(message: str) -> None:
    print(f"bench: {message}", file=sys.stderr, flush=True)


def _setup_project() -> None:
    """Create or refresh the venv as `scripts/serve` and `scripts/test` do."""
    subprocess.run(["bash", "-c", 'source "$1"', "setup", str(ROOT / "scripts" / "setup.sh")], check=True)


def _as_root(argv: list[str]) -> list[str] | None:
    if os.geteuid() == 0:
        return argv
    if shutil.which("sudo"):
        return ["sudo", "-n", *argv]
    return None


def _ensure_task_spooler() -> None:
    from bench.procs import tsp_binary

    if tsp_binary() is not None or shutil.which("apt-get") is None:
        return
    _say("installing task-spooler (apt-get) for the comparison of row 3")
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    install = _as_root(["apt-get", "install", "-y", "-qq", "task-spooler"])
    update = _as_root(["apt-get", "update", "-qq"])
    if install is None or update is None:
        _say("cannot install task-spooler: not root and no sudo; row 3 will say so")
        return
    if subprocess.run(install, env=env, capture_output=True).returncode != 0:
        subprocess.run(update, env=env, capture_output=True)
        subprocess.run(install, env=env, capture_output=True)


def _ensure_bench_extra() -> None:
    """The `bench` extra (jupyter_client and ipykernel: row 19's Jupyter baseline)."""
    import importlib.util

    if all(importlib.util.find_spec(name) is not None for name in ("jupyter_client", "ipykernel")):
        return
    _say("installing the project's bench extra into the venv for row 19's Jupyter baseline")
    if not _pip_install("-e", f"{ROOT}[bench]"):
        _say("cannot install the bench extra; row 19 will say so")
    importlib.invalidate_caches()


def _ensure_py_spy() -> None:
    if not (VENV / "bin" / "py-spy").exists():
        _say("installing py-spy into the venv for --profile")
        if not _pip_install("py-spy"):
            _say("cannot install py-spy into the venv")


def _pip_install(*args: str) -> bool:
    """`pip install -q ARGS` into the venv; whether it succeeded."""
    pip = [str(VENV / "bin" / "python"), "-m", "pip", "install", "-q", *args]
    return subprocess.run(pip, capture_output=True).returncode == 0


def _parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench", description="Workbench benchmarks.")
    parser.add_argument("--quick", action="store_true", help="a reduced set, in under 2 minutes")
    parser.add_argument("--only", help="comma-separated row numbers (e.g. 1,4); writes no files")
    parser.add_argument(
        "--profile",
        nargs="?",
        const="cpu",
        choices=["cpu", "wall"],
        help="py-spy the daemon during each row: cpu (the thread holding the GIL; the default) or wall "
        "(every thread, waits included)",
    )
    parser.add_argument("--keep", action="store_true", help="keep the scratch directory (daemon logs)")
    parser.add_argument("--no-readme", action="store_true", help="do not update README.md")
    parser.add_argument(
        "--chart",
        nargs="?",
        const=str(CHART),
        metavar="SVG",
        help=f"draw the latest table (bench/results.json) as an SVG (default {CHART.relative_to(ROOT)}); "
        "runs no rows",
    )
    return parser.parse_args(argv)


def _terminate(signum: int, frame: FrameType | None) -> None:
    # As Ctrl-C: trio turns SIGINT into KeyboardInterrupt where it is safe to, then all is cleaned up.
    signal.raise_signal(signal.SIGINT)


def main(argv: list[str]) -> int:
    args = _parse(argv)
    if args.chart:
        from bench.chart import write_chart

        _say(f"wrote {write_chart(ROOT / 'bench' / 'results.json', Path(args.chart))}")
        return 0
    if not _in_venv():
        _setup_project()
        python = str(VENV / "bin" / "python")
        os.environ["WB_BENCH_SETUP"] = "done"
        os.execv(python, [python, "-m", "bench", *argv])
    if os.environ.get("WB_BENCH_SETUP") != "done":
        _setup_project()
    _ensure_task_spooler()
    _ensure_bench_extra()
    if args.profile:
        _ensure_py_spy()
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        # Started in the background by a shell: SIGTERM is turned into SIGINT, which must not be ignored.
        signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, _terminate)
    signal.signal(signal.SIGHUP, _terminate)

    from bench.runner import run

    try:
        return run(
            quick=args.quick,
            only=[int(x) for x in args.only.split(",")] if args.only else None,
            profile=args.profile,
            keep=args.keep,
            readme=not args.no_readme,
        )
    except BaseException as exc:
        if _interrupted(exc):
            _say("interrupted; every process it started has been stopped")
            return 130
        raise


def _interrupted(exc: BaseException) -> bool:
    if isinstance(exc, BaseExceptionGroup):
        return all(_interrupted(e) for e in exc.exceptions)
    return isinstance(exc, KeyboardInterrupt)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
