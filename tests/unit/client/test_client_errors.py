"""ApiError carries the API's own message from its JSON error body; anything else is still a
readable error; a 404 is a NotFound."""

from __future__ import annotations

import httpx
import pytest

from scrapejobs_client import NO_RETRIES, ApiError, Client, NotFound


def answering(response: httpx.Response) -> Client:
    return Client(
        "http://api.test", transport=httpx.MockTransport(lambda _: response), retry=NO_RETRIES
    )


def test_the_api_s_json_error_body() -> None:
    body = {
        "error": {
            "code": "invalid_request",
            "message": "urls[0]: URL scheme must be http or https, got 'ftp'",
            "field": "urls[0]",
        }
    }
    with pytest.raises(ApiError) as raised:
        answering(httpx.Response(422, json=body)).submit(["ftp://x"])

    error = raised.value
    assert error.status == 422 and error.code == "invalid_request" and error.field == "urls[0]"
    assert error.message == "urls[0]: URL scheme must be http or https, got 'ftp'"
    assert error.body == body
    assert str(error) == f"422: {error.message}"


def test_not_found_is_its_own_class() -> None:
    body = {"error": {"code": "not_found", "message": "job nope not found"}}
    with pytest.raises(NotFound) as raised:
        answering(httpx.Response(404, json=body)).get_job("nope")
    assert raised.value.message == "job nope not found" and isinstance(raised.value, ApiError)


def test_a_body_that_is_not_the_api_s() -> None:
    with pytest.raises(ApiError) as raised:
        answering(httpx.Response(502, text="<html>Bad Gateway</html>")).get_job("j1")
    assert raised.value.status == 502
    assert raised.value.message == "HTTP 502 Bad Gateway: <html>Bad Gateway</html>"
    assert raised.value.body == "<html>Bad Gateway</html>"

    with pytest.raises(ApiError) as raised:
        answering(httpx.Response(400, json={"detail": "plain FastAPI"})).get_job("j1")
    assert raised.value.message == "plain FastAPI"

    with pytest.raises(ApiError) as raised:
        answering(httpx.Response(500)).get_job("j1")
    assert raised.value.message == "HTTP 500 Internal Server Error"


def test_ids_cannot_address_another_route() -> None:
    seen: list[str] = []

    def handle(request: httpx.Request) -> httpx.Response:
        seen.append(request.url.raw_path.decode())
        return httpx.Response(404, json={"error": {"message": "not found"}})

    client = Client("http://api.test", transport=httpx.MockTransport(handle), retry=NO_RETRIES)
    with pytest.raises(NotFound):
        client.get_job("../dead-letters?x=1")
    assert seen == ["/v1/jobs/..%2Fdead-letters%3Fx%3D1"]
