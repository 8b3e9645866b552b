"""R49: the operator's allow-list (`--webhook-allow`) and the URLs it never calls.

Cases: a pattern's `*` stands for part of the host, the port or the path,
but never runs from the host into the path; the scheme is compared exactly,
so http only where a pattern spells it; default ports are the same as none;
`?` and `[` are literal; no pattern allows nothing; unreadable patterns are
refused at start with a message. Hostile URLs are refused whatever the
patterns: a user or password, a fragment, spaces, dot segments or encoded
separators in the path, a numeric or hex host, a percent-encoded host,
link-local and metadata addresses (IPv4, IPv6, IPv4-mapped) and names, an
over-long URL. R59: every IPv6 form that embeds an IPv4 address (mapped,
translated, compatible, NAT64 well-known and local-use at each prefix length,
6to4, Teredo, ISATAP) is mapped to it and judged as it is; loopback, in any
form or name, only where a matching pattern names it without a wildcard; what
a name resolves to is judged by the target's own patterns. A query is allowed
and never shown: the target a status shows is host[:port] only, and no refusal
repeats the path or query.
"""

from __future__ import annotations

import ipaddress

import pytest

from agentjobs.contract.notifications import addresses, targets

HOOKS = targets.parse_patterns(["https://hooks.example.com/*"])


def allowed(url: str, *patterns: str) -> bool:
    try:
        targets.check(url, targets.parse_patterns(patterns))
    except targets.TargetRefused:
        return False
    return True


@pytest.mark.parametrize(
    ("pattern", "url", "expected"),
    [
        ("https://hooks.example.com/*", "https://hooks.example.com/a/b?token=x", True),
        ("https://hooks.example.com/*", "https://HOOKS.example.com/a", True),
        ("https://hooks.example.com/*", "https://hooks.example.com:443/a", True),
        ("https://hooks.example.com:443/*", "https://hooks.example.com/a", True),
        ("https://hooks.example.com/*", "https://hooks.example.com:8443/a", False),
        ("https://hooks.example.com/*", "https://hooks.example.com.evil.test/a", False),
        ("https://hooks.example.com/*", "http://hooks.example.com/a", False),
        ("http://hooks.example.com/*", "https://hooks.example.com/a", False),
        ("http://127.0.0.1:*/*", "http://127.0.0.1:8080/hook", True),
        ("https://*.example.com/*", "https://a.b.example.com/x", True),
        ("https://*.example.com/*", "https://evil.test/.example.com/x", False),
        ("https://*.example.com/*", "https://example.com/x", False),
        ("https://hooks.example.com/ci/*", "https://hooks.example.com/ci/run", True),
        ("https://hooks.example.com/ci/*", "https://hooks.example.com/cd/run", False),
        ("https://hooks.example.com/ci/*", "https://hooks.example.com/ci", False),
        ("https://hooks.example.com", "https://hooks.example.com/", True),
        ("https://hooks.example.com", "https://hooks.example.com", True),
        ("https://hooks.example.com", "https://hooks.example.com/x", False),
        ("https://hooks.example.com/h?k=*", "https://hooks.example.com/h?k=1", True),
        ("https://hooks.example.com/h?k=*", "https://hooks.example.com/hXk=1", False),
        ("https://hooks.example.com/[ab]", "https://hooks.example.com/a", False),
        ("https://[::1]:*/*", "https://[::1]:9000/x", True),
    ],
)
def test_r49_a_pattern_allows_exactly_the_urls_it_spells(
    pattern: str, url: str, expected: bool
) -> None:
    assert allowed(url, pattern) is expected


def test_r49_with_no_pattern_nothing_is_called() -> None:
    with pytest.raises(targets.TargetRefused, match="not allowed by the operator's"):
        targets.check("https://hooks.example.com/a", ())


def test_r49_a_refusal_names_the_scheme_and_host_but_not_the_path_or_query() -> None:
    with pytest.raises(targets.TargetRefused) as refused:
        targets.check("https://other.example.com/SECRET-PATH?token=SECRET-QUERY", HOOKS)
    message = str(refused.value)
    assert "https://other.example.com" in message
    assert "never called" in message
    assert "SECRET" not in message


@pytest.mark.parametrize(
    "pattern",
    [
        "hooks.example.com/*",
        "*://hooks.example.com/*",
        "ftp://hooks.example.com/*",
        "https:///path",
        "https://user@hooks.example.com/*",
        "https://hooks.example.com/*#x",
        "https://hooks.example.com?x=1",
        "https://hooks.example.com/ *",
    ],
)
def test_an_unreadable_pattern_is_refused_when_the_operator_starts(pattern: str) -> None:
    with pytest.raises(ValueError, match="--webhook-allow"):
        targets.parse_pattern(pattern)


