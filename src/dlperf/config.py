"""The workflow configuration: schema validation with defaults, then the checks a schema
cannot express."""

from __future__ import annotations

import copy
import itertools
from importlib import resources
from pathlib import Path

import jsonschema
import yaml

from dlperf.bench.options import option_problems
from dlperf.bench.spec import RunConfig, precision_problem
from dlperf.errors import ConfigError
from dlperf.io import unopenable
from dlperf.pipeline import sweep_checks
from dlperf.quoting import listing, shown


def schema() -> dict:
    text = resources.files("dlperf").joinpath("schemas/config.schema.yaml").read_text()
    return yaml.safe_load(text)


def default_models() -> list[str]:
    """The models a study fits when its config names none (the schema's default)."""
    return list(schema()["properties"]["models"]["default"])


def _with_defaults(validator_class):
    """A validator that also fills in each property's default (as Snakemake's validate does)."""
    validate_properties = validator_class.VALIDATORS["properties"]

    def set_defaults(validator, properties, instance, schema_):
        if isinstance(instance, dict):
            for name, sub in properties.items():
                if "default" in sub and name not in instance:
                    instance[name] = copy.deepcopy(sub["default"])
        yield from validate_properties(validator, properties, instance, schema_)

    return jsonschema.validators.extend(validator_class, {"properties": set_defaults})


def _describe(error: jsonschema.ValidationError) -> str:
    where = ".".join(str(p) for p in error.absolute_path) or "(top level)"
    if error.validator == "additionalProperties":
        allowed = sorted(error.schema.get("properties", {}))
        return f"{error.message} at {where}; allowed keys there: {', '.join(allowed)}"
    if error.validator == "enum":
        return f"{where}: {shown(error.instance)} is not one of {listing(error.validator_value)}"
    # jsonschema quotes the value as Python writes it ({'a': 1}); the user reads it as given.
    message = error.message.replace(repr(error.instance), shown(error.instance), 1)
    return f"{where}: {message}"


def validated(config: dict) -> dict:
    """A copy of ``config`` with defaults filled in; ConfigError naming every problem otherwise."""
    if "schema_version" in config and isinstance(config.get("networks"), dict):
        raise ConfigError(
            "invalid configuration: this file is a model artifact (what `dlperf fit` writes: the "
            "fitted models of each network), not a config; give a config file in the form of "
            "config/config.yaml"
        )
    config = _scalars_as_lists(copy.deepcopy(dict(config)))
    validator = _with_defaults(jsonschema.Draft202012Validator)(schema())
    errors = sorted(validator.iter_errors(config), key=lambda e: list(e.absolute_path))
    if errors:
        raise ConfigError(
            "invalid configuration:\n  - "
            + "\n  - ".join(_describe(e) for e in errors)
            + "\nFix the key(s) above in your config file "
            "(see config/config.yaml for a commented example)."
        )
    if not config["frameworks"] and not config["external_timings"]:
        raise ConfigError(
            "invalid configuration: `frameworks` is empty and no `external_timings` is given, "
            "so there is nothing to benchmark or model. List a framework, or name a timings CSV."
        )
    problems = sweep_checks.value_problems(config)
    if problems:
        raise ConfigError("\n".join(f"invalid configuration: {p}" for p in problems))
    check_precision(config)
    check_target_gpus(config)
    return config


def _scalars_as_lists(config: dict) -> dict:
    """A list key given one value (``accumulation_steps: 2``) as the one-element list it
    means; the schema's ``type: array`` says which keys are lists."""
    for key, spec in schema()["properties"].items():
        value = config.get(key)
        if spec.get("type") == "array" and isinstance(value, (int, float, str)):
            config[key] = [value]
    return config


def check_target_gpus(config: dict) -> None:
    """Refuse a GPU type in ``report.target.gpus`` the catalogue (with the config's own
    ``hardware`` file) does not know, naming the nearest known ones."""
    gpus = ((config.get("report") or {}).get("target") or {}).get("gpus")
    if not gpus:
        return
    from dlperf.errors import DlperfError
    from dlperf.hardware import load  # pandas: only for a config that names GPU types

    try:
        catalogue = load(config.get("hardware"))
        for gpu in gpus:
            catalogue.match(gpu)
    except DlperfError as exc:
        raise ConfigError(f"invalid configuration: report.target.gpus: {exc}") from None


def check_precision(config: dict) -> None:
    """Refuse, before any run, a precision or an option (cuda_graphs, input) a listed
    framework cannot run on the device."""
    problems = [
        problem
        for framework in config["frameworks"]
        if (problem := precision_problem(framework, config["device"], config["precision"]))
    ]
    for framework in config["frameworks"]:
        problems += option_problems(
            framework, config["device"], config["compile"], config["cuda_graphs"], config["input"]
        )
    if problems:
        raise ConfigError("invalid configuration: " + "; ".join(problems))


