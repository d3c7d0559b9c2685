"""The policy as the settings name it: the mode and the operator's override file, read once.

The file is oslo.policy's `policy.yaml` form: a mapping of rule name to check string (JSON, being
YAML, reads too). A file that cannot be read or is not such a mapping is a ConfigurationError naming
RP_PLACEMENT_POLICY_FILE and what is wrong, never the file's content.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from chalicelib.config import ConfigurationError, PlacementAuthSettings
from chalicelib.placement.policy.enforcer import Mode, PlacementPolicy

FILE_VARIABLE = "RP_PLACEMENT_POLICY_FILE"
MAX_FILE_BYTES = 1 << 20


def read_overrides(path: str | Path) -> dict[str, str]:
    """rule -> check string from a policy.yaml; an empty file overrides nothing."""
    try:
        raw = Path(path).read_bytes()
    except OSError:
        raise ConfigurationError(f"{FILE_VARIABLE} names a file that cannot be read") from None
    if len(raw) > MAX_FILE_BYTES:
        raise ConfigurationError(f"{FILE_VARIABLE} names a file over {MAX_FILE_BYTES} bytes")
    import yaml  # here: only a deployment with an override file pays for the YAML parser

    try:
        document: Any = yaml.safe_load(raw)
    except yaml.YAMLError:
        # from None: a YAML error quotes the offending lines.
        raise ConfigurationError(f"{FILE_VARIABLE} names a file that is not YAML") from None
    if document is None:
        return {}
    if not isinstance(document, dict):
        raise ConfigurationError(f"{FILE_VARIABLE} must hold a mapping of rule names to check strings")
    overrides: dict[str, str] = {}
    for name, check in document.items():
        if not isinstance(name, str) or not isinstance(check, str):
            raise ConfigurationError(f"{FILE_VARIABLE}: every rule name and check string must be a string")
        overrides[name] = check
    return overrides


def load_policy(settings: PlacementAuthSettings) -> PlacementPolicy:
    """The policy the settings name (call once, on the first Placement request, and keep it)."""
    overrides = read_overrides(settings.policy_file) if settings.policy_file else {}
    mode: Mode = "legacy" if settings.policy_mode == "legacy" else "secure"
    return PlacementPolicy(mode, overrides)
