"""The `workbench` command line."""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path


def _serve(args: argparse.Namespace) -> int:
    from workbench.errors import ConfigError
    from workbench.settings import Settings

    logging.basicConfig(
        level=logging.INFO,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        stream=sys.stderr,
    )
    try:
        settings = Settings.load(
            bind=args.bind,
            data_dir=args.data_dir,
            unix_socket=args.unix_socket,
            allow_remote=args.allow_remote or None,
        )
        from api.serve import run  # the one place the CLI reaches into the HTTP layer

        return run(settings)
    except ConfigError as exc:
        print(f"workbench: {exc.message}", file=sys.stderr)
        return 2


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="workbench", description="Durable, contained executions.")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    serve = sub.add_parser("serve", help="run the daemon", description="Run the Workbench daemon.")
    serve.add_argument("--bind", help="HOST:PORT to listen on (default 127.0.0.1:8787, or $WORKBENCH_BIND)")
    serve.add_argument("--unix-socket", type=Path, help="also listen on this Unix socket (mode 0600)")
    serve.add_argument(
        "--data-dir", type=Path, help="where the store and files live (default ~/.local/share/workbench)"
    )
    serve.add_argument(
        "--allow-remote",
        action="store_true",
        help="allow binding a non-loopback address (anyone who reaches it with a token runs commands)",
    )
    serve.set_defaults(func=_serve)
    return parser


def main(argv: list[str] | None = None) -> None:
    parser = build_parser()
    args = parser.parse_args(argv)
    raise SystemExit(args.func(args))
