"""R49: which webhook URLs the operator calls, and the addresses it never calls.

``--webhook-allow`` patterns are globs over the whole URL, as issue 11 asks
(``https://hooks.example.com/*``), with two precautions. A glob over the
URL's text would let ``*`` run from the host into the path
(``https://*.example.com/*`` would match ``https://evil.test/.example.com/``),
so pattern and URL are both split into scheme, authority and the rest (path
and query) and each part is matched on its own. The scheme is never a
wildcard: http is called only where a pattern spells ``http://``. ``*`` is
the only wildcard (any run of characters within its part); ``?`` and ``[``
mean themselves, because URLs use them. A link-local, metadata, multicast or
unspecified address, in whatever IPv6 form embeds it, is refused whatever the
patterns say (R59, :mod:`.addresses`), and so is loopback unless a pattern that
matches names it explicitly (``http://127.0.0.1:*/*``, not ``http://*:*/*``).
Names resolve to addresses only when the sender connects, so it checks those
there too, by the same rule (``Target.forbidden``), and connects only to the
addresses it checked.

Messages never repeat a URL's path or query: they end up in the status,
and webhook URLs often carry their token there.
"""

from __future__ import annotations

import dataclasses
import ipaddress
import re
from collections.abc import Sequence
from dataclasses import dataclass
from urllib.parse import SplitResult, urlsplit

from agentjobs.contract.notifications import addresses
from agentjobs.models.kubernetes import MAX_URL_LENGTH

SCHEMES = ("https", "http")
_DEFAULT_PORTS = {"https": 443, "http": 80}
_LABEL = r"[a-z0-9]([a-z0-9-]*[a-z0-9])?"
_HOST_NAME = re.compile(rf"^{_LABEL}(\.{_LABEL})*$")
# Labels as inet_aton reads them: "2852039166" or "0xa9.0xfe.0xa9.0xfe" are addresses too.
_NUMERIC_LABEL = re.compile(r"^(0x[0-9a-f]*|[0-9]+)$")
_CONTROL_OR_SPACE = re.compile(r"[\x00-\x20\x7f]")
# Encoded '.', '/' and '\\': a server that decodes them could climb out of an allowed path.
_ENCODED_SEPARATOR = re.compile(r"%(2e|2f|5c)", re.IGNORECASE)
METADATA_NAMES = frozenset(
    {"metadata", "metadata.google.internal", "metadata.goog", "instance-data"}
)


class TargetRefused(ValueError):
    """A URL the operator will not call; the message says why and is safe to show."""


