"""What one configuration is, for every reader of run records: its key (the point keys and the
input settings, a missing input setting read as its default) and its label as people name it.
Two runs are of one configuration exactly when their keys are equal, so a comparison and the
check against a model never pool runs of another precision or accumulation."""

from __future__ import annotations

from dlperf.measurements.tables import INPUT_COLUMNS, POINT_KEYS

#: The columns of a configuration's key, in the order of :func:`key`.
CONFIG_KEYS = POINT_KEYS + list(INPUT_COLUMNS)


def key(config: dict) -> tuple:
    """A run record's configuration as a sortable tuple of :data:`CONFIG_KEYS`."""
    return tuple(config[k] for k in POINT_KEYS) + tuple(
        config.get(k, default) for k, default in INPUT_COLUMNS.items()
    )


def as_dict(config_key: tuple) -> dict:
    """The configuration a :func:`key` stands for."""
    return dict(zip(CONFIG_KEYS, config_key, strict=True))


def label(config) -> str:
    """A configuration as people name it: 'pytorch/resnet18 cpu n1 p4 b32 d4096', followed by
    what differs from the default input and training ('precision=bf16 grad_accum_steps=4')."""
    text = (
        f"{config['framework']}/{config['network']} {config['device']} n{config['nodes']} "
        f"p{config['procs']} b{config['batch_size']} d{config['data_size']}"
    )
    for name, default in INPUT_COLUMNS.items():
        value = config.get(name, default)
        if value == value and value != default:  # NaN (a missing column) is the default
            text += f" {name}={value}"
    return text
