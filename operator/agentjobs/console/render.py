"""Pages from templates, every value escaped unless it is HTML we made.

Jinja escapes every value by default; the agents' Markdown is rendered by
markdown-it with raw HTML off (tags in it come out as text) and its link
checks on (no ``javascript:`` URLs). What the page loads comes from the
console alone, and its Content-Security-Policy runs no script but ours, so a
value that escaped all that still could not run.
"""

from __future__ import annotations

from typing import Any

import jinja2
from markdown_it import MarkdownIt
from markupsafe import Markup

from agentjobs.contract.conversation import report_marks

_MARKDOWN = MarkdownIt("commonmark", {"html": False, "linkify": False}).enable("table")


def markdown(text: str) -> Markup:
    return Markup(_MARKDOWN.render(text))  # markdown-it escapes it: raw HTML is off


def _size(size: int | None) -> str:
    if size is None:
        return ""
    for unit in ("B", "KiB", "MiB", "GiB"):
        if size < 1024 or unit == "GiB":
            return f"{size} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024  # type: ignore[assignment]
    return ""


_ENVIRONMENT = jinja2.Environment(
    loader=jinja2.PackageLoader("agentjobs.console", "templates"),
    autoescape=True,
    undefined=jinja2.StrictUndefined,
    trim_blocks=True,
    lstrip_blocks=True,
)
_ENVIRONMENT.filters["markdown"] = markdown
_ENVIRONMENT.filters["size"] = _size
_ENVIRONMENT.globals["segments"] = report_marks.segments


def set_user_tokens(user_tokens: bool) -> None:
    """Whether pages offer to sign out: only when users sign in (one console a process)."""
    _ENVIRONMENT.globals["user_tokens"] = user_tokens


set_user_tokens(False)


def page(template: str, **values: Any) -> str:
    return _ENVIRONMENT.get_template(template).render(**values)


def fragment(template: str, macro: str, *args: Any) -> str:
    """One macro of a template, for a live update: the same HTML the page has."""
    module = _ENVIRONMENT.get_template(template).module
    return str(getattr(module, macro)(*args))
