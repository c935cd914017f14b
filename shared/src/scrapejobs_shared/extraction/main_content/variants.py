"""A product's variants, as its add-to-cart form offers them: the form controls the main
content leaves out (a picker is no text a reader reads) say which colours and sizes there are.

:func:`variant_fact` reads the ``<select>`` lists and radio groups belonging to a form that puts
things in a cart (its action, class or id says ``cart``, ``basket`` or ``bag``; a control may
sit outside it and name it with ``form=``), each group under its name (a ``<legend>``, a
``<label for>``, ``aria-label``, else none) with its choices' names (an option's text, a
radio's label), placeholders (``Choose an option``) and quantities left out. Bounded: at most
``MAX_GROUPS`` groups of ``MAX_CHOICES`` choices.
"""

from __future__ import annotations

import re
from typing import Any

from lxml import etree  # type: ignore[import-untyped]

from .fact import Fact

MAX_GROUPS = 5
MAX_CHOICES = 30
MAX_NAME = 40  # characters of a choice's or a group's name
_CART = re.compile(r"cart|basket|bag", re.IGNORECASE)
_PLACEHOLDER = re.compile(r"^(choose|select|pick|please|--)", re.IGNORECASE)
_QUANTITY = re.compile(r"qty|quantity", re.IGNORECASE)
_SCREEN_READER = re.compile(r"visually-hidden|sr-only|screen-reader")

_FORMS = etree.XPath("//form", smart_strings=False)
_CONTROLS = etree.XPath("//select | //input[@type='radio']", smart_strings=False)
_LABELS = etree.XPath("//label[@for]", smart_strings=False)


def variant_fact(root: Any) -> Fact | None:
    """The ``Options`` fact of the page's add-to-cart form (``Color: Sage, Charcoal``), or
    None when it has no choices to offer."""
    carts = [f for f in _FORMS(root) if _CART.search(_form_names(f))]
    if not carts:
        return None
    cart_ids = {f.get("id") for f in carts if f.get("id")}
    labels = {label.get("for"): _text(label) for label in _LABELS(root)}
    groups: dict[str, list[str]] = {}
    names: dict[str, str] = {}
    for control in _CONTROLS(root):
        if not _in_cart(control, carts, cart_ids):
            continue
        key = control.get("name") or control.get("id") or ""
        if _QUANTITY.search(key):
            continue
        if key not in names:
            if len(names) >= MAX_GROUPS:
                continue
            names[key] = _group_name(control, labels)
        choices = groups.setdefault(key, [])
        for choice in _choices(control, labels):
            if choice and choice not in choices and len(choices) < MAX_CHOICES:
                choices.append(choice)
    parts = [
        f"{names[key]}: {', '.join(choices)}" if names[key] else ", ".join(choices)
        for key, choices in groups.items()
        if len(choices) > 1
    ]
    return Fact("Options", "; ".join(parts)) if parts else None


def _form_names(form: Any) -> str:
    return " ".join(form.get(a) or "" for a in ("action", "class", "id"))


def _in_cart(control: Any, carts: list[Any], cart_ids: set[str]) -> bool:
    if control.get("form") in cart_ids:
        return True
    return any(a in carts for a in control.iterancestors("form"))


def _group_name(control: Any, labels: dict[str, str]) -> str:
    if control.tag == "select":
        name = labels.get(control.get("id") or "") or control.get("aria-label") or ""
    else:
        fieldset = next(control.iterancestors("fieldset"), None)
        legend = fieldset.find("legend") if fieldset is not None else None
        name = _text(legend) if legend is not None else ""
    return _short(name.rstrip(":"))


def _choices(control: Any, labels: dict[str, str]) -> list[str]:
    if control.tag == "select":
        return [
            _short(_text(option))
            for option in control.iter("option")
            if (option.get("value") or "").strip() and not _PLACEHOLDER.match(_text(option))
        ]
    label = labels.get(control.get("id") or "")
    if not label:
        wrapping = next(control.iterancestors("label"), None)
        label = _text(wrapping) if wrapping is not None else ""
    return [_short(label or control.get("title") or control.get("value") or "")]


def _text(element: Any) -> str:
    """An element's words, text for screen readers alone (``visually-hidden``, ``sr-only``:
    "Variant sold out") left out."""
    parts: list[str] = []
    pending: list[Any] = [element]
    while pending:  # what is left to read, last first: elements and tails
        node = pending.pop()
        if isinstance(node, str):
            parts.append(node)
            continue
        if node is not element and _SCREEN_READER.search(node.get("class") or ""):
            continue
        parts.append(node.text or "")
        for child in reversed(node):
            pending.append(child.tail or "")
            if isinstance(child.tag, str):
                pending.append(child)
    return " ".join(" ".join(parts).split())


def _short(text: str) -> str:
    return text if len(text) <= MAX_NAME else ""
