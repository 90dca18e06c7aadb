"""The tools of `workbench mcp`: their names, what a model reads about each, and their arguments.

Each tool's arguments are a pydantic model: its JSON schema is the tool's `inputSchema`, and the
same model checks every call, so what the model is told and what is accepted cannot drift. The
descriptions are written for a model deciding what to call, not for a person reading code.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, model_validator
from pydantic.alias_generators import to_camel

from workbench.wire.fields import EXECUTION_ID, SESSION_ID
from workbench.wire.models import MAX_WAIT_TIMEOUT_MS
from workbench.wire.services import Readiness
from workbench.wire.status import StatusName

MAX_WAIT_S = MAX_WAIT_TIMEOUT_MS / 1000
#: The default wait of `bash` and `code`: long enough for most commands, short enough that a model
#: that started a server or a long build gets its turn back.
DEFAULT_WAIT_S = 30.0
#: The most text a `logs` call returns, and its default.
MAX_LOG_BYTES = 1_048_576
DEFAULT_LOG_BYTES = 16_384
#: The most bytes `read_file` returns at once, and its default.
MAX_READ_BYTES = 1_048_576
DEFAULT_READ_BYTES = 65_536


def _session(value: str) -> str:
    if value in {".", ".."}:
        raise ValueError("sessionId must not be '.' or '..'")
    return value


#: The ids go into URLs: anything else is refused here, by the schema's pattern.
ExecutionId = Annotated[str, Field(pattern=f"^{EXECUTION_ID.pattern}$")]
SessionId = Annotated[str, Field(pattern=f"^{SESSION_ID.pattern}$"), AfterValidator(_session)]


class Arguments(BaseModel):
    """Arguments of a tool, camelCase as in the HTTP API; unknown ones are an error, as there.
    Strict, as the schema says: `"yes"` or `1` is not a boolean, `"5"` is not a number."""

    model_config = ConfigDict(extra="forbid", frozen=True, alias_generator=to_camel, strict=True)


class _Starting(Arguments):
    cwd: str | None = Field(
        default=None,
        description="Absolute working directory. Default: the session's workspace, a directory kept "
        "between calls of the same sessionId, so files written by one command are there for the next.",
    )
    timeout_seconds: float | None = Field(
        default=None,
        ge=0.001,
        le=86_400,
        description="Kill it after this long (default: 1 hour; a service: none, it stays up).",
    )
    wait_seconds: float = Field(
        default=DEFAULT_WAIT_S,
        ge=0,
        le=MAX_WAIT_S,
        description="How long to wait for the end before answering (default 30). A run that takes "
        "longer goes on in the background: the answer then says so and gives its executionId.",
    )
    background: bool = Field(
        default=False,
        description="Answer at once with the executionId; its outcome comes from the exits tool "
        "later. Not with waitSeconds.",
    )
    session_id: SessionId | None = Field(
        default=None, description="Session whose workspace is the default cwd (default: `default`)."
    )
    image: str | None = Field(
        default=None, description="What it runs in: `host` (default) or `sandbox` (no network, private /tmp)."
    )
    open_stdin: bool = Field(
        default=False,
        description="Keep its stdin open for a program that asks questions or reads commands (a REPL, "
        "a prompt): answer it with the input tool. Use a small waitSeconds so the call returns while "
        "it waits for input.",
    )

    @model_validator(mode="after")
    def _no_wait_in_background(self) -> Any:
        if self.background and "wait_seconds" in self.model_fields_set:
            raise ValueError("waitSeconds cannot be given with background: true (it answers at once)")
        return self


class BashArguments(_Starting):
    command: str = Field(min_length=1, description="The bash command line, run as `bash -c COMMAND`.")
    service: bool = Field(
        default=False,
        description="Start a service (a dev server, a database): it stays up after the answer, its "
        "background processes too, until cancelled with the execution tool. The answer comes once "
        "it is ready (see readiness) or within waitSeconds.",
    )
    readiness: Readiness | None = Field(
        default=None,
        description='With service: when it is ready: {"port": 8000} (something of it listens on '
        'that TCP port) or {"logPattern": "Listening on"} (a line of its output matches this '
        "regular expression). Without: ready once it runs.",
    )
    ready_timeout_seconds: float | None = Field(
        default=None,
        ge=0.001,
        le=86_400,
        description="With readiness: kill it if it is not ready by then (default 60).",
    )


class _InSession(Arguments):
    session_id: SessionId = Field(
        default="default", description="Whose workspace: the session of the bash and code tools."
    )


_PATH = "A path relative to the session's workspace (the default cwd of bash and code), e.g. `src/app.py`."


class _OneFile(_InSession):
    path: str = Field(min_length=1, max_length=4096, description=_PATH)


class ReadFileArguments(_OneFile):
    offset: int = Field(default=0, ge=0, description="Start at this byte (default 0).")
    max_bytes: int = Field(
        default=DEFAULT_READ_BYTES, ge=1, le=MAX_READ_BYTES, description="The most bytes to return."
    )


class WriteFileArguments(_OneFile):
    content: str = Field(description="What the file will hold: text, or base64 with encoding base64.")
    encoding: Literal["utf-8", "base64"] = Field(
        default="utf-8", description="`utf-8` (text, the default) or `base64` (binary)."
    )


class ListFilesArguments(_InSession):
    path: str = Field(default="", max_length=4096, description=_PATH + " Default: the workspace itself.")
    depth: int = Field(default=1, ge=0, le=16, description="Levels to go down (default 1).")


class CodeArguments(_Starting):
    language: str = Field(min_length=1, description="`python`, `bash`, `sh`, or `node` where installed.")
    code: str = Field(description="The program's source.")
    stateful: bool = Field(
        default=False,
        description="Run it in the session's interpreter of this language (python or node), made on "
        "first use: variables, imports and loaded data persist between calls, as cells of a "
        "notebook; the value of a final expression comes back as `result`. Not with cwd or "
        "openStdin (the interpreter works in the session's workspace).",
    )


class ExecutionArguments(Arguments):
    action: Literal["get", "wait", "cancel", "logs"] = Field(
        description="`get`: its status and output now. `wait`: wait up to waitSeconds for the end. "
        "`cancel`: kill its whole process tree. `logs`: its output, page by page."
    )
    execution_id: ExecutionId = Field(description="The id a bash or code call answered (`ex_...`).")
    wait_seconds: float = Field(
        default=DEFAULT_WAIT_S, ge=0, le=MAX_WAIT_S, description="`wait`: how long at most (default 30)."
    )
    reason: str | None = Field(
        default=None, max_length=1000, description="`cancel`: why, kept in its record."
    )
    stream: Literal["stdout", "stderr", "both"] = Field(
        default="both", description="`logs`: which stream (both: as written, interleaved)."
    )
    after_sequence: int = Field(
        default=0,
        ge=0,
        le=2**53,
        description="`logs`: continue after this event sequence (the nextSequence of the previous page).",
    )
    skip_bytes: int = Field(
        default=0,
        ge=0,
        description="`logs`: bytes of the event after afterSequence already read (the nextSkipBytes "
        "of the previous page, which ended inside that event).",
    )
    offset: int | None = Field(
        default=None,
        ge=0,
        description="`logs`: a byte offset into one stream (stdout or stderr) instead of a sequence; "
        "reaches output past the event budget too. Continue with nextOffset.",
    )
    max_bytes: int = Field(
        default=DEFAULT_LOG_BYTES,
        ge=1,
        le=MAX_LOG_BYTES,
        description="`logs`: the most bytes of text per page (a page never splits a character).",
    )


class InputArguments(Arguments):
    execution_id: ExecutionId = Field(description="The id of a running execution started with openStdin.")
    text: str = Field(default="", max_length=1_048_576, description="What to type, newlines included.")
    eof: bool = Field(default=False, description="Then close its stdin (end of input).")
    wait_seconds: float = Field(
        default=1.0,
        ge=0,
        le=MAX_WAIT_S,
        description="How long to wait for it to end before answering with its output so far (default 1).",
    )


class ListArguments(Arguments):
    status: StatusName | None = Field(default=None, description="Only executions in this status.")
    limit: int = Field(default=20, ge=1, le=200, description="At most this many, newest first.")


class ExitsArguments(Arguments):
    wait_seconds: float = Field(
        default=0, ge=0, le=MAX_WAIT_S, description="Wait up to this long for one (default: do not wait)."
    )
    limit: int = Field(default=20, ge=1, le=100, description="At most this many.")


#: Each tool: (arguments, description).
TOOLS: dict[str, tuple[type[Arguments], str]] = {
    "bash": (
        BashArguments,
        "Run a bash command and get its exit code and output. The answer holds the head and tail "
        "of stdout and stderr as a terminal would show them (long output is elided in the middle; "
        "use the execution tool's logs for all of it). If it is still running when waitSeconds "
        "pass, it goes on in the background: the answer says `running` with its executionId and "
        "the output so far. Do not start it again then; use the execution tool to wait for it, "
        "read its logs or cancel it, or collect its outcome later with the exits tool. Each "
        "sessionId has a workspace directory, the default cwd, kept between calls.",
    ),
    "code": (
        CodeArguments,
        "Run a program in a language (python, bash, sh, node where installed) and get its exit "
        "code and output, exactly as the bash tool does for a command line. With stateful, run it "
        "in the session's persistent interpreter instead, like a notebook cell.",
    ),
    "execution": (
        ExecutionArguments,
        "Follow a run started by bash or code, by its executionId: `get` its status and output, "
        "`wait` for its end, `cancel` it (its whole process tree), or read its `logs` page by "
        "page (afterSequence, or a byte offset into one stream).",
    ),
    "input": (
        InputArguments,
        "Type text into a running execution started with openStdin (a REPL, a prompt waiting for "
        "an answer), optionally ending its input, then get its status and output so far, as the "
        "execution tool's get does. Each input is kept in its journal.",
    ),
    "list": (
        ListArguments,
        "List recent runs, newest first, with their status and exit code; filter by status (e.g. `running`).",
    ),
    "exits": (
        ExitsArguments,
        "Outcomes of detached runs (runs whose outcome was handed over to be collected later): "
        "each is returned once and then acknowledged, so it will not be returned again.",
    ),
    "read_file": (
        ReadFileArguments,
        "Read a file of a session's workspace, without quoting through a shell: its text (or "
        "base64 when it is not UTF-8), from a byte offset, at most maxBytes at once.",
    ),
    "write_file": (
        WriteFileArguments,
        "Write a whole file of a session's workspace (atomically, parent directories made), "
        "text or base64: no heredoc or shell quoting needed. Answers its size and version.",
    ),
    "list_files": (
        ListFilesArguments,
        "List a directory of a session's workspace (default: the workspace itself): each entry's "
        "path, type (file, directory, symlink) and size, depth levels down.",
    ),
}


def input_schema(model: type[Arguments]) -> dict[str, Any]:
    """The tool's `inputSchema`: the model's JSON schema without pydantic's generated titles."""
    schema = model.model_json_schema()
    schema.pop("title", None)
    for prop in schema.get("properties", {}).values():
        prop.pop("title", None)
    schema["additionalProperties"] = False
    return schema
