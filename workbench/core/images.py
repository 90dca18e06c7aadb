"""Images: what an execution runs in (`images/<name>.toml`): shell, languages, env, limits, isolation.

Image files are read and checked once at start; a bad file stops the daemon with a message that
names the file and the field. Programs (the shell, each language's interpreter) are resolved to
real absolute paths on the executions' PATH once, so no execution pays for a lookup or a shim
script. A language whose program is missing is left out of what the image offers; a `sandbox`
image is unavailable, with the reason, where bubblewrap is missing or does not work.
"""

from __future__ import annotations

import os
import re
import shutil
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import sandbox
from workbench.core.settings import GiB, KiB, MiB
from workbench.wire.errors import ConfigError

#: The PATH of every execution (the image's env may override it).
EXECUTION_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

_NAME = re.compile(r"[A-Za-z0-9._-]{1,64}")
_LANGUAGE = re.compile(r"[a-z0-9][a-z0-9_+-]{0,63}")
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
#: Multi-call programs choose what to be by their name: keep the name they were found under.
_MULTI_CALL = {"busybox", "toybox"}
_SIZE = re.compile(r"\s*(\d+)\s*(B|KiB|MiB|GiB)?\s*")
_UNITS = {None: 1, "B": 1, "KiB": KiB, "MiB": MiB, "GiB": GiB}
_TOP_KEYS = {"description", "shell", "languages", "env", "limits", "isolation"}
#: Sandboxes that ran their trial once in this process: it is not run again (about 20 ms a start).
_WORKED: set[tuple[object, ...]] = set()
_LIMIT_KEYS = {"max_processes", "max_open_files", "max_file_size", "cpu_seconds", "memory"}
_ISOLATION_KEYS = {"filesystem", "network"}
_KINDS: dict[type, str] = {str: "string", dict: "table", list: "list"}


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
    #: The programs of the sandbox (`filesystem = "sandbox"`, where it works), else None.
    bubblewrap: sandbox.Bubblewrap | None = None
    #: (uid, gid) its sandboxed trees run as; None: the daemon's own.
    user: tuple[int, int] | None = None

    @property
    def available(self) -> bool:
        """Whether executions can run in this image on this machine."""
        return self.unavailable_reason is None

    @property
    def sandboxed(self) -> bool:
        """Whether its executions run under bubblewrap."""
        return self.filesystem == "sandbox"

    @property
    def available_languages(self) -> list[str]:
        """The languages whose program is installed here, sorted."""
        return sorted(name for name, lang in self.languages.items() if lang.program is not None)


def default_images_dir() -> Path:
    """`images/` of the source tree this package runs from."""
    return Path(__file__).resolve().parents[2] / "images"


def load_images(
    directory: Path, *, bwrap: str | None, user: tuple[int, int] | None = None
) -> dict[str, Image]:
    """Read and check every `*.toml` of `directory`; `host` must be among them.

    `bwrap` is the bubblewrap program (None: not installed); `sandbox` images are unavailable
    without it, or when a trial run in it fails. `user`: the (uid, gid) sandboxed trees run as
    (the daemon must be root), or None for the daemon's own.

    Raises:
        ConfigError: naming the file and the field that is wrong.
    """
    if not directory.is_dir():
        raise ConfigError(f"images directory {directory} does not exist (set WORKBENCH_IMAGES_DIR)")
    images: dict[str, Image] = {}
    for path in sorted(directory.glob("*.toml")):
        image = load_image(path, bwrap=bwrap, user=user)
        images[image.name] = image
    if "host" not in images:
        raise ConfigError(f"images directory {directory} has no host.toml (the default image)")
    return images


