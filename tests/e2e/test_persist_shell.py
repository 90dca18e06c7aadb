"""persistShell: cwd and exported variables carry over between bash executions of one session and
principal, captured after the command even when it fails, not when it is killed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.conftest import DaemonHandle
from workbench.wire.fields import MAX_PERSIST_COMMAND_BYTES


async def test_cd_then_export_then_pwd_and_echo(wb: DaemonHandle) -> None:
    """Three executions: `cd sub`, `export A=1`, then `pwd; echo $A` prints both."""
    first = await wb.run("mkdir -p sub && cd sub", persistShell=True, sessionId="s1")
    assert first["status"] == "completed" and first["persistShell"] is True
    second = await wb.run("export A=1", persistShell=True, sessionId="s1")
    assert second["cwd"].endswith("/s1/sub"), second["cwd"]
    third = await wb.run("pwd; echo $A", persistShell=True, sessionId="s1")
    assert third["preview"]["stdout"] == f"{second['cwd']}\n1\n"
    # Not carried: another session, or an execution without persistShell.
    other = await wb.run("pwd; echo ${A:-unset}", persistShell=True, sessionId="s2")
    assert other["preview"]["stdout"].endswith("/s2\nunset\n")
    plain = await wb.run("echo ${A:-unset}", sessionId="s1")
    assert plain["preview"]["stdout"] == "unset\n"


async def test_a_removed_session_takes_its_shell_state_with_it(wb: DaemonHandle) -> None:
    """DELETE /v1/sessions/{id} removes everything of the session: the next persistShell start of
    the same name begins afresh, as a new terminal would (before, it kept the variables)."""
    await wb.run("export A=1 && mkdir -p sub && cd sub", persistShell=True, sessionId="s1")
    await wb.run("export B=2", persistShell=True, sessionId="s2")
    assert (await wb.client.delete("/v1/sessions/s1")).status_code == 204
    again = await wb.run("pwd; echo ${A:-unset}", persistShell=True, sessionId="s1")
    assert again["preview"]["stdout"].endswith("/s1\nunset\n"), again["preview"]
    other = await wb.run("echo $B", persistShell=True, sessionId="s2")  # another session's is kept
    assert other["preview"]["stdout"] == "2\n", other["preview"]


async def test_a_session_whose_workspace_its_shell_removed_can_still_be_removed(wb: DaemonHandle) -> None:
    """Only its shell state is left: a delete of the session (or of every session) removes that."""
    for session, delete in (("s1", "/v1/sessions/s1"), ("s2", "/v1/sessions")):
        gone = 'export A=1; cd /; rm -rf "$OLDPWD"'
        assert (await wb.run(gone, persistShell=True, sessionId=session))["status"] == "completed"
        assert (await wb.client.delete(delete)).status_code == 204
        again = await wb.run("pwd; echo ${A:-unset}", persistShell=True, sessionId=session)
        assert again["preview"]["stdout"].endswith(f"/{session}\nunset\n"), again["preview"]
    assert (await wb.client.delete("/v1/sessions/s3")).status_code == 404  # nothing of it at all


async def test_state_is_kept_when_the_command_fails_not_when_killed(wb: DaemonHandle, tmp_path: Path) -> None:
    """A failing command still leaves its state; a cancelled one leaves none; unset variables go."""
    failed = await wb.run(f"cd {tmp_path}; export B=2 C=3; false", persistShell=True)
    assert (failed["status"], failed["exitCode"]) == ("failed", 1)
    killed = await wb.start("cd /; export B=killed; sleep 300", persistShell=True)
    await wb.client.post(f"/v1/executions/{killed['executionId']}/cancel", json={})
    assert (await wb.wait(killed["executionId"]))["status"] == "cancelled"
    exited = await wb.run("unset C; exit 3", persistShell=True)
    assert exited["exitCode"] == 3
    after = await wb.run('pwd; echo "$B ${C:-gone}"', persistShell=True, env={"D": "4"})
    assert after["preview"]["stdout"] == f"{tmp_path}\n2 gone\n"
    assert after["cwd"] == str(tmp_path)


async def test_secret_env_is_never_carried(wb: DaemonHandle) -> None:
    """Promise 9: a secretEnv value does not reach the kept state nor the next execution."""
    await wb.run("export OPEN=1", persistShell=True, secretEnv={"TOKEN_X": "s3cret"})
    after = await wb.run('echo "${OPEN}-${TOKEN_X:-none}"', persistShell=True)
    assert after["preview"]["stdout"] == "1-none\n"
    kept = list((wb.data_dir / "shells").rglob("*.state"))
    assert kept and all(b"s3cret" not in path.read_bytes() for path in kept)


async def test_persist_shell_is_for_bash_and_strict(wb: DaemonHandle) -> None:
    for body in (
        {"command": "true", "persistShell": 1},
        {"command": "true", "persistShell": "true"},
    ):
        response = await wb.client.post("/v1/executions/workbench_bash", json=body)
        assert response.status_code == 422, response.text
    code = await wb.client.post(
        "/v1/executions/workbench_code", json={"language": "bash", "code": "true", "persistShell": True}
    )
    assert code.status_code == 422


async def test_workbench_variables_are_never_kept(wb: DaemonHandle) -> None:
    """No variable named `WORKBENCH_...` is carried, whoever exported it; the daemon's own are
    set anew for each execution."""
    await wb.run(
        "export WORKBENCH_URL=http://elsewhere WORKBENCH_TOKEN=leak KEPT=1", persistShell=True, sessionId="wv"
    )
    after = await wb.run(
        'echo "${WORKBENCH_URL-unset} ${WORKBENCH_TOKEN-unset} $KEPT"; echo "$WORKBENCH_EXECUTION_ID"',
        persistShell=True,
        sessionId="wv",
    )
    assert after["preview"]["stdout"] == f"unset unset 1\n{after['executionId']}\n"


def notes(events: list[dict[str, Any]]) -> list[str]:
    """The messages of the status events that are notes (no status change of their own)."""
    return [
        e["message"]
        for e in events
        if e["eventType"] == "status" and e["status"] == "running" and e["message"]
    ]


async def test_a_variable_too_big_to_pass_on_is_left_out_alone(wb: DaemonHandle, tmp_path: Path) -> None:
    """One exported variable over 128 KiB (more than a program's start takes of one) is not kept,
    with a note saying so; the rest of the state is (it once wiped the whole environment)."""
    await wb.run(f"cd {tmp_path}; export A1=one", persistShell=True, sessionId="big")
    big = await wb.run(
        "printf -v BIG '%*s' 140000 ''; export BIG A2=two; cd /", persistShell=True, sessionId="big"
    )
    assert big["status"] == "completed", big
    said = notes(await wb.events(big["executionId"]))
    assert len(said) == 1 and "BIG" in said[0] and "128 KiB" in said[0], said
    after = await wb.run(
        'pwd; echo "$A1 $A2 ${BIG-unset} ${HOME:+home}"; echo "$PATH"', persistShell=True, sessionId="big"
    )
    path = (await wb.run('echo "$PATH"'))["preview"]["stdout"]
    assert after["preview"]["stdout"] == f"/\none two unset home\n{path}"


async def test_a_state_too_big_to_keep_leaves_the_one_before(wb: DaemonHandle, tmp_path: Path) -> None:
    """Exports of more than 1 MiB in all: the session keeps the state it had, and a note says why."""
    await wb.run(f"cd {tmp_path}; export A1=one", persistShell=True, sessionId="huge")
    huge = await wb.run(
        "for i in $(seq 10); do printf -v V$i '%*s' 110000 ''; export V$i; done; cd /",
        persistShell=True,
        sessionId="huge",
    )
    assert huge["status"] == "completed", huge
    said = notes(await wb.events(huge["executionId"]))
    assert len(said) == 1 and "not kept" in said[0] and "1 MiB" in said[0], said
    after = await wb.run('pwd; echo "$A1 ${V1-unset}"', persistShell=True, sessionId="huge")
    assert after["preview"]["stdout"] == f"{tmp_path}\none unset\n"


async def test_the_commands_own_exit_trap_runs_and_the_state_is_still_kept(
    wb: DaemonHandle, tmp_path: Path
) -> None:
    """A command may set (or reset) its own EXIT trap: it runs, after the state is written, with
    the exit status in `$?`; `trap -p` shows it as the command set it."""
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    first = await wb.run(
        f'tmp=$(mktemp); trap "rm -f $tmp; echo cleaned" EXIT; trap -p EXIT; cd {tmp_path}; export T1=one',
        persistShell=True,
        sessionId="trap",
    )
    assert first["preview"]["stdout"].endswith("' EXIT\ncleaned\n"), first["preview"]
    assert first["preview"]["stdout"].startswith("trap -- 'rm -f /")
    exited = await wb.run(
        "trap 'echo status=$?' EXIT; cd a; export T2=two; exit 3", persistShell=True, sessionId="trap"
    )
    assert (exited["exitCode"], exited["preview"]["stdout"]) == (3, "status=3\n")
    reset = await wb.run("trap - EXIT; cd ../b; export T3=three", persistShell=True, sessionId="trap")
    assert reset["status"] == "completed"
    after = await wb.run('pwd; echo "$T1 $T2 $T3"; trap -p EXIT', persistShell=True, sessionId="trap")
    assert after["preview"]["stdout"] == f"{tmp_path}/b\none two three\n"


async def test_the_state_is_kept_however_the_shell_exits(wb: DaemonHandle, tmp_path: Path) -> None:
    """`set -e` stopping the command, and an EXIT trap of its own that exits with another status."""
    failed = await wb.run(
        f"set -e; cd {tmp_path}; export E1=one; false; echo unseen", persistShell=True, sessionId="ex"
    )
    assert (failed["exitCode"], failed["preview"]["stdout"]) == (1, "")
    changed = await wb.run("trap 'exit 7' EXIT; export E2=two; cd /", persistShell=True, sessionId="ex")
    assert changed["exitCode"] == 7
    after = await wb.run('pwd; echo "$E1 $E2"', persistShell=True, sessionId="ex")
    assert after["preview"]["stdout"] == "/\none two\n"


async def test_overlapping_executions_of_a_session_the_last_to_finish_wins(
    wb: DaemonHandle, tmp_path: Path
) -> None:
    """Not queued: each starts from the state kept when it starts; the one that finishes last
    leaves the session's state, whatever the other left."""
    flag = tmp_path / "flag"
    await wb.run(f"cd {tmp_path}; export X=before", persistShell=True, sessionId="both")
    slow = await wb.start(
        f"cd /; export X=slow; until [ -e {flag} ]; do sleep 0.05; done", persistShell=True, sessionId="both"
    )
    quick = await wb.run('echo "$X"; cd /tmp; export X=quick', persistShell=True, sessionId="both")
    assert quick["preview"]["stdout"] == "before\n"  # not the running one's
    # The slow one ends only once the quick one's end (and the state it left) was committed.
    flag.touch()
    assert (await wb.wait(slow["executionId"]))["status"] == "completed"
    after = await wb.run('pwd; echo "$X"', persistShell=True, sessionId="both")
    assert after["preview"]["stdout"] == "/\nslow\n"


async def test_a_command_too_long_to_share_its_argument_with_the_state_keeping_is_refused(
    wb: DaemonHandle,
) -> None:
    """The state-keeping code runs in the command's own argument (`bash -c`): with it, a command
    longer than `MAX_PERSIST_COMMAND_BYTES` could only fail at its spawn, so it is a 422 up front;
    one of that length runs."""
    longest = "true " + "#" * (MAX_PERSIST_COMMAND_BYTES - 5)
    ran = await wb.run(longest, persistShell=True, sessionId="long")
    assert ran["status"] == "completed", ran
    response = await wb.client.post(
        "/v1/executions/workbench_bash",
        json={"command": longest + "#", "persistShell": True, "sessionId": "long"},
    )
    assert response.status_code == 422, response.text
    error = response.json()["error"]
    assert error["code"] == "invalid_request" and error["details"][0]["field"] == "command", error
    assert str(MAX_PERSIST_COMMAND_BYTES) in error["message"]
    alone = await wb.run(longest + "#" * 1000)  # without persistShell, the argument is its own
    assert alone["status"] == "completed", alone
