"""Turning an accepted execution into what the sandbox starts: directory, argv, environment, limits."""

from __future__ import annotations

import json
import os
import pwd
import shutil
from pathlib import Path
from typing import Any

import sandbox
from workbench.errors import ImageUnavailable, InvalidRequest, UnknownImage, UnsupportedLanguage
from workbench.images import EXECUTION_PATH, Image, ImageLimits

#: Files of an execution's directory besides the spool files.
STDIN_FILE = "stdin"
PROGRESS_FILE = "progress"


def base_env(execution_id: str, directory: Path) -> dict[str, str]:
    """The small clean environment every execution starts from (never the daemon's own)."""
    try:
        user = pwd.getpwuid(os.getuid())
        home, name, shell = user.pw_dir, user.pw_name, user.pw_shell or "/bin/sh"
    except KeyError:
        home, name, shell = "/", str(os.getuid()), "/bin/sh"
    return {
        "PATH": EXECUTION_PATH,
        "HOME": home,
        "USER": name,
        "LOGNAME": name,
        "SHELL": shell,
        "LANG": "C.UTF-8",
        "TERM": "dumb",
        "WORKBENCH_EXECUTION_ID": execution_id,
        "WORKBENCH_PROGRESS": str(directory / PROGRESS_FILE),
    }


def resolve_image(images: dict[str, Image], name: str) -> Image:
    """The image by that name, or the API error that says why it cannot be used."""
    image = images.get(name)
    if image is None:
        raise UnknownImage(f"no image named {name!r}; images: {', '.join(sorted(images))}")
    if not image.available:
        raise ImageUnavailable(f"image {name!r} is not available on this machine: {image.unavailable_reason}")
    return image


def resolve_language(image: Image, language: str) -> None:
    """Raise UnsupportedLanguage unless `image` can run `language` here."""
    lang = image.languages.get(language)
    if lang is None or lang.program is None:
        have = image.available_languages
        raise UnsupportedLanguage(
            f"image {image.name!r} cannot run {language!r}; languages: {', '.join(have) or 'none'}",
            details={"languages": have},
        )


def resolve_cwd(image: Image, workspace: Path, cwd: str | None) -> str:
    """The working directory of a new execution: the session's workspace unless `cwd` is given.

    The workspace is made on first use. Raises InvalidRequest for a `cwd` that is not an
    accessible directory.
    """
    if cwd is None:
        workspace.mkdir(mode=0o700, parents=True, exist_ok=True)
        return str(workspace)
    path = Path(cwd)
    if not path.is_dir():
        raise _cwd_error(f"{cwd} does not exist or is not a directory")
    if not os.access(path, os.X_OK):
        raise _cwd_error(f"{cwd} is not accessible")
    return os.path.normpath(cwd)


def _cwd_error(message: str) -> InvalidRequest:
    return InvalidRequest(f"cwd {message}", details=[{"field": "cwd", "message": message}])


def code_file_name(image: Image, language: str) -> str:
    return "code" + image.languages[language].extension


def argv_for(row: dict[str, Any], image: Image, directory: Path) -> tuple[str, ...]:
    """The program and arguments of an execution."""
    if row["kind"] == "workbench_bash":
        return (*image.shell, row["command"])
    lang = image.languages[row["language"]]
    path = str(directory / code_file_name(image, row["language"]))
    return tuple(path if part == "{file}" else part for part in lang.argv)


def prepare_directory(row: dict[str, Any], image: Image, directory: Path) -> None:
    """Create the execution's directory with its stdin and code files (idempotent)."""
    directory.mkdir(mode=0o700, parents=True, exist_ok=True)
    if row.get("stdin") is not None:
        _write(directory / STDIN_FILE, row["stdin"].encode("utf-8"))
    if row["kind"] == "workbench_code":
        _write(directory / code_file_name(image, row["language"]), row["code"].encode("utf-8"))


def _write(path: Path, data: bytes) -> None:
    tmp = path.with_name(path.name + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o600)
    try:
        os.write(fd, data)
    finally:
        os.close(fd)
    os.replace(tmp, path)


def spawn_spec(
    row: dict[str, Any], image: Image, directory: Path, containment: sandbox.Containment
) -> sandbox.SpawnSpec:
    """What the sandbox is asked to start for this execution."""
    env = base_env(row["id"], directory)
    env.update(image.env)
    env.update(json.loads(row["env_json"]))
    return sandbox.SpawnSpec(
        name=row["id"],
        argv=argv_for(row, image, directory),
        env=env,
        cwd=row["cwd"],
        dir=str(directory),
        stdout_path=str(directory / "stdout"),
        stderr_path=str(directory / "stderr"),
        stdin_path=str(directory / STDIN_FILE) if row.get("stdin") is not None else None,
        limits=_limits(image.limits),
        containment=containment,
        tag=("WORKBENCH_EXECUTION_ID", row["id"]),
    )


def _limits(limits: ImageLimits) -> sandbox.Limits:
    return sandbox.Limits(
        max_processes=limits.max_processes,
        max_open_files=limits.max_open_files,
        max_file_size_bytes=limits.max_file_size_bytes,
        cpu_seconds=limits.cpu_seconds,
        memory_bytes=limits.memory_bytes,
    )


def remove_directory(directory: Path, keep: set[str]) -> None:
    """Remove everything of an execution's directory but the files in `keep` (its artifacts)."""
    if not directory.exists():
        return
    if not keep:
        shutil.rmtree(directory, ignore_errors=True)
        return
    for entry in directory.iterdir():
        if entry.name in keep:
            continue
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry, ignore_errors=True)
        else:
            entry.unlink(missing_ok=True)