def load_image(path: Path, *, bwrap: str | None, user: tuple[int, int] | None = None) -> Image:
    """Read and check one image file (see `load_images`).

    Raises:
        ConfigError: naming the file and the field that is wrong.
    """
    name = path.stem
    where = f"image file {path}"
    if not _NAME.fullmatch(name):
        raise ConfigError(f"{where}: the file name must be 1 to 64 letters, digits, '-', '_' or '.'")
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"{where}: cannot be read: {exc}") from None
    _no_unknown(data, _TOP_KEYS, where, "")
    description = _get(data, "description", str, where, default="")
    env = _env(_get(data, "env", dict, where, default={}), where)
    # The executions' PATH, where the image's env does not replace it, finds the programs.
    path_var = env.get("PATH", EXECUTION_PATH)

    shell = _argv(data.get("shell", ["bash", "-c"]), f"{where}: field 'shell'")
    shell_program = _which(shell[0], path_var)
    if shell_program is None:
        raise ConfigError(f"{where}: field 'shell': program {shell[0]!r} is not installed")
    shell = (shell_program, *shell[1:])

    limits = _limits(_get(data, "limits", dict, where, default={}), where)
    filesystem, network = _isolation(_get(data, "isolation", dict, where, default={}), where)
    hidden = sandbox.PRIVATE_DIRS if filesystem == "sandbox" else ()
    languages = {
        lang: _language(lang, spec, f"{where}: field 'languages.{lang}'", path_var, hidden)
        for lang, spec in _get(data, "languages", dict, where, default={}).items()
    }

    tools: sandbox.Bubblewrap | None = None
    reason = None
    if filesystem == "sandbox":
        tools, reason = _bubblewrap(bwrap, shell, network, user)
    return Image(
        name=name,
        description=description,
        shell=shell,
        languages=languages,
        env=env,
        limits=limits,
        filesystem=filesystem,
        network=network,
        source=path,
        unavailable_reason=reason,
        bubblewrap=tools,
        user=user if filesystem == "sandbox" else None,
    )


def _bubblewrap(
    bwrap: str | None, shell: tuple[str, ...], network: bool, user: tuple[int, int] | None
) -> tuple[sandbox.Bubblewrap | None, str | None]:
    """The sandbox's programs, or why a sandbox cannot run here (it is tried once)."""
    if bwrap is None:
        return None, "bubblewrap (bwrap) is not installed; install the package bubblewrap"
    # Called by its own name, never by the shell it links to: bash called `bash` would read a
    # request's BASH_ENV, as root and outside the sandbox; called `sh`, no start-up file.
    sh = shutil.which("sh", path=EXECUTION_PATH)
    sh = os.path.abspath(sh) if sh is not None and os.path.isfile(sh) and os.access(sh, os.X_OK) else None
    if sh is None:
        return None, "no sh on the executions' PATH to lead the sandbox"
    setpriv = None
    if user is not None:
        setpriv = _which("setpriv", EXECUTION_PATH)
        if setpriv is None:
            return None, (
                f"running the sandbox as uid {user[0]} needs setpriv (util-linux), which is missing; "
                "install it, or set WORKBENCH_SANDBOX_UID=0 to run the sandbox as root"
            )
    prlimit = _which("prlimit", EXECUTION_PATH)  # util-linux, as setpriv; without it, see sandboxed_argv
    tools = sandbox.Bubblewrap(bwrap=os.path.realpath(bwrap), sh=sh, setpriv=setpriv, prlimit=prlimit)
    trial = (tools, shell, network, user)
    if trial in _WORKED:
        return tools, None
    reason = sandbox.probe_bubblewrap(tools, (*shell, "exit 0"), network=network, user=user)
    if reason:
        return None, reason  # tried again by the next daemon start: it may have been passing
    _WORKED.add(trial)
    return tools, None


