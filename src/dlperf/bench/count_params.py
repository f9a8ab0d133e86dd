"""Print the trainable parameter count of every network as one framework builds it.

``python -m dlperf.bench.count_params --framework tensorflow`` prints a JSON
object {"<network>@<image_size>": count} (token networks once, at image size 32); run in a
framework environment, it shows whether that framework's networks match
:func:`dlperf.bench.spec.param_count`.
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys

from .spec import FRAMEWORKS, IMAGE_SIZES, NETWORKS

NET_MODULES = {
    "pytorch": "dlperf.bench.torch_nets",
    "tensorflow": "dlperf.bench.tf_nets",
    "mxnet": "dlperf.bench.mx_nets",
}


def network_sizes() -> list[tuple[str, int]]:
    """(network, image_size) pairs to count: token networks do not depend on the image size."""
    return [
        (name, size)
        for name, spec in NETWORKS.items()
        for size in (IMAGE_SIZES if spec.inputs == "image" else IMAGE_SIZES[:1])
    ]


def counts(framework: str) -> dict[str, int]:
    module = importlib.import_module(NET_MODULES[framework])
    result = {}
    for name, size in network_sizes():
        net = module.build_network(name, size)
        if framework == "mxnet":
            net.initialize()
        result[f"{name}@{size}"] = module.trainable_parameters(net)
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--framework", required=True, choices=FRAMEWORKS)
    args = parser.parse_args(argv)
    print(json.dumps(counts(args.framework)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
