"""make run's key checks (devkit/keys.py): pure, over an environment mapping."""

import pytest

from devkit.keys import KEY_VARIABLES, MIN_KEY_LENGTH, configured_keys, key_problems

GOOD = {"RP_SITE_KEY_K8S": "k" * MIN_KEY_LENGTH, "RP_SITE_KEY_SLURM": "s" * 40, "RP_SERVICE_KEY": "v" * 64}


def test_distinct_long_keys_have_no_problem():
    assert key_problems(GOOD) == []


def test_unset_and_empty_variables_are_not_configured():
    assert configured_keys({"RP_SITE_KEY_K8S": "", "RP_SERVICE_KEY": "v" * 20, "OTHER": "x"}) == {
        "RP_SERVICE_KEY": "v" * 20}
    assert key_problems({}) == []


@pytest.mark.parametrize("variable", sorted(KEY_VARIABLES.values()))
def test_a_key_one_character_short_is_a_problem(variable):
    short = "a" * (MIN_KEY_LENGTH - 1)
    problems = key_problems({**GOOD, variable: short})
    assert problems == [f"{variable} is {MIN_KEY_LENGTH - 1} characters long; a key needs at least {MIN_KEY_LENGTH}"]


def test_each_pair_sharing_a_key_is_named_without_the_key():
    shared = "the-same-key-for-all-four"
    problems = key_problems(dict.fromkeys(KEY_VARIABLES.values(), shared))
    assert problems == [
        "RP_SITE_KEY_K8S and RP_SITE_KEY_SLURM hold the same key; each principal needs its own",
        "RP_SITE_KEY_K8S and RP_SERVICE_KEY hold the same key; each principal needs its own",
        "RP_SITE_KEY_K8S and RP_PLACEMENT_KEY hold the same key; each principal needs its own",
        "RP_SITE_KEY_SLURM and RP_SERVICE_KEY hold the same key; each principal needs its own",
        "RP_SITE_KEY_SLURM and RP_PLACEMENT_KEY hold the same key; each principal needs its own",
        "RP_SERVICE_KEY and RP_PLACEMENT_KEY hold the same key; each principal needs its own",
    ]
    assert not any(shared in problem for problem in problems)


def test_a_short_shared_key_is_both_problems():
    problems = key_problems({"RP_SITE_KEY_K8S": "short", "RP_SERVICE_KEY": "short"})
    assert len(problems) == 3  # two too short, one pair
