"""Environment resolution and `$(VAR)` expansion follow Kubernetes' rules."""

from __future__ import annotations

import asyncio
import base64
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from devcluster.node.envvars import (
    ContainerConfigError,
    expand,
    expand_command,
    resolve_environment,
)
from devcluster.node.quantity import divide_rounding_up, parse_quantity

Obj = dict[str, Any]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("$(A)", "1"),
        ("x$(A)y$(B)z", "x1y2z"),
        ("$$(A)", "$(A)"),
        ("$(MISSING)", "$(MISSING)"),
        ("$(A", "$(A"),
        ("$A", "$A"),
        ("end$", "end$"),
        ("$$$$", "$$"),
    ],
)
def test_expand(text: str, expected: str) -> None:
    assert expand(text, {"A": "1", "B": "2"}.get) == expected


@given(st.text(alphabet=st.characters(blacklist_characters="$")))
def test_text_without_dollar_is_unchanged(text: str) -> None:
    assert expand(text, lambda _: "X") == text


class FakeSource:
    def __init__(self, secrets: dict[str, Obj], config_maps: dict[str, Obj]) -> None:
        self.secrets, self.config_maps = secrets, config_maps

    async def get_secret(self, namespace: str, name: str) -> Obj | None:
        return self.secrets.get(name)

    async def get_config_map(self, namespace: str, name: str) -> Obj | None:
        return self.config_maps.get(name)


def _pod(container: Obj) -> Obj:
    return {
        "metadata": {"name": "p", "namespace": "ns", "uid": "u-1", "labels": {"app": "x"}},
        "spec": {"nodeName": "devnode", "serviceAccountName": "sa", "containers": [container]},
    }


def _resolve(container: Obj, source: FakeSource | None = None) -> dict[str, str]:
    return asyncio.run(
        resolve_environment(
            _pod(container),
            container,
            source or FakeSource({}, {}),
            {"SVC": "s"},
            "127.0.0.1",
            {"cpu": "2", "memory": "1Gi"},
        )
    )


SECRET = {"data": {"token": base64.b64encode(b"t0p").decode()}}


def test_values_sources_and_dependent_expansion() -> None:
    container = {
        "name": "main",
        "resources": {"limits": {"memory": "64Mi"}, "requests": {"cpu": "250m"}},
        "envFrom": [{"configMapRef": {"name": "cm"}, "prefix": "CM_"}],
        "env": [
            {"name": "A", "value": "a"},
            {"name": "B", "value": "$(A)-$(SVC)-$(CM_k)"},
            {"name": "TOKEN", "valueFrom": {"secretKeyRef": {"name": "s", "key": "token"}}},
            {"name": "POD", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
            {"name": "APP", "valueFrom": {"fieldRef": {"fieldPath": "metadata.labels['app']"}}},
            {"name": "IP", "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}},
            {
                "name": "MEM",
                "valueFrom": {"resourceFieldRef": {"resource": "limits.memory", "divisor": "1Mi"}},
            },
            {"name": "CPU", "valueFrom": {"resourceFieldRef": {"resource": "requests.cpu"}}},
            {"name": "CPU_LIMIT", "valueFrom": {"resourceFieldRef": {"resource": "limits.cpu"}}},
        ],
    }
    env = _resolve(container, FakeSource({"s": SECRET}, {"cm": {"data": {"k": "v"}}}))
    assert env["B"] == "a-s-v"
    assert env["TOKEN"] == "t0p"
    assert (env["POD"], env["APP"], env["IP"]) == ("p", "x", "127.0.0.1")
    assert (env["MEM"], env["CPU"], env["CPU_LIMIT"]) == ("64", "1", "2")


def test_missing_secret_message_matches_kubelet() -> None:
    container = {
        "name": "m",
        "env": [{"name": "T", "valueFrom": {"secretKeyRef": {"name": "x", "key": "k"}}}],
    }
    with pytest.raises(ContainerConfigError, match=r'^secret "x" not found$'):
        _resolve(container)


def test_missing_key_and_optional_sources() -> None:
    missing_key = {
        "name": "m",
        "env": [{"name": "T", "valueFrom": {"secretKeyRef": {"name": "s", "key": "nope"}}}],
    }
    with pytest.raises(ContainerConfigError, match="couldn't find key nope in Secret ns/s"):
        _resolve(missing_key, FakeSource({"s": SECRET}, {}))
    optional = {
        "name": "m",
        "envFrom": [{"secretRef": {"name": "gone", "optional": True}}],
        "env": [
            {
                "name": "C",
                "valueFrom": {"configMapKeyRef": {"name": "gone", "key": "k", "optional": True}},
            }
        ],
    }
    assert "C" not in _resolve(optional)
    with pytest.raises(ContainerConfigError, match='configmap "cm" not found'):
        _resolve({"name": "m", "envFrom": [{"configMapRef": {"name": "cm"}}]})


def test_command_expansion_uses_the_environment() -> None:
    assert expand_command(["echo", "$(A)", "$$(A)", "$(B)"], {"A": "1"}) == [
        "echo",
        "1",
        "$(A)",
        "$(B)",
    ]


@pytest.mark.parametrize(
    ("text", "value"),
    [("500m", "0.5"), ("1Gi", str(2**30)), ("1e3", "1000"), ("2k", "2000"), ("3", "3")],
)
def test_quantities(text: str, value: str) -> None:
    assert parse_quantity(text) == parse_quantity(value)


def test_rounding_up_like_the_downward_api() -> None:
    assert divide_rounding_up(parse_quantity("250m"), parse_quantity("1")) == 1
    assert divide_rounding_up(parse_quantity("64Mi"), parse_quantity("1Mi")) == 64
