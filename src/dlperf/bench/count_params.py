"""Print the trainable parameter count of every network as one framework builds it.

``python -m dlperf.bench.count_params --framework tensorflow`` prints a JSON
object {network: count}; run in a framework environment, it shows whether that
framework's networks match :func:`dlperf.bench.spec.param_count`.
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys

from .spec import FRAMEWORKS, NETWORKS

NET_MODULES = {
    "pytorch": "dlperf.bench.torch_nets",
    "tensorflow": "dlperf.bench.tf_nets",
    "mxnet": "dlperf.bench.mx_nets",
}


def counts(framework: str) -> dict[str, int]:
    module = importlib.import_module(NET_MODULES[framework])
    result = {}
    for name in NETWORKS:
        net = module.build_network(name)
        if framework == "mxnet":
            net.initialize()
        result[name] = module.trainable_parameters(net)
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--framework", required=True, choices=FRAMEWORKS)
    args = parser.parse_args(argv)
    print(json.dumps(counts(args.framework)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
