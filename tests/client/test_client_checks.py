"""What the client checks and how it fails: ids before they go into a URL, answers that are not
what it expects, a closed client, errors that pickle, streams closed when read; and the types a
user's type checker sees."""

from __future__ import annotations

import builtins
import gc
import pickle
import typing
import warnings
from contextlib import aclosing
from pathlib import Path
from typing import assert_type

import httpx
import pytest
import trio

from tests import ceilings
from tests.client.transports import DropAnswers
from tests.conftest import TOKEN, DaemonHandle
from workbench import (
    AsyncClient,
    Client,
    Execution,
    ExecutionStatus,
    InvalidRequest,
    NotFound,
    StatusName,
    WorkbenchError,
)
from workbench.client.calls import error_from
from workbench.wire.files import FileEntry, FileEvent, FileList

MISSING = "ex_01JD0000000000000000000000"


async def test_an_id_that_is_none_is_refused_before_anything_is_sent(wb: DaemonHandle) -> None:
    """`""` would be the bulk delete's route, `../stats` another route, `ex#x` the id `ex`."""
    recorder = DropAnswers(lambda request: False)
    async with AsyncClient(wb.url, TOKEN, transport=recorder) as client:
        with trio.fail_after(30):
            for bad in ("", "../stats", "ex#x", "ex_x?y", MISSING.lower()):
                with pytest.raises(InvalidRequest, match="is not an execution id"):
                    await client.get(bad)
                with pytest.raises(InvalidRequest, match="is not an execution id"):
                    await client.delete(bad)
                with pytest.raises(InvalidRequest, match="is not an execution id"):
                    await client.cancel(bad)
            with pytest.raises(InvalidRequest, match="is not a delivery id"):
                await client.ack_exit("dl_/../x")
            assert recorder.sent == []
            run = await client.run_bash("echo hi")
            for name in ("../x", "..", "a/b", "x#y"):
                with pytest.raises(NotFound, match="artifact"):
                    await client.artifact(run, name)
    assert recorder.sent[-1] == f"GET /v1/executions/{run.execution_id}/artifacts/x%23y"


def test_an_answer_that_is_not_the_expected_model_is_a_workbench_error() -> None:
    """As a proxy in the way may answer: a page of its own, a stream of something else."""

    def answer(request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith("/stream"):
            return httpx.Response(200, content=b"id: 1\ndata: {}\n\n")
        if request.url.path.endswith(":watch"):
            return httpx.Response(200, content=b"data: [5]\n\n")
        return httpx.Response(200, json={"executionId": 5})

    with Client("http://daemon.test", TOKEN, transport=httpx.MockTransport(answer)) as client:
        with pytest.raises(WorkbenchError, match=r"answer to GET /v1/executions/ex_\w+ \(HTTP 200\) is not"):
            client.get(MISSING)
        with pytest.raises(WorkbenchError, match="an event of the stream is not what this client expects"):
            list(client.events(MISSING))
        with pytest.raises(WorkbenchError, match="a change of the watch is not what this client expects"):
            list(client.files().watch())


async def test_a_closed_client_says_so(wb: DaemonHandle) -> None:
    client = AsyncClient(wb.url, TOKEN)
    await client.aclose()
    with pytest.raises(WorkbenchError, match="this AsyncClient is closed"):
        await client.get(MISSING)
    with pytest.raises(WorkbenchError, match="this AsyncClient is closed"):
        async for _ in client.events(MISSING):
            pass

    def blocking() -> None:
        with Client(wb.url, TOKEN) as closed:
            pass
        with pytest.raises(WorkbenchError, match="this Client is closed"):
            closed.get(MISSING)
        with pytest.raises(WorkbenchError, match="this Client is closed"):
            closed.files().read("x")

    with ceilings.within(30, "a closed client's calls"):
        await trio.to_thread.run_sync(blocking)


async def test_errors_pickle_with_their_code_message_and_details(wb: DaemonHandle) -> None:
    async with AsyncClient(wb.url, TOKEN) as client:
        with trio.fail_after(30), pytest.raises(InvalidRequest) as refused:
            await client.run_bash("true", cwd="relative")
    newer = error_from(
        httpx.Response(418, json={"error": {"code": "teapot", "message": "m", "details": [1]}})
    )
    for error in (refused.value, newer):
        again = pickle.loads(pickle.dumps(error))
        assert type(again) is type(error) and isinstance(again, WorkbenchError)
        assert (again.code, again.message, again.details) == (error.code, error.message, error.details)
    assert (newer.code, newer.details) == ("teapot", [1]) and refused.value.details


async def test_streams_read_to_their_end_leave_nothing_to_the_collector(wb: DaemonHandle) -> None:
    """On trio, an async generator left unfinished warns when collected (ResourceWarning): httpx's
    readers of a stream, too, whether it was read to its end or left before."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        async with AsyncClient(wb.url, TOKEN) as client:
            with trio.fail_after(60):
                seen: list[str] = []
                run = await client.run_bash("echo a; sleep 0.2; echo b", on_stdout=seen.append)
                assert "".join(seen) == "a\nb\n"
                assert [e async for e in client.events(run)][-1].status == "completed"
                # Left before their end: by the caller, by a wait that passed.
                slow = await client.run_bash("echo a; sleep 30", background=True)
                async with aclosing(client.events(slow)) as events:
                    async for _ in events:
                        break
                cut = await client.run_bash("echo a; sleep 30", wait_timeout=0.5, on_stdout=seen.append)
                assert not cut.terminal
                await client.cancel(slow)
                await client.cancel(cut)
                files = client.files("quiet")
                await files.write("f.txt", "f")
                async for _ in files.watch(timeout=0.3):
                    pass
        gc.collect()
    leaked = [str(w.message) for w in caught if issubclass(w.category, ResourceWarning)]
    assert leaked == []


def test_the_status_names_are_every_status() -> None:
    assert set(typing.get_args(StatusName)) == {status.value for status in ExecutionStatus}


def typed(url: str, local: Path) -> None:
    """What a user's type checker sees (mypy --strict checks these `assert_type`s), run too."""
    with Client(url, TOKEN) as wb:
        files = wb.files("typed")
        assert_type(files.write("a.txt", "a"), FileEntry)
        assert_type(files.read("a.txt"), bytes)
        assert_type(files.list(), FileList)
        assert_type(files.delete("a.txt"), None)
        assert_type(files.download(to=local), bytes | None)
        for change in files.watch(timeout=0.2):
            assert_type(change, FileEvent)
        assert_type(wb.list(status="partial_failed"), builtins.list[Execution])
        assert_type(wb.prune(status=["partial_failed"]), int)


async def test_the_types_a_user_sees(wb: DaemonHandle, tmp_path: Path) -> None:
    with ceilings.within(60, "the typed calls"):
        await trio.to_thread.run_sync(typed, wb.url, tmp_path)