@dataclass(frozen=True)
class Target:
    """A checked webhook URL, split as the allow-list matches it."""

    url: str
    scheme: str
    host: str  # lowercase; an IPv6 address without its brackets
    port: int | None  # None: the scheme's default
    rest: str  # the path (at least "/") and "?query" if any
    # R59: a matching pattern names loopback explicitly, so loopback may be called.
    loopback_allowed: bool = False

    @property
    def authority(self) -> str:
        """``host[:port]``: what the status shows of the target, never its path or query."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return host if self.port is None else f"{host}:{self.port}"

    def forbidden(self, host: str) -> str | None:
        """Why ``host`` (this target's, or an address its name resolved to) is never called."""
        return forbidden_host(host, loopback_allowed=self.loopback_allowed)


def _split(url: str) -> SplitResult:
    if len(url) > MAX_URL_LENGTH:
        raise TargetRefused(f"the url is longer than {MAX_URL_LENGTH} characters")
    if _CONTROL_OR_SPACE.search(url):
        raise TargetRefused("the url contains spaces or control characters")
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - urlsplit checks the port only when asked
    except ValueError as error:
        raise TargetRefused(f"the url cannot be read: {error}") from None
    if parts.scheme not in SCHEMES:
        raise TargetRefused("the url must start with https:// or http://")
    if "@" in parts.netloc:
        raise TargetRefused("the url must not carry a user or password")
    if parts.fragment or "#" in url:
        raise TargetRefused("the url must not have a #fragment")
    return parts


def _host(parts: SplitResult) -> str:
    host = (parts.hostname or "").lower()
    if not host:
        raise TargetRefused("the url names no host")
    if "%" in host:
        raise TargetRefused("the url's host must not be percent-encoded or carry a zone")
    if parts.netloc.startswith("["):
        try:
            ipaddress.IPv6Address(host)
        except ValueError:
            raise TargetRefused("the url's [host] is not an IPv6 address") from None
        return host
    if host.endswith("."):
        raise TargetRefused("the url's host must not end with '.': write the name without it")
    name = host
    try:
        ipaddress.IPv4Address(name)
    except ValueError:
        pass
    else:
        return name
    labels = name.split(".")
    if len(name) > 253 or not _HOST_NAME.match(name) or all(map(_NUMERIC_LABEL.match, labels)):
        raise TargetRefused(
            "the url's host must be a DNS name, an IPv4 address as four decimal numbers, "
            "or an IPv6 address in brackets"
        )
    return name


def _rest(parts: SplitResult) -> str:
    path = parts.path or "/"
    segments = path.split("/")
    if "." in segments or ".." in segments or "\\" in path or _ENCODED_SEPARATOR.search(path):
        raise TargetRefused(
            "the url's path must not contain '.' or '..' segments, '\\' or an encoded '.', "
            "'/' or '\\'"
        )
    return path + (f"?{parts.query}" if parts.query else "")


def parse_target(url: str) -> Target:
    """The URL split for matching, or TargetRefused for one the operator never calls."""
    parts = _split(url)
    host = _host(parts)
    port = parts.port
    if port == _DEFAULT_PORTS[parts.scheme]:
        port = None
    target = Target(url=url, scheme=parts.scheme, host=host, port=port, rest=_rest(parts))
    reason = forbidden_host(host, loopback_allowed=True)  # loopback: judged with the patterns
    if reason is not None:
        raise TargetRefused(f"{target.authority} is {reason}: the operator never calls it")
    return target


def forbidden_host(host: str, *, loopback_allowed: bool = False) -> str | None:
    """Why a host (an address or a name) is never called, or None."""
    if host in METADATA_NAMES:
        return "a cloud metadata service"
    if addresses.is_loopback_name(host):
        return None if loopback_allowed else addresses.LOOPBACK
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return None
    return addresses.refusal(address, loopback_allowed=loopback_allowed)


def _glob(text: str) -> re.Pattern[str]:
    return re.compile("^" + ".*".join(map(re.escape, text.split("*"))) + "$", re.DOTALL)


@dataclass(frozen=True)
class AllowPattern:
    """One ``--webhook-allow`` pattern, split as targets are."""

    text: str
    scheme: str
    authority: re.Pattern[str]
    rest: re.Pattern[str]
    names_loopback: bool = False

    def matches(self, target: Target) -> bool:
        return (
            target.scheme == self.scheme
            and self.authority.match(target.authority) is not None
            and self.rest.match(target.rest) is not None
        )


def parse_pattern(text: str) -> AllowPattern:
    """A pattern such as ``https://hooks.example.com/*``; ValueError says what is wrong."""
    scheme, separator, remainder = text.partition("://")
    if not separator or scheme not in SCHEMES:
        raise ValueError(
            f"--webhook-allow {text!r}: must start with https:// or http:// "
            "(the scheme is never a wildcard)"
        )
    authority, _, path = remainder.partition("/")
    if (
        not authority
        or any(character in authority for character in "@?")
        or "#" in text
        or _CONTROL_OR_SPACE.search(text)
    ):
        raise ValueError(
            f"--webhook-allow {text!r}: needs a host (a '*' may stand for part of it) then "
            "'/' and the path, and no user, #fragment or spaces"
        )
    default_port = f":{_DEFAULT_PORTS[scheme]}"
    authority = authority.lower().removesuffix(default_port)
    host = _pattern_host(authority)
    return AllowPattern(
        text=text,
        scheme=scheme,
        authority=_glob(authority),
        rest=_glob(f"/{path}"),
        names_loopback="*" not in host and addresses.is_loopback(host),
    )


def _pattern_host(authority: str) -> str:
    """The host part of a pattern's authority (``[::1]:*`` -> ``::1``)."""
    if authority.startswith("["):
        return authority[1:].partition("]")[0]
    return authority.rpartition(":")[0] if ":" in authority else authority


def parse_patterns(texts: Sequence[str]) -> tuple[AllowPattern, ...]:
    return tuple(parse_pattern(text) for text in texts)


def check(url: str, allowed: Sequence[AllowPattern]) -> Target:
    """R49: the target if the operator may call it; otherwise TargetRefused with the reason."""
    target = parse_target(url)
    matching = [pattern for pattern in allowed if pattern.matches(target)]
    if not matching:
        raise TargetRefused(
            f"{target.scheme}://{target.authority} is not allowed by the operator's "
            "--webhook-allow: it was never called"
        )
    target = dataclasses.replace(
        target, loopback_allowed=any(pattern.names_loopback for pattern in matching)
    )
    reason = target.forbidden(target.host)
    if reason is not None:
        raise TargetRefused(f"{target.authority} is {reason}: it was never called")
    return target
