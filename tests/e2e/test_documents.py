"""PDF documents on the real stack: a job over the test site's PDF files gets each one's
markdown and metadata under the job's ``documents`` options, and a password-protected one fails
alone, with its reason, while the others succeed."""

from __future__ import annotations

import pytest

from support.jobs import all_results, submit, wait_finished

pytestmark = [pytest.mark.emulators, pytest.mark.stack]


async def test_a_job_of_pdfs_reads_each_one_under_its_documents_options(api, site) -> None:
    names = ["google-doc-document.pdf", "pdflatex-4-pages.pdf", "libreoffice-writer-password.pdf"]
    urls = [f"{site.url}/files/{name}" for name in names]
    options = {
        "formats": ["markdown", "metadata"],
        "documents": {"max_pages": 2, "page_markers": True},
    }
    job = await submit(api, {"urls": urls, "options": options})
    final = await wait_finished(api, job["id"])
    assert final["counts"]["succeeded"] == 2 and final["counts"]["failed"] == 1

    results = {r["url"].rsplit("/", 1)[1]: r for r in await all_results(api, job["id"])}
    google = results["google-doc-document.pdf"]
    assert google["status"] == "succeeded", google
    assert google["data"]["markdown"].startswith("# Example document\n\nBeautiful is better")
    assert google["data"]["metadata"]["title"] == "PDF Example Document"
    assert google["data"]["metadata"]["content_type"] == "application/pdf"

    four = results["pdflatex-4-pages.pdf"]
    assert four["status"] == "succeeded", four
    assert "\n\n---\n\n<!-- page 2 -->\n\n" in four["data"]["markdown"]
    assert "<!-- page 3 -->" not in four["data"]["markdown"]  # max_pages: 2
    assert four["data"]["metadata"]["page_count"] == 4
    assert four["field_errors"] == {"document": "pages past 2 of 4 left unread (the limit)"}

    locked = results["libreoffice-writer-password.pdf"]
    assert locked["status"] == "failed"
    assert locked["error"] == "unsupported_content: the PDF is password-protected"


async def test_a_documents_option_out_of_bounds_is_refused_naming_it(api) -> None:
    body = {"urls": ["https://example.com/a.pdf"], "options": {"documents": {"max_pages": 0}}}
    response = await api.post("/v1/jobs", json=body)
    assert response.status_code == 422, response.text
    assert "max_pages" in response.text
