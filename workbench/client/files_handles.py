"""`Files` and `AsyncFiles`: a session's workspace through `Client` and `AsyncClient`, each method
made from its one description in `workbench.client.files`."""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator, Callable, Coroutine, Iterator
from contextlib import aclosing
from typing import Any, Concatenate, ParamSpec, Protocol, TypeVar

from workbench.client import files
from workbench.client.base import Base
from workbench.client.files import FILE_METHODS, FilesBase
from workbench.client.plan import Plan, Stream, dress

__all__ = ["AsyncFiles", "Files"]

P = ParamSpec("P")
T = TypeVar("T")


class _Blocking(Protocol):
    def _run(self, plan: Plan[T]) -> T: ...
    def _iterate(self, plan: Stream[T]) -> Iterator[T]: ...


class _Awaiting(Protocol):
    async def _run(self, plan: Plan[T]) -> T: ...
    def _iterate(self, plan: Stream[T]) -> AsyncIterator[T]: ...


def _returning(plan: Callable[Concatenate[FilesBase, P], Plan[T]]) -> Callable[Concatenate[Files, P], T]:
    def method(self: Files, /, *args: P.args, **kwargs: P.kwargs) -> T:
        return self._blocking._run(plan(self, *args, **kwargs))

    return dress(method, plan)


def _iterating(
    plan: Callable[Concatenate[FilesBase, P], Stream[T]],
) -> Callable[Concatenate[Files, P], Iterator[T]]:
    def method(self: Files, /, *args: P.args, **kwargs: P.kwargs) -> Iterator[T]:
        yield from self._blocking._iterate(plan(self, *args, **kwargs))

    return dress(method, plan, Iterator)


def _awaiting(
    plan: Callable[Concatenate[FilesBase, P], Plan[T]],
) -> Callable[Concatenate[AsyncFiles, P], Coroutine[Any, Any, T]]:
    async def method(self: AsyncFiles, /, *args: P.args, **kwargs: P.kwargs) -> T:
        return await self._awaiting._run(plan(self, *args, **kwargs))

    return dress(method, plan)


def _async_iterating(
    plan: Callable[Concatenate[FilesBase, P], Stream[T]],
) -> Callable[Concatenate[AsyncFiles, P], AsyncGenerator[T, None]]:
    async def method(self: AsyncFiles, /, *args: P.args, **kwargs: P.kwargs) -> AsyncGenerator[T, None]:
        async with aclosing(self._awaiting._iterate(plan(self, *args, **kwargs))) as items:  # type: ignore[type-var]
            async for item in items:
                yield item

    return dress(method, plan, AsyncIterator)


class Files(FilesBase):
    """A session's workspace through a `Client`: `wb.files("my-session").read("src/app.py")`."""

    def __init__(self, client: Base, session_id: str) -> None:
        super().__init__(client, session_id)
        self._blocking: _Blocking = client  # type: ignore[assignment]

    read = _returning(files.read)
    write = _returning(files.write)
    list = _returning(files.list)
    delete = _returning(files.delete)
    move = _returning(files.move)
    upload = _returning(files.upload)
    download = _returning(files.download)
    watch = _iterating(files.watch)


class AsyncFiles(FilesBase):
    """A session's workspace through an `AsyncClient`: the same methods, awaited."""

    def __init__(self, client: Base, session_id: str) -> None:
        super().__init__(client, session_id)
        self._awaiting: _Awaiting = client  # type: ignore[assignment]

    read = _awaiting(files.read)
    write = _awaiting(files.write)
    list = _awaiting(files.list)
    delete = _awaiting(files.delete)
    move = _awaiting(files.move)
    upload = _awaiting(files.upload)
    download = _awaiting(files.download)
    watch = _async_iterating(files.watch)


for _handle in (Files, AsyncFiles):
    files.check(_handle, FILE_METHODS)
    for _name in FILE_METHODS:
        _handle.__dict__[_name].__qualname__ = f"{_handle.__qualname__}.{_name}"
