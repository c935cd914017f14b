"""What changed on a page between two checks of a monitor, and whether it is worth telling.

Extracted fields are compared field by field and typed: a number says by how much it moved
(``10.50 -> 9.99``: ``change`` -0.51, ``change_pct`` -4.86), a list which items it gained and
lost, anything else its previous and current value. The page's markdown is compared line by
line (a unified diff, and the share of lines that changed) by the longest common subsequence
of its lines, found bit-parallel (rapidfuzz's Indel distance): time in the product of the two
sides' line counts over 64, whatever the lines hold (5,000 lines a side: ~5 ms). (difflib's
matcher, without its junk heuristic, took 20 s for 1,300 lines drawn from three values; with
it, a made-up page could still choose which lines it treats as junk.) At most
:data:`MAX_LINES` lines a side are compared and :data:`MAX_DIFF_CHARS` of the diff kept.
Values are normalized first as the monitor's rules say (whitespace, letter case, the way a
number is written), so a difference they hide is no change at all.

A change the rules hold back (an ignored field, a move under a threshold, too small a share
of the text, no ``notify_when`` condition met) is still recorded, with the rule that held it
back; only the page's ``notify`` says whether to tell anyone.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from rapidfuzz.distance import Indel

from scrapejobs_shared.domain.monitor_rules import Condition, MonitorRules, Normalization

MAX_LINES = 5_000  # of each side's markdown compared; a longer page compares its first lines
MAX_DIFF_LINES = 2_000  # of a unified diff kept
MAX_DIFF_CHARS = 100_000  # of a unified diff kept (a check's page is one stored document)
CONTEXT = 1  # unchanged lines shown around a change
_NUMBER = re.compile(r"^[^\d+\-.]{0,4}\s*([+\-]?[\d][\d,.\s']*)\s*[^\d]{0,4}$")
_SPACES = re.compile(r"\s+")

Change = Literal["same", "changed"]


@dataclass(frozen=True, slots=True)
class PageContent:
    """What a check found on a page."""

    data: Mapping[str, Any]
    markdown: str = ""


@dataclass(frozen=True, slots=True)
class FieldChange:
    previous: Any
    current: Any
    change: float | None = None  # numbers: current - previous
    change_pct: float | None = None  # numbers: the change in percent of previous
    added: list[Any] | None = None  # lists: items now there that were not
    removed: list[Any] | None = None  # lists: items there before that are gone
    held_back_by: str | None = None  # the rule that kept this change from a notification

    def to_dict(self) -> dict[str, Any]:
        shown = {"previous": self.previous, "current": self.current}
        for name in ("change", "change_pct", "added", "removed", "held_back_by"):
            value = getattr(self, name)
            if value is not None:
                shown[name] = value
        return shown


@dataclass(frozen=True, slots=True)
class PageDiff:
    status: Change
    fields: dict[str, FieldChange] = field(default_factory=dict)
    text: str = ""  # a unified diff of the markdown ("" when the text is the same)
    text_change: float = 0.0  # the share of lines that changed, 0 to 1
    text_held_back_by: str | None = None
    notify: bool = False
    held_back_by: tuple[str, ...] = ()  # every rule that held a change back
    not_compared: str | None = None  # why the page changed without a diff (its budget)

    def to_dict(self) -> dict[str, Any]:
        return {
            "fields": {name: change.to_dict() for name, change in self.fields.items()},
            "text": self.text,
            "text_change": round(self.text_change, 4),
            **({"text_held_back_by": self.text_held_back_by} if self.text_held_back_by else {}),
            **({"not_compared": self.not_compared} if self.not_compared else {}),
        }


def compare(previous: PageContent, current: PageContent, rules: MonitorRules) -> PageDiff:
    """The difference between two checks of one page under ``rules``."""
    fields = {
        name: change
        for name in sorted({*previous.data, *current.data})
        if (change := _field_change(name, previous.data.get(name), current.data.get(name), rules))
        is not None
    }
    text, share = _text_diff(previous.markdown, current.markdown, rules.normalize)
    text_held = "min_text_change" if text and share < rules.min_text_change else None
    if not fields and not text:
        return PageDiff("same")
    counted = {name for name, change in fields.items() if change.held_back_by is None}
    held = [change.held_back_by for change in fields.values() if change.held_back_by]
    worth = bool(counted) or (bool(text) and text_held is None)
    conditions = rules.conditions()
    if (
        worth
        and conditions
        and not any(
            _met(c, previous.data, current.data, counted, rules.normalize) for c in conditions
        )
    ):
        worth = False
        held.append("notify_when")
    if text_held:
        held.append(text_held)
    return PageDiff(
        "changed",
        fields,
        text,
        share,
        text_held,
        notify=worth,
        held_back_by=tuple(dict.fromkeys(held)),
    )


def unequal(previous: PageContent, current: PageContent, why: str) -> PageDiff:
    """What can be said of two versions of a page that could not be compared within the
    comparison's budget (``why``): the same when they are equal as they are, else changed,
    worth telling (no rule could be weighed), with no diff and ``why``."""
    if previous == current:
        return PageDiff("same")
    return PageDiff("changed", text_change=1.0, notify=True, not_compared=why)


def normalized(value: Any, how: Normalization) -> Any:
    """``value`` as the rules compare it."""
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str):
        text = _SPACES.sub(" ", value).strip() if how.whitespace else value
        if how.numbers:
            number = as_number(text)
            if number is not None:
                return number
        return text.casefold() if how.case else text
    if isinstance(value, list | tuple):
        return tuple(normalized(item, how) for item in value)
    if isinstance(value, dict):
        return tuple(sorted((str(k), repr(normalized(v, how))) for k, v in value.items()))
    return value


def as_number(text: str) -> float | None:
    """The number a short text writes (``1,299.00``, ``$ 10.50``, ``1.299,00 €``), else None."""
    match = _NUMBER.match(text.strip())
    if match is None:
        return None
    digits = re.sub(r"[\s']", "", match[1])
    if "," in digits and "." in digits:  # the later one is the decimal mark
        thousands = "," if digits.rfind(",") < digits.rfind(".") else "."
        digits = digits.replace(thousands, "").replace(",", ".")
    elif digits.count(",") == 1 and len(digits.rsplit(",", 1)[1]) != 3:
        digits = digits.replace(",", ".")  # a decimal comma: 10,50
    else:
        digits = digits.replace(",", "")
    try:
        number = float(digits)
    except ValueError:
        return None
    return number if math.isfinite(number) else None


def _field_change(name: str, before: Any, after: Any, rules: MonitorRules) -> FieldChange | None:
    how = rules.normalize
    old, new = normalized(before, how), normalized(after, how)
    if old == new:
        return None
    change = FieldChange(before, after)
    if isinstance(old, float) and isinstance(new, float):
        change = FieldChange(
            before,
            after,
            change=round(new - old, 10),
            change_pct=round((new - old) / abs(old) * 100, 4) if old else None,
        )
    elif isinstance(before, list) and isinstance(after, list):
        was = {repr(normalized(item, how)) for item in before}
        now = {repr(normalized(item, how)) for item in after}
        change = FieldChange(
            before,
            after,
            added=[item for item in after if repr(normalized(item, how)) not in was],
            removed=[item for item in before if repr(normalized(item, how)) not in now],
        )
    held = _held_back(name, old, new, rules)
    return FieldChange(**{**_as_kwargs(change), "held_back_by": held}) if held else change


def _held_back(name: str, old: Any, new: Any, rules: MonitorRules) -> str | None:
    if name in rules.ignore_fields:
        return "ignore_fields"
    threshold = rules.thresholds.get(name)
    if threshold is None or not (isinstance(old, float) and isinstance(new, float)):
        return None
    moved = abs(new - old)
    if threshold.absolute is not None and moved < threshold.absolute:
        return f"thresholds.{name}.absolute"
    if threshold.relative is not None and old and moved / abs(old) < threshold.relative:
        return f"thresholds.{name}.relative"
    return None


def _as_kwargs(change: FieldChange) -> dict[str, Any]:
    return {name: getattr(change, name) for name in FieldChange.__slots__}


def _text_diff(before: str, after: str, how: Normalization) -> tuple[str, float]:
    old = [_line(line, how) for line in before.splitlines()[:MAX_LINES]]
    new = [_line(line, how) for line in after.splitlines()[:MAX_LINES]]
    if how.whitespace:
        old, new = [line for line in old if line], [line for line in new if line]
    if old == new:
        return "", 0.0
    opcodes = [
        (op.tag, op.src_start, op.src_end, op.dest_start, op.dest_end)
        for op in Indel.opcodes(old, new)
    ]
    share = 1.0 - Indel.normalized_similarity(old, new)
    return _unified(old, new, opcodes), share


Opcode = tuple[str, int, int, int, int]


def _unified(old: list[str], new: list[str], opcodes: list[Opcode]) -> str:
    """The unified diff of ``old`` and ``new`` (``difflib.unified_diff``'s form, with
    :data:`CONTEXT` lines of context), cut at :data:`MAX_DIFF_LINES` lines and
    :data:`MAX_DIFF_CHARS` characters."""
    out = ["--- previous", "+++ current"]
    size = 0
    for group in _grouped(opcodes):
        _, i1, _, j1, _ = group[0]
        _, _, i2, _, j2 = group[-1]
        lines = [f"@@ -{_range(i1, i2)} +{_range(j1, j2)} @@"]
        added: list[str] = []  # a change's new lines follow its old ones
        for tag, a1, a2, b1, b2 in group:
            if tag == "equal":
                lines += added + [" " + line for line in old[a1:a2]]
                added = []
                continue
            lines += ["-" + line for line in old[a1:a2]]
            added += ["+" + line for line in new[b1:b2]]
        lines += added
        for line in lines:
            size += len(line) + 1
            if len(out) >= MAX_DIFF_LINES or size > MAX_DIFF_CHARS:
                return "\n".join(out)
            out.append(line)
    return "\n".join(out)


def _grouped(opcodes: list[Opcode]) -> list[list[Opcode]]:
    """The changes with :data:`CONTEXT` unchanged lines around each, changes closer than
    twice that in one group (``SequenceMatcher.get_grouped_opcodes``'s rule)."""
    codes = list(opcodes)
    if codes[0][0] == "equal":
        tag, i1, i2, j1, j2 = codes[0]
        codes[0] = tag, max(i1, i2 - CONTEXT), i2, max(j1, j2 - CONTEXT), j2
    if codes[-1][0] == "equal":
        tag, i1, i2, j1, j2 = codes[-1]
        codes[-1] = tag, i1, min(i2, i1 + CONTEXT), j1, min(j2, j1 + CONTEXT)
    groups: list[list[Opcode]] = []
    group: list[Opcode] = []
    for tag, i1, i2, j1, j2 in codes:
        if tag == "equal" and i2 - i1 > 2 * CONTEXT:  # a long unchanged run ends a group
            group.append((tag, i1, min(i2, i1 + CONTEXT), j1, min(j2, j1 + CONTEXT)))
            groups.append(group)
            group = []
            i1, j1 = max(i1, i2 - CONTEXT), max(j1, j2 - CONTEXT)
        group.append((tag, i1, i2, j1, j2))
    groups.append(group)
    return [g for g in groups if any(op[0] != "equal" for op in g)]


def _range(start: int, stop: int) -> str:
    """A unified diff's range (``difflib``'s ``_format_range_unified``)."""
    beginning, length = start + 1, stop - start
    if length == 1:
        return str(beginning)
    if not length:
        beginning -= 1
    return f"{beginning},{length}"


def _line(line: str, how: Normalization) -> str:
    text = _SPACES.sub(" ", line).strip() if how.whitespace else line
    return text.casefold() if how.case else text


def _met(
    condition: Condition,
    previous: Mapping[str, Any],
    current: Mapping[str, Any],
    counted: set[str],
    how: Normalization,
) -> bool:
    if condition.op == "changes":
        return condition.field in counted
    now = normalized(current.get(condition.field), how)
    wanted = normalized(condition.value, how)
    if condition.op == "becomes":
        return bool(now == wanted and normalized(previous.get(condition.field), how) != wanted)
    if condition.op == "==":
        return bool(now == wanted)
    if condition.op == "!=":
        return bool(now != wanted)
    if not (isinstance(now, float) and isinstance(wanted, float)):
        return False
    return {
        "<": now < wanted,
        "<=": now <= wanted,
        ">": now > wanted,
        ">=": now >= wanted,
    }[condition.op]
