"""Image files (loading and checking them), choosing an image, language and cwd, and the sandbox's
command line: unit tests, no daemon and no process started."""

from __future__ import annotations

import dataclasses
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

import pytest

import sandbox
from workbench.core import launch
from workbench.core.images import Image, default_images_dir, load_image, load_images
from workbench.core.layout import Layout
from workbench.core.store import ExecutionRow
from workbench.wire.errors import (
    ConfigError,
    ImageUnavailable,
    InvalidRequest,
    UnknownImage,
    UnsupportedLanguage,
)
from workbench.wire.status import ExecutionStatus

GOOD = """
description = "test image"
shell = ["bash", "-c"]
[languages.python]
command = ["python3", "{file}"]
extension = ".py"
[env]
LANG = "C.UTF-8"
[limits]
max_processes = 10
memory = "64MiB"
max_file_size = 1024
[isolation]
filesystem = "host"
network = true
"""


def write(directory: Path, name: str, text: str) -> Path:
    path = directory / f"{name}.toml"
    path.write_text(text)
    return path


def executable(path: Path) -> Path:
    path.write_text("#!/bin/sh\n")
    path.chmod(0o755)
    return path


# -- loading ---------------------------------------------------------------------------------


def test_the_shipped_images_load() -> None:
    images = load_images(default_images_dir(), bwrap=None)
    host, box = images["host"], images["sandbox"]
    assert host.available and not host.sandboxed and host.network
    assert {"bash", "sh", "python"} <= set(host.available_languages)
    assert box.sandboxed and not box.network and box.bubblewrap is None
    assert not box.available and "bubblewrap" in (box.unavailable_reason or "")
    assert box.env["HOME"] == "/tmp"
    assert host.limits.memory_bytes == 4 * 1024**3 and host.limits.cpu_seconds is None


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap is not installed")
def test_a_sandbox_that_worked_is_not_tried_again_in_the_same_process(tmp_path: Path) -> None:
    """The trial run of a sandbox (about 20 ms) is made once per process and set of programs;
    one that failed is tried again at the next load."""
    trials = tmp_path / "trials"
    counting = tmp_path / "counting-bwrap"
    counting.write_text(f'#!/bin/sh\necho >> {trials}\nexec {shutil.which("bwrap")} "$@"\n')
    failing = tmp_path / "failing-bwrap"
    failing.write_text(f"#!/bin/sh\necho >> {trials}\nexit 1\n")
    for program in (counting, failing):
        program.chmod(0o755)
    box = write(tmp_path, "box", GOOD.replace('filesystem = "host"', 'filesystem = "sandbox"'))
    assert all(load_image(box, bwrap=str(counting)).available for _ in range(3))
    assert trials.read_text().count("\n") == 1
    assert not any(load_image(box, bwrap=str(failing)).available for _ in range(2))
    assert trials.read_text().count("\n") == 3


def test_programs_are_real_absolute_paths(tmp_path: Path) -> None:
    """Interpreters are resolved once, through symlinks, so that no execution pays for a lookup."""
    image = load_image(write(tmp_path, "host", GOOD), bwrap=None)
    python = image.languages["python"]
    assert python.program is not None and os.path.isabs(python.program)
    assert os.path.realpath(python.program) == python.program
    assert python.argv == (python.program, "{file}")
    assert image.shell[0] == os.path.realpath(image.shell[0]) and image.shell[1:] == ("-c",)
    assert image.limits.memory_bytes == 64 * 1024**2 and image.limits.max_file_size_bytes == 1024


def test_a_multi_call_program_keeps_the_name_it_is_called_by(tmp_path: Path) -> None:
    busybox = executable(tmp_path / "busybox")
    (tmp_path / "ash").symlink_to(busybox)
    image = load_image(write(tmp_path, "host", f'shell = ["{tmp_path}/ash", "-c"]\n'), bwrap=None)
    assert image.shell == (str(tmp_path / "ash"), "-c")


