"""``removeBase64Images``: Firecrawl's markdown keeps a page's images, and this says whether
those written into the page (a ``data:`` URI, which can be megabytes) are replaced by a
placeholder. Here markdown leaves images out unless its format asks for them
(``{"type": "markdown", "images": "linked" | "all"}``: extraction/formats/markdown.py), so an
image written into the page is always left out, as ``true`` (Firecrawl's default, which its
SDKs 3.0-4.54 send on every scrape) asks; ``false`` asks for them kept:

| Firecrawl | native |
|---|---|
| ``removeBase64Images`` unset or ``true`` | ``markdown`` (images left out) |
| ``removeBase64Images: false`` | ``{"type": "markdown", "images": "all"}``: the page's images, ``data:`` ones whole |
| ``{"type": "markdown", "images": "linked"}`` (an extension) | Firecrawl's markdown with ``true``: ``![alt](url)``, a ``data:`` image as ``![alt](<Base64-Image-Removed>)`` |
"""  # noqa: E501

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from .option_family import OptionFamily, ServedHere

FIELD = "remove_base64_images"


class Base64Images(OptionFamily):
    name = "base64_images"
    firecrawl_fields = {
        "scrape_options": {
            FIELD: (
                bool | None,
                Field(
                    default=None,
                    description="true (or unset): an image written into the page (a data: "
                    "URI) is left out of markdown, as every image is unless the markdown "
                    'format asks for them ({"type": "markdown", "images": "linked"}); false: '
                    "the markdown keeps the page's images, those whole",
                ),
            )
        }
    }

    def options_to_native(self, given: BaseModel, native: dict[str, Any], here: ServedHere) -> None:
        if getattr(given, FIELD, None) is not False:
            return
        native["formats"] = [
            {"type": "markdown", "images": "all"} if choice == "markdown" else choice
            for choice in native.get("formats", [])
        ]


BASE64_IMAGES = Base64Images()
