"""Certificates and kubeconfigs for the local cluster, generated once with `cryptography`."""

from __future__ import annotations

import base64
import datetime
import ipaddress
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import yaml
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

# Long enough that a cached cluster never outlives its certificates.
VALIDITY = datetime.timedelta(days=3650)
CA_NAME = "ca"
SERVICE_ACCOUNT_KEY = "service-account"


@dataclass(frozen=True)
class Leaf:
    """A certificate signed by the cluster CA."""

    name: str
    common_name: str
    organization: str | None = None
    server: bool = False
    dns_names: Sequence[str] = field(default_factory=tuple)
    ip_addresses: Sequence[str] = field(default_factory=tuple)


def _new_key() -> ec.EllipticCurvePrivateKey:
    # P-256 keys are generated instantly and every Kubernetes component accepts them.
    return ec.generate_private_key(ec.SECP256R1())


def _write_private_key(path: Path, key: ec.EllipticCurvePrivateKey) -> None:
    pem = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "wb") as file:
        file.write(pem)


def _name(common_name: str, organization: str | None) -> x509.Name:
    attributes = [x509.NameAttribute(NameOID.COMMON_NAME, common_name)]
    if organization is not None:
        attributes.insert(0, x509.NameAttribute(NameOID.ORGANIZATION_NAME, organization))
    return x509.Name(attributes)


def _load_ca(pki: Path) -> tuple[x509.Certificate, ec.EllipticCurvePrivateKey]:
    certificate = x509.load_pem_x509_certificate((pki / f"{CA_NAME}.crt").read_bytes())
    key = serialization.load_pem_private_key((pki / f"{CA_NAME}.key").read_bytes(), None)
    if not isinstance(key, ec.EllipticCurvePrivateKey):
        raise TypeError(f"{pki / CA_NAME}.key is not an EC private key")
    return certificate, key


def _create_ca(pki: Path) -> None:
    key = _new_key()
    name = _name("agentjobs-devcluster-ca", None)
    now = datetime.datetime.now(datetime.UTC)
    certificate = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + VALIDITY)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=True,
                crl_sign=True,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
        .sign(key, hashes.SHA256())
    )
    _write_private_key(pki / f"{CA_NAME}.key", key)
    (pki / f"{CA_NAME}.crt").write_bytes(certificate.public_bytes(serialization.Encoding.PEM))


def _create_leaf(pki: Path, leaf: Leaf) -> None:
    ca_certificate, ca_key = _load_ca(pki)
    key = _new_key()
    now = datetime.datetime.now(datetime.UTC)
    usage = ExtendedKeyUsageOID.SERVER_AUTH if leaf.server else ExtendedKeyUsageOID.CLIENT_AUTH
    builder = (
        x509.CertificateBuilder()
        .subject_name(_name(leaf.common_name, leaf.organization))
        .issuer_name(ca_certificate.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + VALIDITY)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.ExtendedKeyUsage([usage]), critical=False)
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()),
            critical=False,
        )
    )
    alternative_names: list[x509.GeneralName] = [x509.DNSName(name) for name in leaf.dns_names]
    alternative_names += [
        x509.IPAddress(ipaddress.ip_address(address)) for address in leaf.ip_addresses
    ]
    if alternative_names:
        builder = builder.add_extension(
            x509.SubjectAlternativeName(alternative_names), critical=False
        )
    certificate = builder.sign(ca_key, hashes.SHA256())
    _write_private_key(pki / f"{leaf.name}.key", key)
    (pki / f"{leaf.name}.crt").write_bytes(certificate.public_bytes(serialization.Encoding.PEM))


def _create_service_account_keypair(pki: Path) -> None:
    key = _new_key()
    _write_private_key(pki / f"{SERVICE_ACCOUNT_KEY}.key", key)
    public = key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    (pki / f"{SERVICE_ACCOUNT_KEY}.pub").write_bytes(public)


def _alternative_names(leaf: Leaf) -> set[str]:
    return {f"DNS:{name}" for name in leaf.dns_names} | {
        f"IP:{ipaddress.ip_address(address)}" for address in leaf.ip_addresses
    }


def _issued_as(pki: Path, leaf: Leaf) -> bool:
    """Whether the leaf's certificate exists with the leaf's subject and names (a cluster
    state directory may predate a name added since)."""
    path = pki / f"{leaf.name}.crt"
    if not path.exists():
        return False
    certificate = x509.load_pem_x509_certificate(path.read_bytes())
    try:
        extension = certificate.extensions.get_extension_for_class(x509.SubjectAlternativeName)
        alternative = extension.value
        names = {f"DNS:{name}" for name in alternative.get_values_for_type(x509.DNSName)}
        names |= {f"IP:{address}" for address in alternative.get_values_for_type(x509.IPAddress)}
    except x509.ExtensionNotFound:
        names = set()
    subject = certificate.subject == _name(leaf.common_name, leaf.organization)
    return subject and names == _alternative_names(leaf)


def ensure_pki(pki: Path, leaves: Sequence[Leaf]) -> None:
    """Create the CA, the service-account keypair and every leaf not issued as described."""
    pki.mkdir(parents=True, exist_ok=True)
    if not (pki / f"{CA_NAME}.crt").exists():
        _create_ca(pki)
    if not (pki / f"{SERVICE_ACCOUNT_KEY}.pub").exists():
        _create_service_account_keypair(pki)
    for leaf in leaves:
        if not _issued_as(pki, leaf):
            _create_leaf(pki, leaf)


def _base64_file(path: Path) -> str:
    return base64.b64encode(path.read_bytes()).decode("ascii")


def write_kubeconfig(path: Path, server: str, pki: Path, client: str) -> None:
    """Write a self-contained kubeconfig that authenticates with the client certificate `client`,
    unless the file already says exactly that."""
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [
            {
                "name": "devcluster",
                "cluster": {
                    "server": server,
                    "certificate-authority-data": _base64_file(pki / f"{CA_NAME}.crt"),
                },
            }
        ],
        "users": [
            {
                "name": client,
                "user": {
                    "client-certificate-data": _base64_file(pki / f"{client}.crt"),
                    "client-key-data": _base64_file(pki / f"{client}.key"),
                },
            }
        ],
        "contexts": [{"name": "devcluster", "context": {"cluster": "devcluster", "user": client}}],
        "current-context": "devcluster",
    }
    text = yaml.safe_dump(config, sort_keys=False)
    if path.exists() and path.read_text() == text:
        return
    # Replaced whole, since running components may read it at any moment.
    partial = path.with_name(path.name + ".partial")
    descriptor = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "w") as file:
        file.write(text)
    os.replace(partial, path)
