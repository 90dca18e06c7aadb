"""Execution ids as people type them: a unique prefix (with or without `ex_`, any case), or `@last`;
and as tables show them: the shortest prefix that tells the rows apart.

Ids are `ex_` and a ULID, whose first 10 characters are its creation time: ids made close
together share a long prefix. Resolving uses the listing, newest first, whose cursor is an id:
every id with prefix P lies below P followed by `Z`s (the last character of the alphabet), so
one page of two rows below that cursor says whether P names none, one or several.
"""

from __future__ import annotations

from workbench.cli.exitcodes import BadId
from workbench.cli.http import ApiError, Http

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable

#: Crockford's base 32, the alphabet of ULIDs (in sorting order).
ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
ULID_LENGTH = 26
LAST = "@last"
#: Shown ids keep at least this many characters of the ULID: its time and two more.
SHORT_MIN = 12


def normal(text: str) -> str:
    """The ULID part of an id or prefix, upper case; BadId when it cannot be one."""
    ulid = text.upper().removeprefix("EX_")
    if not ulid or len(ulid) > ULID_LENGTH or any(c not in ALPHABET for c in ulid):
        raise BadId(
            f"{text!r} is not an execution id: expected ex_ and up to {ULID_LENGTH} of 0-9 and A-Z "
            "(without I, L, O, U), a unique prefix of one, or @last"
        )
    return ulid


def resolve(http: Http, text: str) -> str:
    """The full id `text` names. NotFound (ApiError) when it names none; BadId when it is not an id
    or names several (the message lists two)."""
    if text == LAST:
        page = http.json("GET", "/v1/executions", query={"limit": 1})
        if not page["executions"]:
            raise ApiError("not_found", "@last names nothing: there is no execution yet")
        return str(page["executions"][0]["executionId"])
    ulid = normal(text)
    if len(ulid) == ULID_LENGTH:
        return "ex_" + ulid
    prefix = "ex_" + ulid
    highest = prefix + "Z" * (ULID_LENGTH - len(ulid))
    page = http.json("GET", "/v1/executions", query={"limit": 2, "cursor": highest})
    matches = [r["executionId"] for r in page["executions"] if r["executionId"].startswith(prefix)]
    if len(matches) < 2:
        # The cursor itself is not below the cursor: the one id it could miss.
        try:
            matches.insert(0, http.json("GET", f"/v1/executions/{highest}")["executionId"])
        except ApiError as exc:
            if exc.code != "not_found":
                raise
    if not matches:
        raise ApiError("not_found", f"no execution {text}")
    if len(matches) > 1:
        raise BadId(
            f"{text} names more than one execution ({matches[0]}, {matches[1]}, ...): type more of it"
        )
    return str(matches[0])


def below_time(ms: int) -> str:
    """The lowest id of the millisecond `ms`: every id made before it is below it (a cursor)."""
    chars = []
    for _ in range(10):
        chars.append(ALPHABET[ms & 31])
        ms >>= 5
    return "ex_" + "".join(reversed(chars)) + "0" * 16


def shortest(ids: Iterable[str], minimum: int = SHORT_MIN) -> dict[str, str]:
    """Each id → its shortest prefix (at least `minimum` ULID characters) that no other id has."""
    ordered = sorted(set(ids))
    out = {}
    for i, full in enumerate(ordered):
        need = minimum
        for other in (ordered[i - 1] if i else None, ordered[i + 1] if i + 1 < len(ordered) else None):
            if other is not None:
                same = 0
                while same < len(full) and same < len(other) and full[same] == other[same]:
                    same += 1
                need = max(need, same + 1 - 3)  # counted in ULID characters, after `ex_`
        out[full] = full[: 3 + need]
    return out
