"""Post-processing stages over the real stack: clean and transform shape each result's data; a
validate stage that refuses it ends the task failed with reason validation, never retried."""

from __future__ import annotations

import pytest

from scrapejobs_devstack.demo_site.catalog import Product
from support.jobs import all_results, submit, wait_finished

pytestmark = [pytest.mark.emulators, pytest.mark.stack]

MAX_COST = 500
PIPELINE = [
    {"clean": {}},
    {
        "transform": {
            "rename": {"price": "cost"},
            "cast": {"cost": "float"},
            "defaults": {"currency": "USD"},
        }
    },
    {
        "validate": {
            "schema": {
                "type": "object",
                "required": ["title", "cost", "currency"],
                "properties": {"cost": {"type": "number", "maximum": MAX_COST}},
            }
        }
    },
]


async def test_clean_transform_and_a_validation_failure(api, site) -> None:
    numbers = range(20)  # prices 0.99 ... 703.99: some above MAX_COST
    urls = [f"{site.url}/messy/{n}" for n in numbers]
    extract = {
        "title": {"css": "h1::text"},
        "price": {"css": ".price::text"},
        "note": {"css": ".note::text"},
    }
    job = await submit(api, {"urls": urls, "extract": extract, "pipeline": PIPELINE})

    final = await wait_finished(api, job["id"])

    by_url = {r["url"]: r for r in await all_results(api, job["id"])}
    expensive = [n for n in numbers if float(Product(n).price) > MAX_COST]
    assert 0 < len(expensive) < len(numbers)
    for n in numbers:
        result = by_url[f"{site.url}/messy/{n}"]
        cost = float(Product(n).price)
        data = {"title": f"Product {n} & Co", "cost": cost, "currency": "USD"}
        assert result["data"] == data and result["http_status"] == 200
        assert result["attempts"] == 1 and site.count(f"/messy/{n}") == 1
        if n in expensive:
            problem = f"{cost} is greater than the maximum of {MAX_COST}"
            assert result["status"] == "failed"
            assert result["error"] == f"validation: pipeline[2] (validate): $.cost: {problem}"
            assert result["field_errors"] == {"$.cost": problem}
        else:
            assert result["status"] == "succeeded" and result["error"] is None
            assert result["field_errors"] is None
    assert final["counts"]["failed"] == len(expensive)
    assert final["counts"]["succeeded"] == len(numbers) - len(expensive)