def test_the_image_path_finds_its_programs_and_missing_ones_are_left_out(tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    interp = executable(bin_dir / "my-interp")
    text = (
        f'shell = ["sh", "-c"]\n[env]\nPATH = "{bin_dir}:/usr/bin:/bin"\n'
        '[languages.mine]\ncommand = ["my-interp", "-q", "{file}"]\n'
        '[languages.ghost]\ncommand = ["no-such-interpreter-here", "{file}"]\n'
    )
    image = load_image(write(tmp_path, "host", text), bwrap=None)
    assert image.languages["mine"].argv == (str(interp), "-q", "{file}")
    assert image.languages["ghost"].program is None
    assert image.available_languages == ["mine"]


def test_a_sandbox_leaves_out_programs_it_cannot_see() -> None:
    """/tmp is private inside the sandbox: an interpreter installed there is not offered."""
    with tempfile.TemporaryDirectory(dir="/tmp") as scratch:
        interp = executable(Path(scratch) / "interp")
        text = f'[languages.x]\ncommand = ["{interp}", "{{file}}"]\n[isolation]\nfilesystem = "%s"\n'
        host = load_image(write(Path(scratch), "host", text % "host"), bwrap=None)
        box = load_image(write(Path(scratch), "box", text % "sandbox"), bwrap=None)
    assert host.available_languages == ["x"]
    assert box.available_languages == []


BAD_FILES = [
    ('colour = "blue"\n', "unknown field 'colour'"),
    ("description = 3\n", "field 'description' must be a string"),
    ("shell = []\n", "field 'shell' must be a non-empty list"),
    ('shell = "bash -c"\n', "field 'shell' must be a non-empty list"),
    ('shell = ["no-such-shell-anywhere", "-c"]\n', "field 'shell': program 'no-such-shell-anywhere'"),
    ('languages = "python"\n', "field 'languages' must be a table"),
    ("[languages]\npython = 3\n", "field 'languages.python' must be a table"),
    ('[languages.python]\nextension = ".py"\n', "field 'languages.python'.command must be a non-empty"),
    ('[languages.python]\ncommand = ["python3"]\n', "field 'languages.python'.command must name the code"),
    ('[languages.python]\ncommand = ["{file}"]\n', "field 'languages.python'.command must name the code"),
    ('[languages.python]\ncommand = ["python3", "{file}"]\nflags = 1\n', "unknown field 'flags'"),
    ('[languages.python]\ncommand = ["python3", "{file}"]\nextension = "py"\n', ".extension must look"),
    ('[languages."Py Thon"]\ncommand = ["python3", "{file}"]\n', "a language name is"),
    ("[env]\n1BAD = 'x'\n", "field 'env.1BAD'"),
    ("[env]\nNUMBER = 1\n", "field 'env.NUMBER' must be a string"),
    ("[limits]\nmemory = '4 gigabytes'\n", "field 'limits.memory' must be a size"),
    ("[limits]\nmax_processes = -1\n", "field 'limits.max_processes' must be a whole number"),
    ("[limits]\nmax_processes = true\n", "field 'limits.max_processes' must be a whole number"),
    ("[limits]\ncpu_seconds = 1.5\n", "field 'limits.cpu_seconds' must be a whole number"),
    ("[limits]\nthreads = 3\n", "unknown field 'limits.threads'"),
    ("limits = 3\n", "field 'limits' must be a table"),
    ("[isolation]\nfilesystem = 'vm'\n", "field 'isolation.filesystem' must be"),
    ("[isolation]\nnetwork = 'yes'\n", "field 'isolation.network' must be true or false"),
    ("[isolation]\nnetwork = false\n", "'isolation.network = false' needs"),
    ("[isolation]\nseccomp = true\n", "unknown field 'isolation.seccomp'"),
    ("shell = [\n", "cannot be read"),
]


@pytest.mark.parametrize(("text", "message"), BAD_FILES, ids=[m for _, m in BAD_FILES])
def test_a_bad_image_file_is_refused_naming_the_file_and_field(
    tmp_path: Path, text: str, message: str
) -> None:
    path = write(tmp_path, "bad", text)
    with pytest.raises(ConfigError) as caught:
        load_image(path, bwrap=None)
    assert str(path) in str(caught.value)
    assert message in str(caught.value)


def test_a_bad_file_name_is_refused(tmp_path: Path) -> None:
    path = write(tmp_path, "two words", GOOD)
    with pytest.raises(ConfigError, match="file name"):
        load_image(path, bwrap=None)


def test_the_images_directory_must_exist_and_hold_host(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="does not exist"):
        load_images(tmp_path / "missing", bwrap=None)
    write(tmp_path, "other", GOOD)
    with pytest.raises(ConfigError, match=r"no host\.toml"):
        load_images(tmp_path, bwrap=None)
    write(tmp_path, "host", GOOD)
    write(tmp_path, "broken", "[limits]\nmemory = 'x'\n")
    with pytest.raises(ConfigError, match=r"broken\.toml.*limits\.memory"):
        load_images(tmp_path, bwrap=None)


# -- choosing an image, a language and a cwd ------------------------------------------------


@pytest.fixture
def images() -> dict[str, Image]:
    return load_images(default_images_dir(), bwrap=None)


def test_unknown_and_unavailable_images_say_why(images: dict[str, Image]) -> None:
    with pytest.raises(UnknownImage, match="host, sandbox"):
        launch.resolve_image(images, "ubuntu")
    with pytest.raises(ImageUnavailable, match="bubblewrap"):
        launch.resolve_image(images, "sandbox")
    assert launch.resolve_image(images, "host").name == "host"


def test_an_unsupported_language_lists_the_image_languages(images: dict[str, Image]) -> None:
    with pytest.raises(UnsupportedLanguage) as caught:
        launch.resolve_language(images["host"], "cobol")
    assert "cobol" in str(caught.value) and "python" in str(caught.value)
    assert caught.value.details == {"languages": images["host"].available_languages}
    launch.resolve_language(images["host"], "python")


def test_cwd_on_the_host_image(images: dict[str, Image], tmp_path: Path) -> None:
    host = images["host"]
    workspace = tmp_path / "workspaces" / "s"
    assert launch.resolve_cwd(host, workspace, str(tmp_path / ".")) == str(tmp_path)
    assert not workspace.exists(), "an explicit cwd makes no workspace"
    assert launch.resolve_cwd(host, workspace, None) == str(workspace)
    assert not workspace.exists(), "the workspace is made when the execution starts"
    with pytest.raises(InvalidRequest, match="does not exist"):
        launch.resolve_cwd(host, workspace, str(tmp_path / "missing"))
    with pytest.raises(InvalidRequest, match="not a directory"):
        launch.resolve_cwd(host, workspace, str(write(tmp_path, "file", "")))


def test_cwd_on_a_sandboxed_image_must_be_inside_the_workspace(
    images: dict[str, Image], tmp_path: Path
) -> None:
    box = images["sandbox"]
    workspace = tmp_path / "workspaces" / "s"
    with pytest.raises(InvalidRequest, match="outside the session's workspace"):
        launch.resolve_cwd(box, workspace, str(tmp_path))
    assert not workspace.exists()
    assert launch.resolve_cwd(box, workspace, None) == os.path.realpath(workspace)
    (workspace / "sub").mkdir(parents=True)
    (workspace / "up").symlink_to(tmp_path)
    (workspace / "alias").symlink_to(workspace / "sub")
    assert launch.resolve_cwd(box, workspace, str(workspace / "sub")) == os.path.realpath(workspace / "sub")
    assert launch.resolve_cwd(box, workspace, str(workspace / "alias")) == os.path.realpath(workspace / "sub")
    for outside in (
        workspace / "up",
        workspace / "up" / "workspaces",
        workspace / ".." / "t",
        workspace.parent,
    ):
        with pytest.raises(InvalidRequest) as caught:
            launch.resolve_cwd(box, workspace, str(outside))
        assert caught.value.details[0]["field"] == "cwd"
    with pytest.raises(InvalidRequest, match="does not exist"):
        launch.resolve_cwd(box, workspace, str(workspace / "missing"))


# -- the sandbox's command line ----------------------------------------------------------------

TOOLS = sandbox.Bubblewrap(bwrap="/usr/bin/bwrap", sh="/bin/sh")


def bwrap_args(argv: tuple[str, ...]) -> list[str]:
    """The arguments given to bwrap (after the leader sh and its script)."""
    assert argv[:2] == ("/bin/sh", "-c") and argv[3] == "/usr/bin/bwrap"
    return list(argv[4:])


def test_the_command_line_isolates_as_documented(tmp_path: Path) -> None:
    data = tmp_path / "data"
    (data / "workspaces" / "s").mkdir(parents=True)
    layout = sandbox.SandboxLayout(
        cwd=str(data / "workspaces" / "s"),
        writable=(str(data / "workspaces" / "s"), str(data / "progress")),
        readable=(str(data / "code.py"),),
        hidden=(str(data),),
    )
    args = bwrap_args(sandbox.sandboxed_argv(TOOLS, layout, ["python3", "code.py"]))
    sep = args.index("--")
    assert args[sep + 1 :] == ["python3", "code.py"]
    options = args[:sep]
    for flag in ("--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts", "--die-with-parent"):
        assert flag in options
    assert "--new-session" in options and options[options.index("--cap-drop") + 1] == "ALL"
    assert options[:7] == ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
    assert options[7:10] == ["--ro-bind", "/proc/sys", "/proc/sys"]
    assert options[10:12] == ["--tmpfs", "/tmp"]
    pairs = [(options[i], options[i + 1]) for i in range(len(options) - 1)]
    # The data dir is hidden before the workspace and the files are bound back in.
    hidden = pairs.index(("--tmpfs", str(data)))
    assert pairs.index(("--bind", str(data / "workspaces" / "s"))) > hidden
    assert pairs.index(("--ro-bind", str(data / "code.py"))) > hidden
    assert pairs.index(("--bind", str(data / "progress"))) > hidden
    assert ("--chdir", str(data / "workspaces" / "s")) in pairs
    shared = sandbox.sandboxed_argv(TOOLS, sandbox.SandboxLayout(cwd="/", network=True), ["true"])
    assert "--unshare-net" not in shared


def test_as_a_user_setpriv_drops_to_it_and_the_way_to_what_is_bound_is_passable(tmp_path: Path) -> None:
    data = tmp_path / "data"
    work = data / "workspaces" / "p" / "s"
    layout = sandbox.SandboxLayout(
        cwd=str(work), writable=(str(work), str(data / "ex" / "progress")), hidden=(str(data),)
    )
    tools = sandbox.Bubblewrap(bwrap="/usr/bin/bwrap", sh="/bin/sh", setpriv="/usr/bin/setpriv")
    args = bwrap_args(sandbox.sandboxed_argv(tools, layout, ["id"], (65534, 65533)))
    sep = args.index("--")
    assert args[sep + 1 :] == [
        *("/usr/bin/setpriv", "--reuid=65534", "--regid=65533", "--clear-groups"),
        *("--inh-caps=-all", "--bounding-set=-all", "--", "id"),
    ]
    options = args[:sep]
    assert "--cap-drop" not in options  # setpriv needs them to drop to the user, then has none
    assert options[options.index("/tmp") - 3 : options.index("/tmp")] == ["--perms", "1777", "--tmpfs"]
    pairs = [(options[i], options[i + 1]) for i in range(len(options) - 1)]
    # The directories leading to the binds inside the hidden data dir: made passable (0755), in order.
    made = [
        options[i + 3] for i in range(len(options) - 3) if options[i : i + 3] == ["--perms", "0755", "--dir"]
    ]
    assert made == [str(data / "ex"), str(data / "workspaces"), str(data / "workspaces" / "p")]
    assert pairs.index(("--dir", str(data / "ex"))) < pairs.index(("--bind", str(work)))
    with pytest.raises(ValueError, match="setpriv"):
        sandbox.sandboxed_argv(TOOLS, layout, ["id"], (65534, 65534))


def test_binds_go_directories_first_and_the_ways_to_them_are_made_in_that_order(tmp_path: Path) -> None:
    """A pre-started sandbox binds its workspace first and is given the execution's files later:
    a cold one binds (and makes the directories to) them in the same order."""
    data = tmp_path / "data"
    work = data / "workspaces" / "p" / "s"
    work.mkdir(parents=True)
    (data / "executions" / "x").mkdir(parents=True)
    code, progress = (str(data / "executions" / "x" / n) for n in ("code.py", "progress"))
    for path in (code, progress):
        Path(path).write_text("")
    layout = sandbox.SandboxLayout(
        cwd=str(work), writable=(progress, str(work)), readable=(code,), hidden=(str(data),)
    )
    assert sandbox.bind_order(layout) == [str(work), code, progress]
    tools = sandbox.Bubblewrap(bwrap="/usr/bin/bwrap", sh="/bin/sh", setpriv="/usr/bin/setpriv")
    options = bwrap_args(sandbox.sandboxed_argv(tools, layout, ["id"], (65534, 65534)))
    made = [
        options[i + 3] for i in range(len(options) - 3) if options[i : i + 3] == ["--perms", "0755", "--dir"]
    ]
    assert made == [
        str(data / "workspaces"),
        str(data / "workspaces" / "p"),
        str(data / "executions"),
        str(data / "executions" / "x"),
    ]
    binds = [
        (options[i], options[i + 1]) for i in range(len(options) - 1) if options[i] in ("--bind", "--ro-bind")
    ]
    assert binds[-3:] == [("--bind", str(work)), ("--ro-bind", code), ("--bind", progress)]


def test_a_hidden_file_is_covered_by_an_empty_one(tmp_path: Path) -> None:
    secret = write(tmp_path, "tokens", "[[tokens]]\n")
    args = bwrap_args(
        sandbox.sandboxed_argv(TOOLS, sandbox.SandboxLayout(cwd="/", hidden=(str(secret),)), ["x"])
    )
    assert ["--ro-bind", os.devnull, str(secret)] == args[
        args.index(str(secret)) - 2 : args.index(str(secret)) + 1
    ]


@pytest.mark.parametrize(
    "fields",
    [
        {"cwd": "relative"},
        {"cwd": "/", "writable": ("/",)},
        {"cwd": "/", "hidden": ("/",)},
        {"cwd": "/", "writable": ("/a/../b",)},
        {"cwd": "/", "readable": ("x",)},
    ],
)
def test_a_bad_layout_is_refused(fields: dict[str, Any]) -> None:
    with pytest.raises(ValueError):
        sandbox.SandboxLayout(**fields)


def test_the_spawn_spec_of_a_sandboxed_code_execution(images: dict[str, Image], tmp_path: Path) -> None:
    box = images["sandbox"]
    box = Image(**{**box.__dict__, "unavailable_reason": None, "bubblewrap": TOOLS})
    data = tmp_path / "data"
    directory = data / "executions" / "ex_1"
    workspace = data / "workspaces" / "admin" / "s"
    workspace.mkdir(parents=True)
    row = ExecutionRow(
        id="ex_1",
        kind="workbench_code",
        principal="admin",
        session_id="s",
        status=ExecutionStatus.QUEUED,
        language="python",
        code="print(1)",
        cwd=os.path.realpath(workspace),
        image="sandbox",
        env_json='{"EXTRA": "1"}',
        created_at=0,
        deadline_at=1,
        timeout_ms=1,
        budget_bytes=1,
    )
    layout = Layout(data)
    launch.prepare_directory(row, box, layout)
    assert (directory / "progress").exists() and (directory / "code.py").read_text() == "print(1)"
    spec = launch.spawn_spec(row, box, layout, sandbox.Containment.AUTO, hide=[tmp_path / "tokens"])
    real = os.path.realpath(directory)
    args = bwrap_args(spec.argv)
    assert args[args.index("--") + 1 :] == [box.languages["python"].program, f"{real}/code.py"]
    assert spec.env["WORKBENCH_PROGRESS"] == f"{real}/progress" and spec.env["HOME"] == "/tmp"
    assert spec.env["EXTRA"] == "1" and spec.cwd == row.cwd
    seen = launch.sandbox_layout(row, box, layout)
    assert seen.writable == (os.path.realpath(workspace), f"{real}/progress")
    assert seen.readable == (f"{real}/code.py",)
    assert seen.hidden == (os.path.realpath(data),)
    moved = dataclasses.replace(row, cwd=str(tmp_path))
    with pytest.raises(sandbox.SpawnError, match="no longer inside the workspace"):
        launch.spawn_spec(moved, box, layout, sandbox.Containment.AUTO)


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap is not installed")
def test_the_sandbox_leader_is_called_sh_and_sets_the_images_rlimits_first() -> None:
    """The leader shell keeps the name `sh`: where sh is bash, bash called `bash` would source a
    request's BASH_ENV, as root, before bubblewrap starts. Its first program is prlimit, with the
    image's limits, so that bubblewrap and all inside start under them."""
    image = load_image(default_images_dir() / "sandbox.toml", bwrap=shutil.which("bwrap"))
    if image.bubblewrap is None:
        pytest.skip(f"the sandbox is unavailable here: {image.unavailable_reason}")
    tools = image.bubblewrap
    assert os.path.basename(tools.sh) == "sh"
    limits = sandbox.Limits(max_processes=1024, max_open_files=4096, max_file_size_bytes=512, cpu_seconds=7)
    argv = sandbox.sandboxed_argv(tools, sandbox.SandboxLayout(cwd="/"), ["true"], None, limits)
    assert argv[:4] == (tools.sh, "-c", argv[2], tools.prlimit)
    assert argv[4:10] == (
        "--nofile=4096:4096",
        "--fsize=512:512",
        "--nproc=1024:1024",
        "--cpu=7:8",
        "--",
        tools.bwrap,
    )
