"""R54: the names the operator derives are valid for their kind and never shared.

Cases: a common name stays `<execution>-<index>-<phase>`, even when the execution's
name has numbers in it; Execution `a` with phase `b-0-c` and Execution `a-0-b` with
phase `c` get two Phases; an execution named with dots up to the length limit gets a
Phase name without `.-`; every derived name (Phase, pods, ConfigMaps, Secrets, label
values) is valid for its kind, for any execution and phase name the API server admits
(a property test over names made of digits, dashes and dots, up to their limits); no
two (execution, index, phase) give one Phase name, for names drawn at random and for
names made to read alike (every split of one string into execution, index and phase).
"""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from agentjobs.kube import naming
from agentjobs.models.kubernetes import DNS_LABEL, DNS_SUBDOMAIN

LABEL_VALUE = r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$"
MAX_ATTEMPT = 11 * 20  # every retry of every revision
UID = "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0"
TOKENS = ["0", "1", "7", "10", "01", "a", "a1", "0a", "b", "x"]


def _label(alphabet: str, most: int) -> st.SearchStrategy[str]:
    return st.text(alphabet, min_size=1, max_size=most).filter(
        lambda text: re.fullmatch(DNS_LABEL, text) is not None
    )


def _sized_label(size: int, pattern: str) -> str:
    """A label of ``size`` characters repeating ``pattern``, ending with a letter or digit."""
    return ((pattern * size)[: size - 1] + "7") if size > 1 else "7"


def _subdomain() -> st.SearchStrategy[str]:
    small = st.lists(_label("01a-", 63), min_size=1, max_size=6).map(".".join)
    # Long names whose dots and dashes fall anywhere, up to the limit.
    sized = st.lists(
        st.builds(_sized_label, st.integers(1, 63), st.sampled_from(["a", "1", "a-1", "0-", "-"])),
        min_size=1,
        max_size=6,
    ).map(lambda labels: ".".join(labels)[:253].rstrip("-."))
    return st.one_of(small, sized).filter(
        lambda name: 0 < len(name) <= 253 and re.fullmatch(DNS_SUBDOMAIN, name) is not None
    )


EXECUTIONS = _subdomain()
PHASES = _label("01a-", 40)
INDICES = st.integers(min_value=0, max_value=31)
TRIPLES = st.tuples(EXECUTIONS, INDICES, PHASES)


def _valid_subdomain(name: str, most: int = 253) -> bool:
    return len(name) <= most and re.fullmatch(DNS_SUBDOMAIN, name) is not None


def test_a_common_name_stays_execution_index_phase() -> None:
    assert naming.phase_resource("demo", 0, "plan") == "demo-0-plan"
    assert naming.phase_resource("chaos-100", 1, "p0") == "chaos-100-1-p0"
    assert naming.phase_resource("release.notes-2024", 3, "step0") == "release.notes-2024-3-step0"


def test_two_executions_whose_names_read_alike_get_two_phases() -> None:
    first = naming.phase_resource("a", 0, "b-0-c")
    second = naming.phase_resource("a-0-b", 0, "c")
    assert first != second
    assert second == "a-0-b-0-c"
    assert first.startswith("a-0-b-0-c-") and _valid_subdomain(first, 55)


def test_a_dotted_name_at_the_limit_gives_a_valid_phase_name() -> None:
    for cut in range(30, 60):
        execution = ("a" * cut + "." + "b" * 60)[:253]
        name = naming.phase_resource(execution, 0, "review")
        assert _valid_subdomain(name, 55), name
        assert ".-" not in name and "-." not in name


@settings(max_examples=500)
@given(TRIPLES, st.integers(min_value=1, max_value=MAX_ATTEMPT))
def test_every_derived_name_is_valid_for_its_kind(
    triple: tuple[str, int, str], attempt: int
) -> None:
    execution, index, phase = triple
    resource = naming.phase_resource(execution, index, phase)
    assert _valid_subdomain(resource, 55), resource  # also a label value of its pods
    assert re.fullmatch(LABEL_VALUE, resource)
    label = naming.label_value(execution)
    assert len(label) <= 63 and re.fullmatch(LABEL_VALUE, label), label
    for pod in (naming.pod(resource, attempt), naming.grader_pod(resource, attempt)):
        assert _valid_subdomain(pod, 63), pod
        assert _valid_subdomain(naming.pod_config_map(pod)), pod
    assert _valid_subdomain(naming.prompt_config_map(resource))
    assert _valid_subdomain(naming.storage_secret(resource, UID, attempt))
    assert _valid_subdomain(naming.grader_storage_secret(resource, UID, attempt))


@settings(max_examples=500)
@given(st.lists(TRIPLES, min_size=2, max_size=40, unique=True))
def test_no_two_inputs_share_a_phase_name(triples: list[tuple[str, int, str]]) -> None:
    names = [naming.phase_resource(*triple) for triple in triples]
    assert len(set(names)) == len(names)


@settings(max_examples=1000)
@given(st.lists(st.sampled_from(TOKENS), min_size=3, max_size=12), INDICES)
def test_no_two_splits_of_one_string_share_a_phase_name(tokens: list[str], extra: int) -> None:
    """Every way of reading ``tokens`` joined by '-' as <execution>-<index>-<phase>."""
    tokens = [*tokens, str(extra), *tokens]
    triples = {
        ("-".join(tokens[:at]), int(tokens[at]), "-".join(tokens[at + 1 :]))
        for at in range(1, len(tokens) - 1)
        if re.fullmatch(r"0|[1-9][0-9]*", tokens[at]) and int(tokens[at]) <= 31
    }
    admitted = [
        (e, i, p) for e, i, p in triples
        if re.fullmatch(DNS_SUBDOMAIN, e) and len(p) <= 40 and re.fullmatch(DNS_LABEL, p)
    ]  # fmt: skip
    names = [naming.phase_resource(*triple) for triple in admitted]
    assert len(set(names)) == len(names)
