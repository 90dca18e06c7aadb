"""The field types, bounds and checks that request bodies share (`models`, `starts`).

Annotated types carry the JSON schema of what a validator checks (which a schema cannot run);
the checks raise ValueError with a message that names the field, never a value that may be a
secret.
"""

from __future__ import annotations

import re
from typing import Annotated, Any

from pydantic import WithJsonSchema

ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
SESSION_ID = re.compile(r"[A-Za-z0-9._-]{1,64}")
IMAGE_NAME = re.compile(r"[A-Za-z0-9._-]{1,64}")
EXECUTION_ID = re.compile(r"ex_[0-9A-HJKMNP-TV-Z]{26}")
#: A code context's id: `cx_` + a ULID.
CONTEXT_ID = re.compile(r"cx_[0-9A-HJKMNP-TV-Z]{26}")
#: An exit's delivery id: `dl_` + a ULID.
DELIVERY_ID = re.compile(r"dl_[0-9A-HJKMNP-TV-Z]{26}")
#: The kernel's limit on one argument or one `NAME=value` of the environment (MAX_ARG_STRLEN,
#: NUL included): a longer command or variable could only fail at spawn, so it is refused up front.
MAX_ARG_BYTES = 128 * 1024 - 1
#: With `persistShell` the code that keeps the shell's state runs in the command's own argument
#: (`bash -c`), before it: the command may take what that code leaves of the argument.
MAX_PERSIST_COMMAND_BYTES = MAX_ARG_BYTES - 8 * 1024
#: The longest path the kernel takes (PATH_MAX, NUL included).
MAX_PATH_BYTES = 4096 - 1
#: The longest long-poll (`waitTimeoutMs`) and the longest deadline (`timeoutMs`, `idleTimeoutMs`);
#: the daemon's settings hold the same values (`max_wait_timeout_ms`, `max_timeout_ms`).
MAX_WAIT_TIMEOUT_MS = 600_000
MAX_TIMEOUT_MS = 86_400_000
MAX_CANCEL_REASON = 1000
#: The most items a batch holds.
MAX_BATCH_ITEMS = 1000
#: The default and the largest `previewBytes` (API.md, "Output in the record").
DEFAULT_PREVIEW_BYTES = 16384
MAX_PREVIEW_BYTES = 1_048_576

#: An RFC 3339 UTC time with milliseconds, e.g. `2026-11-29T12:00:00.123Z`.
Timestamp = Annotated[str, WithJsonSchema({"type": "string", "format": "date-time"})]


def _string(**keywords: Any) -> Any:
    """The JSON schema of a request string checked by a validator below (which a schema cannot run)."""
    return WithJsonSchema({"type": "string", **keywords}, mode="validation")


# The limits of `command` and of `env` values count UTF-8 bytes, which `maxLength` (characters)
# cannot say: they are in the descriptions.
Command = Annotated[str, _string(minLength=1)]
Cwd = Annotated[str, _string(pattern="^/", maxLength=MAX_PATH_BYTES)]
Env = Annotated[
    dict[str, str],
    WithJsonSchema(
        {
            "type": "object",
            "propertyNames": {"pattern": f"^{ENV_NAME.pattern}$"},
            "additionalProperties": {"type": "string"},
        },
        mode="validation",
    ),
]
SessionId = Annotated[str, _string(pattern=f"^{SESSION_ID.pattern}$")]
ImageName = Annotated[str, _string(pattern=f"^{IMAGE_NAME.pattern}$")]


def no_nul(value: str, what: str) -> str:
    if "\x00" in value:
        raise ValueError(f"{what} must not contain NUL bytes")
    return value


def at_most(value: str, limit: int, what: str) -> str:
    if len(value) > limit // 4 and len(value.encode("utf-8", errors="surrogatepass")) > limit:
        raise ValueError(f"{what} must be at most {limit} bytes")
    return value


def strict_bool(value: Any) -> Any:
    # "yes", 1 or "false" are not JSON booleans; lax parsing would read "false" as False.
    if not isinstance(value, bool):
        raise ValueError("must be true or false")
    return value


def check_env(value: dict[str, str]) -> dict[str, str]:
    for name, item in value.items():
        if not ENV_NAME.fullmatch(name):
            raise ValueError(f"env name {name!r} must match [A-Za-z_][A-Za-z0-9_]*")
        # The messages name the variable, never its value (which may be a secret).
        no_nul(item, f"env value of {name}")
        at_most(f"{name}={item}", MAX_ARG_BYTES, f"env {name}=value")
    return value


def check_command(value: str, *, persist_shell: bool = False) -> str:
    # Longer commands belong in workbench_code, which runs them from a file.
    if persist_shell:  # the state-keeping code shares the command's argument (`bash -c`)
        return at_most(no_nul(value, "command"), MAX_PERSIST_COMMAND_BYTES, "with persistShell, command")
    return at_most(no_nul(value, "command"), MAX_ARG_BYTES, "command")


def check_session(value: str) -> str:
    if not SESSION_ID.fullmatch(value) or value in {".", ".."}:
        raise ValueError("sessionId must be 1 to 64 letters, digits, '-', '_' or '.', and not '.' or '..'")
    return value


def no_bool(value: Any) -> Any:
    # JSON true or "100" is not a number of milliseconds, whatever lax parsing would make of it.
    if isinstance(value, bool | str):
        raise ValueError(f"must be an integer, not a {'boolean' if isinstance(value, bool) else 'string'}")
    return value
