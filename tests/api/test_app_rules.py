"""The app's routes: their URL builders are compiled on first use, and still build right."""

from __future__ import annotations

from quart_trio import QuartTrio

from api.app import LazyRule


def test_a_rule_matches_and_builds_with_its_builder_compiled_late() -> None:
    app = QuartTrio("rules")
    app.url_rule_class = LazyRule

    @app.route("/v1/executions/<any(workbench_bash, workbench_code):kind>/<execution_id>")
    async def execution(kind: str, execution_id: str) -> str:
        return kind + execution_id

    adapter = app.url_map.bind("localhost")
    assert adapter.match("/v1/executions/workbench_code/ex_2") == (
        "execution",
        {"kind": "workbench_code", "execution_id": "ex_2"},
    )
    values = {"kind": "workbench_bash", "execution_id": "ex_1", "after": "3"}
    assert adapter.build("execution", values) == "/v1/executions/workbench_bash/ex_1?after=3"
    assert adapter.build("execution", values, append_unknown=False) == "/v1/executions/workbench_bash/ex_1"
    assert adapter.build("execution", {**values, "execution_id": "ex 9"}) == (
        "/v1/executions/workbench_bash/ex%209?after=3"
    )