#: Sections a user's config replaces as a whole instead of merging into the default's: a user
#: who lists models or protocols means those and no others.
REPLACED_SECTIONS: tuple[tuple[str, ...], ...] = (("models",), ("validation", "protocols"))


def with_user_choices(config: dict, overrides: dict) -> dict:
    """``config`` (the default config with the user's merged into it, as Snakemake does) with
    every section of :data:`REPLACED_SECTIONS` that ``overrides`` (the user's ``--configfile``
    and ``--config`` values) gives taken from ``overrides`` alone."""
    config = copy.deepcopy(dict(config))
    for path in REPLACED_SECTIONS:
        given, target = overrides, config
        for key in path[:-1]:
            given = given.get(key) if isinstance(given, dict) else None
            target = target.setdefault(key, {})
        if isinstance(given, dict) and path[-1] in given:
            target[path[-1]] = copy.deepcopy(given[path[-1]])
    return config


def with_minimal_sweep(sections: dict) -> dict:
    """``sections`` plus the sweep keys the schema requires, for stages that model or report
    timings and never look at the sweep (fit, validate, report)."""
    return {"batch_sizes": [1], "data_sizes": [1], **sections}


class _UniqueKeyLoader(yaml.SafeLoader):
    """YAML's safe loader refusing a key given twice in one mapping (PyYAML keeps the last
    silently: `procs: [1]` then `procs: [64]` would run 64 workers)."""

    def construct_mapping(self, node, deep=False):
        seen = set()
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=deep)
            if key in seen:
                raise yaml.constructor.ConstructorError(
                    None, None, f"the key {key!r} is given twice", key_node.start_mark
                )
            seen.add(key)
        return super().construct_mapping(node, deep=deep)


def read_yaml(path: str | Path) -> dict:
    """A config file's mapping; ConfigError naming the file, and the line and column of a
    YAML error, otherwise."""
    try:
        with open(path, encoding="utf-8") as fh:
            data = yaml.load(fh, Loader=_UniqueKeyLoader) or {}
    except FileNotFoundError:
        raise ConfigError(f"config file {path} does not exist") from None
    except (IsADirectoryError, PermissionError) as exc:
        raise ConfigError(f"config file {unopenable(path, exc)}") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(
            f"config file {path} is not UTF-8 text (byte {exc.start}: {exc.reason}); save it "
            "as UTF-8"
        ) from None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f"{path}:{mark.line + 1}:{mark.column + 1}" if mark else str(path)
        raise ConfigError(
            f"{where}: not valid YAML ({exc.problem or exc.context}); fix the file there"
        ) from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path}: not valid YAML ({' '.join(str(exc).split())})") from None
    if not isinstance(data, dict):
        raise ConfigError(
            f"{path}: not a configuration (a YAML mapping of keys); see config/config.yaml"
        )
    return data


def merged(default: dict, user: dict) -> dict:
    """``user`` merged into ``default`` key by key, as Snakemake merges a ``--configfile`` into
    the Snakefile's config (then :func:`with_user_choices`)."""

    def update(base: dict, extra: dict) -> dict:
        out = copy.deepcopy(base)
        for key, value in extra.items():
            both = isinstance(value, dict) and isinstance(out.get(key), dict)
            out[key] = update(out[key], value) if both else copy.deepcopy(value)
        return out

    return with_user_choices(update(default, user), user)


def load(path: str | Path, default: str | Path | None = None) -> dict:
    """The validated configuration of a config file, merged into ``default`` when given."""
    data = read_yaml(path)
    if default is not None:
        data = merged(read_yaml(default), data)
    return validated(data)


def run_layouts(config: dict) -> list[tuple[int, int]]:
    """(nodes, procs) pairs of the sweep: every node runs the same number of workers."""
    most = sweep_checks.most_per_node(config)
    return [
        (n, p)
        for n, p in itertools.product(sorted(config["nodes"]), sorted(config["procs"]))
        if p % n == 0 and p // n <= most
    ]


def run_configs(config: dict) -> list[RunConfig]:
    """Every benchmark job of the sweep, in a stable order."""
    runs = []
    for framework, network, (nodes, procs), batch, data, accum, rep in itertools.product(
        config["frameworks"],
        config["networks"],
        run_layouts(config),
        sorted(config["batch_sizes"]),
        sorted(config["data_sizes"]),
        sorted(config["accumulation_steps"]),
        range(config["repeats"]),
    ):
        runs.append(
            RunConfig(
                framework=framework,
                network=network,
                device=config["device"],
                nodes=nodes,
                procs=procs,
                batch_size=batch,
                data_size=data,
                rep=rep,
                warmup_iters=config["warmup_iters"],
                threads_per_proc=config["threads_per_proc"],
                dataset=config["dataset"],
                timeout_s=float(config["timeout_s"]),
                image_size=config["image_size"],
                seq_len=config["seq_len"],
                precision=config["precision"],
                grad_accum_steps=accum,
                compile=config["compile"],
                cuda_graphs=config["cuda_graphs"],
                input=config["input"],
            )
        )
    return runs
