"""Keys (pure): how they are made, hashed at rest and compared."""

from __future__ import annotations

import hashlib
import re

from chalicelib.auth.keys import generate_key, hash_key, same_hash


def test_generated_keys_are_prefixed_urlsafe_and_unguessable() -> None:
    keys = {generate_key() for _ in range(50)}
    assert len(keys) == 50
    for key in keys:
        assert re.fullmatch(r"rp_[A-Za-z0-9_-]{43}", key), key  # 32 random bytes, base64url


def test_hash_key_is_the_sha256_of_the_utf8_key() -> None:
    assert hash_key("rp_é") == hashlib.sha256("rp_é".encode()).hexdigest()


def test_same_hash() -> None:
    digest = hash_key("rp_a")
    assert same_hash(digest, hash_key("rp_a")) is True
    assert same_hash(digest, hash_key("rp_b")) is False
    assert same_hash(digest, digest[:-1]) is False


def test_an_unknown_key_target_names_the_known_ones() -> None:
    import pytest

    from chalicelib.auth.principals import key_principal_name

    # The operator's CLI prints this message: it must list what they may type.
    with pytest.raises(ValueError, match=r"expected one of k8s, slurm, service, placement$"):
        key_principal_name("nope")
