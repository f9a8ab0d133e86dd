"""A user's config chooses its models and protocols; the schema is sound YAML."""

from __future__ import annotations

import yaml

from dlperf import config as cfg


def default(repo) -> dict:
    return yaml.safe_load((repo / "config" / "config.yaml").read_text())


def merged(base: dict, user: dict) -> dict:
    """What Snakemake's deep merge of a --configfile gives."""
    from snakemake.utils import update_config

    out = yaml.safe_load(yaml.safe_dump(base))
    update_config(out, user)
    return out


def test_user_models_replace_the_defaults(repo):
    base = default(repo)
    user = {"models": {"generic": {}}}
    assert set(merged(base, user)["models"]) == set(base["models"])  # what a deep merge does
    chosen = cfg.validated(cfg.with_user_choices(merged(base, user), user))
    assert chosen["models"] == {"generic": {}}


def test_user_protocols_replace_the_defaults_and_other_validation_keys_merge(repo):
    base = default(repo)
    user = {"validation": {"protocols": {"kfold": {"k": 3}}}}
    chosen = cfg.validated(cfg.with_user_choices(merged(base, user), user))
    assert chosen["validation"]["protocols"] == {"kfold": {"k": 3}}
    assert chosen["validation"]["bootstrap"] == base["validation"]["bootstrap"]


def test_sections_the_user_does_not_give_stay_the_defaults(repo):
    base = default(repo)
    user = {"seed": 3, "validation": {"bootstrap": 10}}
    chosen = cfg.with_user_choices(merged(base, user), user)
    assert chosen["models"] == base["models"]
    assert chosen["validation"]["protocols"] == base["validation"]["protocols"]
    assert chosen["seed"] == 3 and chosen["validation"]["bootstrap"] == 10


class UniqueKeyLoader(yaml.SafeLoader):
    """A YAML loader that refuses a mapping with the same key twice (PyYAML keeps the last)."""


def _unique_mapping(loader, node, deep=False):
    keys = [loader.construct_object(key, deep=deep) for key, _ in node.value]
    duplicates = sorted({k for k in keys if keys.count(k) > 1})
    if duplicates:
        raise yaml.constructor.ConstructorError(
            None, None, f"duplicate keys {duplicates}", node.start_mark
        )
    return yaml.SafeLoader.construct_mapping(loader, node, deep)


UniqueKeyLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _unique_mapping)


def test_the_loader_refuses_duplicates():
    import pytest

    with pytest.raises(yaml.constructor.ConstructorError, match="duplicate keys"):
        yaml.load("a: 1\nb: 2\na: 3\n", Loader=UniqueKeyLoader)


def test_schema_and_configs_have_no_duplicate_keys(repo):
    paths = [repo / "src" / "dlperf" / "schemas" / "config.schema.yaml"]
    paths += sorted((repo / "config").glob("*.yaml"))
    for path in paths:
        loaded = yaml.load(path.read_text(), Loader=UniqueKeyLoader)
        assert loaded == yaml.safe_load(path.read_text()), path
    assert cfg.schema() == yaml.load(paths[0].read_text(), Loader=UniqueKeyLoader)
