"""The credentials endpoint's TLS certificate, when no certificate files are given.

The certificate and its CA are derived from a seed (the operator's own secret):
Ed25519 signatures are deterministic, and the dates and serial numbers are
fixed, so every replica and every restart serves the very same certificate,
and the CA handed to a pod before a restart or a change of leader still
verifies the endpoint after it. No cert-manager is needed.
"""

from __future__ import annotations

import hashlib
import ipaddress
import ssl
import tempfile
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.x509.oid import NameOID

NOT_BEFORE = datetime(2024, 1, 1, tzinfo=UTC)
NOT_AFTER = datetime(2124, 1, 1, tzinfo=UTC)


@dataclass(frozen=True)
class TlsIdentity:
    """The server's certificate chain and key (PEM), and the CA certificate clients trust."""

    cert_pem: bytes
    key_pem: bytes
    ca_pem: str

    def server_context(self) -> ssl.SSLContext:
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.minimum_version = ssl.TLSVersion.TLSv1_2
        # ssl loads a key from files only: they live in a private directory for this call,
        # so no private key stays on disk (each start used to leave one in /tmp).
        with tempfile.TemporaryDirectory(prefix="agentjobs-tls-") as directory:
            cert_file, key_file = Path(directory) / "tls.crt", Path(directory) / "tls.key"
            cert_file.write_bytes(self.cert_pem)
            key_file.touch(mode=0o600)
            key_file.write_bytes(self.key_pem)
            context.load_cert_chain(cert_file, key_file)
        return context


def from_files(cert_file: Path, key_file: Path, ca_file: Path | None) -> TlsIdentity:
    """An admin's certificate; clients trust ``ca_file`` if there is one (a TLS Secret's
    ``ca.crt`` is optional), else the certificate itself."""
    trusted = ca_file if ca_file is not None and ca_file.exists() else cert_file
    return TlsIdentity(cert_file.read_bytes(), key_file.read_bytes(), trusted.read_text())


def _name(common_name: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


def _subject_names(hosts: list[str]) -> list[x509.GeneralName]:
    names: list[x509.GeneralName] = []
    for host in dict.fromkeys([*hosts, "localhost", "127.0.0.1", "::1"]):
        try:
            names.append(x509.IPAddress(ipaddress.ip_address(host)))
        except ValueError:
            names.append(x509.DNSName(host))
    return names


def _key(seed: bytes, purpose: str) -> Ed25519PrivateKey:
    return Ed25519PrivateKey.from_private_bytes(hashlib.sha256(seed + purpose.encode()).digest())


def derived(seed: bytes, hosts: list[str]) -> TlsIdentity:
    """A CA and a server certificate for ``hosts``, both derived from ``seed``."""
    ca_key, server_key = _key(seed, "/ca"), _key(seed, "/server")
    ca_name = _name("agentjobs credentials CA")
    ca = (
        x509.CertificateBuilder()
        .subject_name(ca_name)
        .issuer_name(ca_name)
        .public_key(ca_key.public_key())
        .serial_number(1)
        .not_valid_before(NOT_BEFORE)
        .not_valid_after(NOT_AFTER)
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .sign(ca_key, None)
    )
    server = (
        x509.CertificateBuilder()
        .subject_name(_name("agentjobs credentials"))
        .issuer_name(ca_name)
        .public_key(server_key.public_key())
        .serial_number(2)
        .not_valid_before(NOT_BEFORE)
        .not_valid_after(NOT_AFTER)
        .add_extension(x509.SubjectAlternativeName(_subject_names(hosts)), critical=False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .sign(ca_key, None)
    )
    pem = serialization.Encoding.PEM
    key_pem = server_key.private_bytes(
        pem, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    chain = server.public_bytes(pem) + ca.public_bytes(pem)
    return TlsIdentity(chain, key_pem, ca.public_bytes(pem).decode())