@pytest.mark.parametrize(
    ("url", "says"),
    [
        ("https://user:pass@hooks.example.com/a", "user or password"),
        ("https://user@hooks.example.com/a", "user or password"),
        ("https://hooks.example.com/a#frag", "fragment"),
        ("https://hooks.example.com/a b", "spaces"),
        ("https://hooks.example.com/a\n", "control"),
        ("ftp://hooks.example.com/a", "https:// or http://"),
        ("https:///a", "no host"),
        ("https://hooks.example.com:99999/a", "cannot be read"),
        ("https://hooks.example.com/ci/../admin", "segments"),
        ("https://hooks.example.com/ci/./x", "segments"),
        ("https://hooks.example.com/ci/%2e%2e/admin", "encoded"),
        ("https://hooks.example.com/ci%2Fadmin", "encoded"),
        ("https://hooks.example.com/ci\\admin", "segments"),
        ("http://2852039166/latest/meta-data", "four decimal numbers"),
        ("http://0xa9.0xfe.0xa9.0xfe/", "four decimal numbers"),
        ("http://0177.0.0.1/", "four decimal numbers"),
        ("https://hooks_example.com/", "DNS name"),
        ("https://hooks.example.com./", "must not end with '.'"),
        ("https://hooks%2eexample.com/", "percent-encoded"),
        ("https://[not-ipv6]/", "IPv6"),
        ("https://hooks.example.com/" + "a" * 2100, "longer than 2048"),
    ],
)
def test_a_hostile_url_is_refused_with_what_is_wrong(url: str, says: str) -> None:
    with pytest.raises(targets.TargetRefused, match=says):
        targets.parse_target(url)


@pytest.mark.parametrize(
    "url",
    [
        "http://169.254.169.254/latest/meta-data/",
        "http://169.254.170.2/v2/credentials",
        "http://[fe80::1]/",
        "http://[fd00:ec2::254]/",
        "http://[::ffff:169.254.169.254]/",
        "http://100.100.100.200/",
        "http://metadata.google.internal/computeMetadata/v1/",
        "http://metadata/",
        "http://0.0.0.0:8080/",
        "http://224.0.0.1/",
        "http://255.255.255.255/",
    ],
)
def test_r49_link_local_and_metadata_targets_are_refused_even_when_a_pattern_matches(
    url: str,
) -> None:
    assert not allowed(url, "http://*/*", "http://*:*/*")
    with pytest.raises(targets.TargetRefused, match="never calls it"):
        targets.parse_target(url)


@pytest.mark.parametrize(
    ("address", "forbidden"),
    [
        ("169.254.1.1", True),
        ("fe80::abcd", True),
        ("::ffff:169.254.169.254", True),
        ("fd00:ec2::254", True),
        ("127.0.0.1", True),
        ("::1", True),
        ("10.1.2.3", False),
        ("93.184.216.34", False),
    ],
)
def test_resolved_addresses_are_judged_by_the_same_rule(address: str, forbidden: bool) -> None:
    assert (addresses.refusal(ipaddress.ip_address(address)) is not None) is forbidden
    assert (targets.forbidden_host(address) is not None) is forbidden


@pytest.mark.parametrize(
    ("address", "embedded"),
    [
        ("::ffff:169.254.169.254", ["169.254.169.254"]),  # IPv4-mapped
        ("::ffff:0:a9fe:a9fe", ["169.254.169.254"]),  # IPv4-translated (SIIT)
        ("::169.254.169.254", ["169.254.169.254"]),  # IPv4-compatible
        ("::1", []),  # IPv6's own loopback, not 0.0.0.1
        ("::", []),
        ("64:ff9b::a9fe:a9fe", ["169.254.169.254"]),  # NAT64, well-known prefix
        ("64:ff9b::127.0.0.1", ["127.0.0.1"]),
        ("64:ff9b:1:a9fe:a9:fe00::", ["169.254.169.254"]),  # local-use NAT64 as a /48
        ("64:ff9b:1:a9:fe:a9fe::", ["169.254.169.254"]),  # ... as a /56
        ("64:ff9b:1:0:a9:fea9:fe00:0", ["169.254.169.254"]),  # ... as a /64
        ("64:ff9b:1::a9fe:a9fe", ["169.254.169.254"]),  # ... as a /96
        ("2002:a9fe:a9fe::1", ["169.254.169.254"]),  # 6to4
        ("2001:0:4136:e378:8000:63bf:5601:5601", ["65.54.227.120", "169.254.169.254"]),  # Teredo
        ("2001:db8::5efe:a9fe:a9fe", ["169.254.169.254"]),  # ISATAP
        ("2001:db8::200:5efe:7f00:1", ["127.0.0.1"]),
        ("2606:4700::1111", []),
        ("fd00:ec2::254", []),
    ],
)
def test_r59_every_ipv6_form_that_embeds_an_ipv4_address_is_mapped_to_it(
    address: str, embedded: list[str]
) -> None:
    found = addresses.embedded_ipv4(ipaddress.IPv6Address(address))
    assert set(embedded) <= {str(v4) for v4 in found}
    if not embedded:
        assert found == ()