def _language(name: str, spec: Any, where: str, path_var: str, hidden: tuple[str, ...]) -> Language:
    if not _LANGUAGE.fullmatch(name):
        raise ConfigError(f"{where}: a language name is 1 to 64 of a-z, 0-9, '_', '+' or '-'")
    if not isinstance(spec, dict):
        raise ConfigError(f"{where} must be a table with 'command' and 'extension'")
    _no_unknown(spec, {"command", "extension"}, where, "")
    argv = _argv(spec.get("command"), f"{where}.command")
    if "{file}" not in argv[1:]:
        raise ConfigError(f'{where}.command must name the code file as an argument "{{file}}"')
    extension = spec.get("extension", "")
    if not isinstance(extension, str) or not re.fullmatch(r"(\.[A-Za-z0-9]{1,10})?", extension):
        raise ConfigError(f'{where}.extension must look like ".py"')
    program = _which(argv[0], path_var)
    if program is not None and any(_inside(program, d) for d in hidden):
        program = None  # installed where the sandbox sees an empty directory
    return Language(name, (program or argv[0], *argv[1:]), extension, program)


def _isolation(raw: Mapping[str, Any], where: str) -> tuple[str, bool]:
    _no_unknown(raw, _ISOLATION_KEYS, where, "isolation.")
    filesystem = raw.get("filesystem", "host")
    if filesystem not in {"host", "sandbox"}:
        raise ConfigError(f'{where}: field \'isolation.filesystem\' must be "host" or "sandbox"')
    network = raw.get("network", filesystem == "host")
    if not isinstance(network, bool):
        raise ConfigError(f"{where}: field 'isolation.network' must be true or false")
    if filesystem == "host" and not network:
        raise ConfigError(f"{where}: 'isolation.network = false' needs 'isolation.filesystem = \"sandbox\"'")
    return filesystem, network


def _env(raw: Mapping[str, Any], where: str) -> dict[str, str]:
    for key, value in raw.items():
        if not _ENV_NAME.fullmatch(key):
            raise ConfigError(f"{where}: field 'env.{key}': not a valid variable name")
        if not isinstance(value, str) or "\x00" in value:
            raise ConfigError(f"{where}: field 'env.{key}' must be a string without NUL")
    return dict(raw)


def _no_unknown(raw: Mapping[str, Any], known: set[str], where: str, prefix: str) -> None:
    unknown = sorted(set(raw) - known)
    if unknown:
        raise ConfigError(f"{where}: unknown field '{prefix}{unknown[0]}'; fields: {sorted(known)}")


def _get(data: Mapping[str, Any], key: str, kind: type, where: str, *, default: Any) -> Any:
    value = data.get(key, default)
    if not isinstance(value, kind):
        raise ConfigError(f"{where}: field {key!r} must be a {_KINDS.get(kind, kind.__name__)}")
    return value


def _argv(value: Any, where: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not value or not all(isinstance(v, str) and v for v in value):
        raise ConfigError(f"{where} must be a non-empty list of non-empty strings")
    if any("\x00" in v for v in value):
        raise ConfigError(f"{where} must not contain NUL")
    return tuple(value)


def _limits(raw: Mapping[str, Any], where: str) -> ImageLimits:
    _no_unknown(raw, _LIMIT_KEYS, where, "limits.")

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
            raise ConfigError(f"{where}: field 'limits.{key}' must be a size such as \"4GiB\" (or 0)")
        return int(found.group(1)) * _UNITS[found.group(2)] or None

    return ImageLimits(
        max_processes=count("max_processes"),
        max_open_files=count("max_open_files"),
        max_file_size_bytes=size("max_file_size"),
        cpu_seconds=count("cpu_seconds"),
        memory_bytes=size("memory"),
    )


def _which(program: str, path: str) -> str | None:
    """The real absolute path of the executable `program`, looked up on `path`; None if missing.

    Symlinks are resolved (so `python3` names the interpreter itself), except to a multi-call
    program such as busybox, which must keep the name it was called by.
    """
    found = program if os.path.isabs(program) else shutil.which(program, path=path)
    if found is None or not os.path.isfile(found) or not os.access(found, os.X_OK):
        return None
    real = os.path.realpath(found)
    return os.path.abspath(found) if os.path.basename(real) in _MULTI_CALL else real


def _inside(path: str, directory: str) -> bool:
    return path == directory or path.startswith(directory.rstrip("/") + "/")
