"""Whose problem a refused create is: the phase's (the cluster's policy) or the operator's.

When the API server refuses the pod, ConfigMap or Secret of a phase, the Status
says why. Admission (PodSecurity, a ResourceQuota, an admission webhook, a
ValidatingAdmissionPolicy) and the API's own validation judge the object the
phase asked for: retrying cannot change their answer, so the phase ends blocked
with the denial's own words; so does an object too large for the API server or
etcd. Only the authorizer judges the operator: its
``User "..." cannot create resource ...`` refusal means the operator lacks RBAC,
which an admin can grant while the operator retries. A quota whose usage the
quota controller has not counted yet is also retried: it passes within seconds.
"""

from __future__ import annotations

import re

from agentjobs.models.contract import FailureKind, SystemFailure

# The authorizer's refusal (k8s.io/apiserver/pkg/endpoints/handlers/responsewriters
# forbiddenMessage): `<resource> ["<name>"] is forbidden: User "<user>" cannot <verb> ...`.
_RBAC_DENIAL = re.compile(r' is forbidden: User ".*" cannot [a-z]+ resource ')
# Quota admission before the quota controller has written the quota's usage.
_QUOTA_NOT_COUNTED = "status unknown for quota"
_QUOTA_EXCEEDED = "exceeded quota"
# What admission plugins say whatever HTTP status they choose: a webhook may answer with any
# code of 400 or more, a ValidatingAdmissionPolicy with the reason its author picked.
_ADMISSION_DENIALS = ("admission webhook ", "ValidatingAdmissionPolicy ")
# R57: an object too large for etcd (a 500) is refused as surely as one over the request
# limit (413): a revision's feedback, say, that no retry makes smaller.
_TOO_LARGE = "request is too large"


def is_operator_permission(*, code: int, message: str) -> bool:
    """True when the authorizer refused the operator's own request (grant RBAC)."""
    return code == 403 and _RBAC_DENIAL.search(message) is not None


def refusal_blocker(*, code: int, reason: str, message: str, subject: str) -> SystemFailure | None:
    """The phase's blocker for a create refused with this Status, or None to retry it.

    ``subject`` names what was refused ("pod", "ConfigMap"), for the message.
    None covers the operator's missing permissions, an uncounted quota, and every
    answer that is not a refusal of the object (a conflict, an outage, a throttle).
    """
    admission = any(form in message for form in _ADMISSION_DENIALS)
    if is_operator_permission(code=code, message=message) or _QUOTA_NOT_COUNTED in message:
        return None
    too_large = code == 413 or _TOO_LARGE in message
    if not (admission or too_large or code in (400, 403, 422)):
        return None
    exceeded = code == 403 and _QUOTA_EXCEEDED in message
    return SystemFailure(
        kind=FailureKind.QUOTA if exceeded else FailureKind.CONFIG,
        code="QuotaExceeded" if exceeded else _code(code, reason, admission),
        message=f"the phase's {subject} was refused: {message}",
    )


def _code(code: int, reason: str, admission: bool) -> str:
    if admission or code == 403:
        return "AdmissionDenied"
    return reason or "Invalid"
