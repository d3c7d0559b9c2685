"""Account-name rules per Site (pure), on top of the contract's AccountName pattern.

- k8s: `member-` followed by a DNS-1123 label remainder (lowercase
  alphanumerics and `-`, ending alphanumeric); the whole name at most 63
  characters, so it is itself a valid DNS-1123 label.
- slurm: a POSIX login name: lowercase letters, digits, `.`, `_`, `-`; at
  most 32 characters; not starting with a digit or `-`.

The name is the Site's fact, never derived from the Party: these rules only
refuse names the Site could not have made.
"""

from __future__ import annotations

import re

_K8S = re.compile(r"member-[a-z0-9-]*[a-z0-9]", re.ASCII)
_K8S_MAX = 63
_SLURM = re.compile(r"[a-z._][a-z0-9._-]*", re.ASCII)
_SLURM_MAX = 32


def valid_account_reference(site: str, name: str) -> bool:
    if site == "k8s":
        return len(name) <= _K8S_MAX and _K8S.fullmatch(name) is not None
    if site == "slurm":
        return len(name) <= _SLURM_MAX and _SLURM.fullmatch(name) is not None
    return False
