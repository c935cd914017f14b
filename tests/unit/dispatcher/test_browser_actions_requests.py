"""Browser actions as requests take them: the native list checked (one of a wait's two forms,
CSS selectors), the deployment's limits a 422 naming the first passed, Firecrawl's shapes as
firecrawl-py sends them translated to the native ones, the job rendered and its answers asked
for."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from scrapejobs_dispatcher.firecrawl.request_models import ScrapeBody
from scrapejobs_dispatcher.firecrawl.translation import job_options
from scrapejobs_dispatcher.settings import DispatcherSettings
from scrapejobs_shared.adapters.memory.job_store import MemoryJobStore
from scrapejobs_shared.domain.jobspec import JobRequest
from scrapejobs_shared.options.render.actions import ActionLimits
from support.memory_dispatcher import memory_client


def request(*actions: dict[str, Any]) -> JobRequest:
    body = {"url": "https://a.example/", "options": {"render": {"actions": list(actions)}}}
    return JobRequest.model_validate(body)


def test_actions_answer_the_actions_format_and_render() -> None:
    job = request({"type": "click", "selector": "#go"}, {"type": "scrape"})
    assert "actions" in job.options.formats and job.lane() == "render"


@pytest.mark.parametrize(
    ("action", "message"),
    [
        ({"type": "wait"}, "milliseconds or a selector"),
        ({"type": "wait", "milliseconds": 5, "selector": "a"}, "milliseconds or a selector"),
        ({"type": "click", "selector": "a["}, "invalid CSS"),
        ({"type": "press", "key": ""}, "at least 1 character"),
        ({"type": "pdf", "format": "B5"}, "Input should be"),
        ({"type": "teleport"}, "teleport"),
        ({"type": "screenshot", "viewport": {"width": 100, "height": 300}}, "greater than"),
    ],
)
def test_a_malformed_action_is_refused(action: dict[str, Any], message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        request(action)


def test_the_first_limit_passed_is_named() -> None:
    limits = ActionLimits(max_actions=3, max_wait_ms=1000, max_script_chars=10)

    def passed(*actions: dict[str, Any]) -> tuple[str, str] | None:
        render = request(*actions).options.render
        assert render is not None
        return limits.first_passed(render.actions)

    assert passed(*[{"type": "scrape"}] * 4) == ("", "at most 3 actions (SCRAPEJOBS_ACTIONS_MAX)")
    waits = passed(*[{"type": "wait", "milliseconds": 600}] * 2)
    assert waits is not None and waits[1].startswith("waits add up to at most 1000 ms")
    script = passed({"type": "scrape"}, {"type": "execute_javascript", "script": "return 1234567"})
    assert script is not None and script[0] == "[1].script"
    assert passed({"type": "scrape"}) is None


async def test_the_deployment_s_limits_are_a_422_naming_the_field() -> None:
    settings = DispatcherSettings(auth_mode="none", actions_max=2, files_bucket="")
    async with memory_client(MemoryJobStore(), settings) as client:
        body = {
            "url": "https://a.example/",
            "options": {"render": {"actions": [{"type": "scrape"}] * 3}},
        }
        refused = await client.post("/v1/jobs", json=body)
        assert refused.status_code == 422
        assert refused.json()["error"]["field"] == "options.render.actions"
        shot = {"type": "screenshot"}
        body["options"] = {"render": {"actions": [{"type": "scrape"}, shot]}}
        no_bucket = (await client.post("/v1/jobs", json=body)).json()["error"]
        assert no_bucket["field"] == "options.render.actions[1]"
        assert "SCRAPEJOBS_FILES_BUCKET" in no_bucket["message"]
        # on /v2 the same rules name Firecrawl's fields, a crawl's under scrapeOptions
        actions = [{"type": "scrape"}] * 3
        batch = {"urls": ["https://a.example/"], "actions": actions}
        refused = (await client.post("/v2/batch/scrape", json=batch)).json()
        assert refused["field"] == "actions" and refused["error"].startswith("actions: ")
        crawl = {"url": "https://a.example/", "scrapeOptions": {"formats": ["screenshot"]}}
        refused = (await client.post("/v2/crawl", json=crawl)).json()
        assert refused["field"] == "scrapeOptions.formats", refused
        assert "SCRAPEJOBS_FILES_BUCKET" in refused["error"]
        shot = {"url": "https://a.example/", "actions": [{"type": "scrape"}, {"type": "pdf"}]}
        refused = (await client.post("/v2/scrape", json=shot)).json()
        assert refused["field"] == "actions[1]", refused


def test_firecrawl_s_actions_become_the_native_ones() -> None:
    actions = [
        {"type": "wait", "milliseconds": 100},
        {"type": "click", "selector": "#b", "all": True},
        {"type": "write", "text": "hi"},
        {"type": "press", "key": "Enter"},
        {"type": "scroll", "direction": "up"},
        {"type": "screenshot", "fullPage": True, "quality": 50},
        {"type": "scrape"},
        {"type": "screenshot", "viewport": {"width": 400, "height": 300}},
        {"type": "executeJavascript", "script": "return 1"},
        {"type": "pdf", "format": "A4", "landscape": True, "scale": 0.5},
    ]
    body = ScrapeBody.model_validate({"url": "https://a.example/", "actions": actions})
    render = job_options(body)["render"]
    native = render["actions"]
    assert [a["type"] for a in native][-2:] == ["execute_javascript", "pdf"]
    assert native[5] == {"type": "screenshot", "full_page": True, "quality": 50}
    assert native[7]["viewport"] == {"width": 400, "height": 300}  # that screenshot's size
    assert render["block"] == ["media"]
    job = JobRequest.model_validate({"url": "https://a.example/", "options": {"render": render}})
    assert len(job.options.render.actions) == 10  # type: ignore[union-attr]
    with pytest.raises(ValidationError, match="milliseconds or a selector"):
        ScrapeBody.model_validate({"url": "https://a.example/", "actions": [{"type": "wait"}]})
