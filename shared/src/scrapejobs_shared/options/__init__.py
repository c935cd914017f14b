"""Job options, one family per module (``option_family.py`` says what a family holds), listed
once here: the native and Firecrawl request models take their fields from this list, the
Firecrawl translation, the submission rules and the worker their behaviour. Firecrawl's options
refused here are listed once too (``refused.py``).

To add an option: a module here declaring an ``OptionFamily`` (its fields, their translation,
its served-here check, what it changes in a fetch), and its line below."""

from .base64_images import BASE64_IMAGES
from .data_retention import ZERO_DATA_RETENTION
from .location import LOCATION
from .option_family import NotServed, OptionFamily, ServedHere
from .registry import OptionRegistry

OPTIONS = OptionRegistry(
    (
        LOCATION,
        BASE64_IMAGES,
        ZERO_DATA_RETENTION,
    )
)

__all__ = ["OPTIONS", "NotServed", "OptionFamily", "OptionRegistry", "ServedHere"]
