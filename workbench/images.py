"""Images: what an execution runs in (`images/<name>.toml`): shell, languages, env, limits, isolation.

Image files are read and checked once at start; a bad file stops the daemon with a message that
names the file and the field. Programs (the shell, each language's interpreter) are resolved to
absolute paths on the executions' PATH once, so no execution pays for a lookup or a shim.
"""

from __future__ import annotations

import os
import re
import shutil
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from workbench.errors import ConfigError
from workbench.settings import GiB, KiB, MiB

#: The PATH of every execution (the image's env may override it).
EXECUTION_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

_NAME = re.compile(r"[A-Za-z0-9._-]{1,64}")
_SIZE = re.compile(r"\s*(\d+)\s*(B|KiB|MiB|GiB)?\s*")
_UNITS = {None: 1, "B": 1, "KiB": KiB, "MiB": MiB, "GiB": GiB}
_TOP_KEYS = {"description", "shell", "languages", "env", "limits", "isolation"}
_LIMIT_KEYS = {"max_processes", "max_open_files", "max_file_size", "cpu_seconds", "memory"}
_ISOLATION_KEYS = {"filesystem", "network"}


@dataclass(frozen=True)
class ImageLimits:
    """Per-execution limits; None means no limit."""

    max_processes: int | None = None
    max_open_files: int | None = None
    max_file_size_bytes: int | None = None
    cpu_seconds: int | None = None
    memory_bytes: int | None = None


@dataclass(frozen=True)
class Language:
    """How `workbench_code` runs one language: `argv` with "{file}" standing for the code file."""

    name: str
    argv: tuple[str, ...]
    extension: str
    #: Absolute path of the program, or None when it is not installed on this machine.
    program: str | None


@dataclass(frozen=True)
class Image:
    """One image, checked and resolved."""

    name: str
    description: str
    shell: tuple[str, ...]
    languages: dict[str, Language]
    env: dict[str, str]
    limits: ImageLimits
    filesystem: str  # "host" | "sandbox"
    network: bool
    source: Path
    unavailable_reason: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def available(self) -> bool:
        return self.unavailable_reason is None

    @property
    def available_languages(self) -> list[str]:
        return sorted(name for name, lang in self.languages.items() if lang.program is not None)


def default_images_dir() -> Path:
    """`images/` of the source tree this package runs from."""
    return Path(__file__).resolve().parent.parent / "images"


def load_images(directory: Path, *, bwrap: str | None) -> dict[str, Image]:
    """Read and check every `*.toml` of `directory`. `host` must be among them.

    Raises:
        ConfigError: naming the file and the field that is wrong.
    """
    if not directory.is_dir():
        raise ConfigError(f"images directory {directory} does not exist (set WORKBENCH_IMAGES_DIR)")
    images: dict[str, Image] = {}
    for path in sorted(directory.glob("*.toml")):
        image = load_image(path, bwrap=bwrap)
        images[image.name] = image
    if "host" not in images:
        raise ConfigError(f"images directory {directory} has no host.toml (the default image)")
    return images


