"""Job options, one family per module (``option_family.py`` says what a family holds), listed
once here: the native and Firecrawl request models take their fields from this list, the
Firecrawl translation, the submission rules and the worker their behaviour. Firecrawl's options
refused here are listed once too (``refused.py``).

To add an option: a module here declaring an ``OptionFamily`` (its fields, their translation,
its served-here check, what it changes in a fetch), and its line below."""

from .base64_images import BASE64_IMAGES
from .content import CONTENT
from .data_retention import ZERO_DATA_RETENTION
from .documents import DOCUMENTS
from .location import LOCATION
from .option_family import InvalidOption, NotServed, OptionFamily, ServedHere
from .pace import JOB_PACE
from .page_cache import PAGE_CACHE
from .proxy import PROXY
from .registry import OptionRegistry
from .render import RENDER
from .tls import TLS

OPTIONS = OptionRegistry(
    (
        CONTENT,
        DOCUMENTS,
        RENDER,
        PAGE_CACHE,
        TLS,
        JOB_PACE,
        LOCATION,
        PROXY,
        BASE64_IMAGES,
        ZERO_DATA_RETENTION,
    )
)

__all__ = [
    "CONTENT",
    "DOCUMENTS",
    "JOB_PACE",
    "LOCATION",
    "OPTIONS",
    "PAGE_CACHE",
    "PROXY",
    "RENDER",
    "TLS",
    "InvalidOption",
    "NotServed",
    "OptionFamily",
    "OptionRegistry",
    "ServedHere",
]
