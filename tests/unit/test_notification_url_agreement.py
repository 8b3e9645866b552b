"""R49: the allow-list and the sender read a URL's host the same way.

A URL that two parsers read differently is the classic way round an
allow-list: the check judges one host and the client connects to another.
Cases (generated): for any string built from a host the patterns allow and
characters that confuse parsers (`@ \\ # ? / : [ ] %` and spaces), if the
check admits it, the URL library the sender uses (yarl, with the URL sent
unchanged) finds the same host and port.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from yarl import URL

from agentjobs.contract.notifications import targets

ALLOWED = targets.parse_patterns(["https://hooks.example.com/*", "http://127.0.0.1:*/*"])
TRICKY = st.sampled_from([*"@\\#?/:[]%. ", "%2e", "%40", "evil.test", "80", "a"])
PREFIXES = st.sampled_from(
    ["https://hooks.example.com", "http://127.0.0.1:8080", "https://", "http://", ""]
)


@settings(max_examples=1000, deadline=None)
@given(prefix=PREFIXES, rest=st.lists(TRICKY, max_size=12).map("".join))
def test_r49_an_admitted_url_is_read_with_the_same_host_by_the_sender(
    prefix: str, rest: str
) -> None:
    url = prefix + rest
    try:
        target = targets.check(url, ALLOWED)
    except targets.TargetRefused:
        return
    sent = URL(url, encoded=True)
    assert sent.host == target.host
    assert sent.scheme == target.scheme
    assert (sent.explicit_port if target.port else None) == target.port
