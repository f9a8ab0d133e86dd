"""What one configuration is, for every reader of run records and tables: its columns, its key
(the point keys and the input settings, a missing input setting read as its default) and its
label as people name it.
Two runs are of one configuration exactly when their keys are equal, so a comparison and the
check against a model never pool runs of another precision or accumulation."""

from __future__ import annotations

POINT_KEYS = ["framework", "network", "device", "nodes", "procs", "batch_size", "data_size"]
CONFIG_COLUMNS = [*POINT_KEYS, "rep"]
# What one sample is and how it is trained; a record from before they existed ran the default.
# grad_accum_steps: micro-batches (of batch_size each) per optimizer step, one all-reduce each.
INPUT_COLUMNS = {"image_size": 32, "seq_len": 128, "precision": "fp32", "grad_accum_steps": 1}

# Micro-batches per optimizer step (gradient accumulation): a contract with the run records
# config key ``accumulation_steps`` and external CSVs. ``batch_size`` is the per-worker
# micro-batch and an iteration is one micro-batch; the gradient is exchanged once per step.
# Absent means 1. Rows that differ in it are different configurations.
ACCUMULATION = "grad_accum_steps"
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
