"""R59: the addresses no webhook may reach, whichever way an address is written.

An IPv6 address can carry an IPv4 address that a translator, a tunnel or the
host's own stack delivers to: IPv4-mapped ``::ffff:a.b.c.d``, IPv4-translated
``::ffff:0:a.b.c.d``, IPv4-compatible ``::a.b.c.d``, NAT64 (the well-known
``64:ff9b::/96`` and the local-use ``64:ff9b:1::/48``, RFC 6052/8215), 6to4
``2002::/16``, Teredo ``2001::/32`` (its server and its client) and ISATAP
interface identifiers. Each embedded IPv4 address is judged as the IPv6
address itself is, so ``64:ff9b::a9fe:a9fe`` is the metadata service. A
local-use NAT64 prefix may be any of RFC 6052's lengths from /48 on: every
place an IPv4 address could sit is judged, and one forbidden reading refuses.

Never: link-local, multicast, unspecified, "this network" (0/8), IPv4's
reserved 240/4 and broadcast, cloud metadata addresses. Loopback only where
the caller says an allow pattern names it explicitly.
"""

from __future__ import annotations

import ipaddress

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

METADATA_ADDRESSES = frozenset(
    {
        ipaddress.ip_address("169.254.169.254"),  # AWS, GCP, Azure, OpenStack
        ipaddress.ip_address("fd00:ec2::254"),  # AWS over IPv6
        ipaddress.ip_address("100.100.100.200"),  # Alibaba Cloud
    }
)
LOOPBACK_NAME = "localhost"
THIS_NETWORK = ipaddress.IPv4Network("0.0.0.0/8")
_MAPPED = ipaddress.IPv6Network("::ffff:0:0/96")
_TRANSLATED = ipaddress.IPv6Network("::ffff:0:0:0/96")
_COMPATIBLE = ipaddress.IPv6Network("::/96")
_NAT64_WELL_KNOWN = ipaddress.IPv6Network("64:ff9b::/96")
_NAT64_LOCAL = ipaddress.IPv6Network("64:ff9b:1::/48")
_NAT64_LOCAL_LENGTHS = (48, 56, 64, 96)
_ISATAP_IDS = (0x00005EFE, 0x02005EFE)
_LOW32 = 0xFFFFFFFF

ALWAYS = "a link-local, metadata, multicast or reserved address"
LOOPBACK = "a loopback address, called only where a --webhook-allow pattern names it"


def _nat64(value: int, prefix_length: int) -> ipaddress.IPv4Address:
    """The IPv4 address RFC 6052 places after a prefix of this length (bits 64-71 unused)."""
    without_u = ((value >> 64) << 56) | (value & ((1 << 56) - 1))  # 120 bits
    start = prefix_length if prefix_length <= 64 else prefix_length - 8
    return ipaddress.IPv4Address((without_u >> (120 - start - 32)) & _LOW32)


def embedded_ipv4(address: ipaddress.IPv6Address) -> tuple[ipaddress.IPv4Address, ...]:
    """Every IPv4 address ``address`` may deliver to (none for a plain IPv6 address)."""
    value = int(address)
    low = ipaddress.IPv4Address(value & _LOW32)
    if address in _MAPPED or address in _TRANSLATED or address in _NAT64_WELL_KNOWN:
        return (low,)
    if address in _COMPATIBLE:
        # :: and ::1 are IPv6's own unspecified and loopback addresses, judged as such.
        return () if value <= 1 else (low,)
    if address in _NAT64_LOCAL:
        return tuple(dict.fromkeys(_nat64(value, length) for length in _NAT64_LOCAL_LENGTHS))
    found: list[ipaddress.IPv4Address] = []
    if address.sixtofour is not None:
        found.append(address.sixtofour)
    if address.teredo is not None:
        found.extend(address.teredo)
    if (value >> 32) & _LOW32 in _ISATAP_IDS:
        found.append(low)
    return tuple(found)


def _own_refusal(address: IPAddress, *, loopback_allowed: bool) -> str | None:
    if (
        address.is_link_local
        or address.is_multicast
        or address.is_unspecified
        or address in METADATA_ADDRESSES
        # IPv4's reserved 240/4 and broadcast; IPv6 calls all of ::/8 reserved.
        or (isinstance(address, ipaddress.IPv4Address) and address.is_reserved)
        or (isinstance(address, ipaddress.IPv4Address) and address in THIS_NETWORK)
    ):
        return ALWAYS
    if address.is_loopback and not loopback_allowed:
        return LOOPBACK
    return None


def refusal(address: IPAddress, *, loopback_allowed: bool = False) -> str | None:
    """Why ``address`` is never called (it, or an IPv4 address it embeds), or None."""
    reason = _own_refusal(address, loopback_allowed=loopback_allowed)
    if reason is not None or isinstance(address, ipaddress.IPv4Address):
        return reason
    for inner in embedded_ipv4(address):
        inner_reason = _own_refusal(inner, loopback_allowed=loopback_allowed)
        if inner_reason is not None:
            return f"an IPv6 form of {inner}, {inner_reason}"
    return None


def is_loopback_name(host: str) -> bool:
    """``localhost`` and the names under it, which resolvers answer with loopback (RFC 6761)."""
    return host == LOOPBACK_NAME or host.endswith(f".{LOOPBACK_NAME}")


def is_loopback(host: str) -> bool:
    """Whether ``host`` (a name or an address) is loopback, in any form."""
    if is_loopback_name(host):
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    if isinstance(address, ipaddress.IPv6Address):
        return address.is_loopback or any(v4.is_loopback for v4 in embedded_ipv4(address))
    return address.is_loopback