@pytest.mark.parametrize(
    "url",
    [
        "http://[64:ff9b::a9fe:a9fe]/latest/meta-data/",
        "http://[64:ff9b::169.254.169.254]/",
        "http://[64:ff9b:1::a9fe:a9fe]/",
        "http://[64:ff9b:1:a9fe:a9:fe00::]/",
        "http://[64:ff9b:1:a9:fe:a9fe::]/",
        "http://[64:ff9b:1:0:a9:fea9:fe00:0]/",
        "http://[2002:a9fe:a9fe::]/",
        "http://[::169.254.169.254]/",
        "http://[::ffff:0:a9fe:a9fe]/",
        "http://[2001:0:4136:e378:8000:63bf:5601:5601]/",
        "http://[64:ff9b::6464:64c8]/",  # Alibaba's 100.100.100.200
        "http://[64:ff9b::e000:1]/",  # multicast 224.0.0.1
        "http://0.1.2.3/",
    ],
)
def test_r59_an_ipv6_form_of_a_forbidden_ipv4_address_is_refused_under_a_broad_pattern(
    url: str,
) -> None:
    assert not allowed(url, "http://*/*", "http://*:*/*")
    with pytest.raises(targets.TargetRefused, match="never calls it"):
        targets.parse_target(url)


@pytest.mark.parametrize(
    ("url", "patterns", "expected"),
    [
        ("http://127.0.0.1:8080/h", ["http://*:*/*"], False),
        ("http://127.0.0.1:8080/h", ["http://*/*"], False),
        ("http://127.0.0.1:8080/h", ["http://127.0.0.*:*/*"], False),
        ("http://127.0.0.2:8080/h", ["http://*:*/*"], False),
        ("http://[::1]:8080/h", ["http://*:*/*"], False),
        ("http://[::ffff:127.0.0.1]:8080/h", ["http://*:*/*"], False),
        ("http://[64:ff9b::7f00:1]:8080/h", ["http://*:*/*"], False),
        ("http://localhost:8080/h", ["http://*:*/*"], False),
        ("http://a.localhost:8080/h", ["http://*:*/*"], False),
        ("http://127.0.0.1:8080/h", ["http://127.0.0.1:*/*"], True),
        ("http://127.0.0.1:8080/h", ["http://127.0.0.1:8080/*"], True),
        ("http://127.0.0.1:8080/h", ["http://*:*/*", "http://127.0.0.1:*/*"], True),
        ("http://[::1]:8080/h", ["http://[::1]:*/*"], True),
        ("http://localhost:8080/h", ["http://localhost:*/*"], True),
        ("http://10.0.0.5:8080/h", ["http://*:*/*"], True),
    ],
)
def test_r59_loopback_is_called_only_where_a_matching_pattern_names_it(
    url: str, patterns: list[str], expected: bool
) -> None:
    assert allowed(url, *patterns) is expected


def test_r59_a_target_judges_what_its_name_resolves_to_by_its_own_patterns() -> None:
    broad = targets.check("http://hooks.example.com/h", targets.parse_patterns(["http://*/*"]))
    assert broad.forbidden("127.0.0.1") is not None
    assert broad.forbidden("::ffff:127.0.0.1") is not None
    assert broad.forbidden("64:ff9b::a9fe:a9fe") is not None
    assert broad.forbidden("10.0.0.5") is None
    named = targets.check("http://localhost:9/h", targets.parse_patterns(["http://localhost:*/*"]))
    assert named.forbidden("127.0.0.1") is None and named.forbidden("::1") is None
    assert named.forbidden("169.254.169.254") is not None


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("https://hooks.example.com/T0KEN?secret=1", "hooks.example.com"),
        ("https://hooks.example.com:8443/T0KEN", "hooks.example.com:8443"),
        ("https://hooks.example.com:443/T0KEN", "hooks.example.com"),
        ("http://[::1]:9000/T0KEN", "[::1]:9000"),
    ],
)
def test_r51_the_target_shown_is_the_host_and_port_only(url: str, shown: str) -> None:
    target = targets.parse_target(url)
    assert target.authority == shown
    assert target.url == url  # sent exactly as checked