def load_image(path: Path, *, bwrap: str | None) -> Image:
    """Read and check one image file."""
    name = path.stem
    where = f"image file {path}"
    if not _NAME.fullmatch(name):
        raise ConfigError(f"{where}: the file name must be letters, digits, '-', '_' or '.'")
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"{where}: cannot be read: {exc}") from None
    unknown = set(data) - _TOP_KEYS
    if unknown:
        raise ConfigError(f"{where}: unknown field {sorted(unknown)[0]!r}; fields: {sorted(_TOP_KEYS)}")
    description = _get(data, "description", str, where, default="")
    shell = _argv(data.get("shell", ["bash", "-c"]), f"{where}: field 'shell'")
    shell_program = _which(shell[0])
    if shell_program is None:
        raise ConfigError(f"{where}: field 'shell': program {shell[0]!r} is not installed")
    shell = (shell_program, *shell[1:])

    languages: dict[str, Language] = {}
    raw_languages = _get(data, "languages", dict, where, default={})
    for lang_name, spec in raw_languages.items():
        lwhere = f"{where}: field 'languages.{lang_name}'"
        if not isinstance(spec, dict):
            raise ConfigError(f"{lwhere} must be a table")
        unknown = set(spec) - {"command", "extension"}
        if unknown:
            raise ConfigError(f"{lwhere}: unknown field {sorted(unknown)[0]!r}")
        argv = _argv(spec.get("command"), f"{lwhere}.command")
        if "{file}" not in argv:
            raise ConfigError(f'{lwhere}.command must contain "{{file}}"')
        extension = spec.get("extension", "")
        if not isinstance(extension, str) or not re.fullmatch(r"(\.[A-Za-z0-9]{1,10})?", extension):
            raise ConfigError(f'{lwhere}.extension must look like ".py"')
        program = _which(argv[0])
        languages[lang_name] = Language(lang_name, (program or argv[0], *argv[1:]), extension, program)

    env = _get(data, "env", dict, where, default={})
    for key, value in env.items():
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", key) or not isinstance(value, str) or "\x00" in value:
            raise ConfigError(f"{where}: field 'env.{key}' must be a string with a valid variable name")

    limits = _limits(_get(data, "limits", dict, where, default={}), where)
    isolation = _get(data, "isolation", dict, where, default={})
    unknown = set(isolation) - _ISOLATION_KEYS
    if unknown:
        raise ConfigError(f"{where}: unknown field 'isolation.{sorted(unknown)[0]}'")
    filesystem = isolation.get("filesystem", "host")
    if filesystem not in {"host", "sandbox"}:
        raise ConfigError(f'{where}: field \'isolation.filesystem\' must be "host" or "sandbox"')
    network = isolation.get("network", True)
    if not isinstance(network, bool):
        raise ConfigError(f"{where}: field 'isolation.network' must be true or false")
    if filesystem == "host" and not network:
        raise ConfigError(f"{where}: 'isolation.network = false' needs 'isolation.filesystem = \"sandbox\"'")

    reason = None
    if filesystem == "sandbox" and bwrap is None:
        reason = "bubblewrap (bwrap) is not installed; install the package bubblewrap"
    return Image(
        name=name,
        description=description,
        shell=shell,
        languages=languages,
        env=dict(env),
        limits=limits,
        filesystem=filesystem,
        network=network,
        source=path,
        unavailable_reason=reason,
    )


def _get(data: Mapping[str, Any], key: str, kind: type, where: str, *, default: Any) -> Any:
    value = data.get(key, default)
    if not isinstance(value, kind):
        raise ConfigError(f"{where}: field {key!r} must be a {kind.__name__}")
    return value


def _argv(value: Any, where: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not value or not all(isinstance(v, str) and v for v in value):
        raise ConfigError(f"{where} must be a non-empty list of strings")
    return tuple(value)


def _limits(raw: Mapping[str, Any], where: str) -> ImageLimits:
    unknown = set(raw) - _LIMIT_KEYS
    if unknown:
        raise ConfigError(
            f"{where}: unknown field 'limits.{sorted(unknown)[0]}'; fields: {sorted(_LIMIT_KEYS)}"
        )

    def count(key: str) -> int | None:
        value = raw.get(key, 0)
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise ConfigError(f"{where}: field 'limits.{key}' must be a whole number >= 0")
        return value or None

    def size(key: str) -> int | None:
        value = raw.get(key, 0)
        if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
            return value or None
        found = _SIZE.fullmatch(value) if isinstance(value, str) else None
        if found is None:
            raise ConfigError(f"{where}: field 'limits.{key}' must be a size such as \"4GiB\"")
        return int(found.group(1)) * _UNITS[found.group(2)] or None

    return ImageLimits(
        max_processes=count("max_processes"),
        max_open_files=count("max_open_files"),
        max_file_size_bytes=size("max_file_size"),
        cpu_seconds=count("cpu_seconds"),
        memory_bytes=size("memory"),
    )


def _which(program: str) -> str | None:
    """The absolute, symlink-free path of `program` on the executions' PATH."""
    found = program if os.path.isabs(program) else shutil.which(program, path=EXECUTION_PATH)
    if found is None or not os.access(found, os.X_OK):
        return None
    return os.path.realpath(found)
