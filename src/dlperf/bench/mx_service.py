"""A ps-lite scheduler or server of a distributed MXNet run: ``python -m dlperf.bench.mx_service``.

With DMLC_ROLE set to ``scheduler`` or ``server``, importing mxnet runs that
role's loop (mxnet/kvstore_server.py) and exits the process when the workers
are done. The launcher starts these processes beside the workers.
"""

from __future__ import annotations

import argparse
import os
import sys

ROLES = ("scheduler", "server")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    # Not read: it names the run on the command line, so `ps` shows which run a process serves.
    parser.add_argument("--work-dir", help="the run's work directory")
    parser.parse_args(argv)
    role = os.environ.get("DMLC_ROLE")
    if role not in ROLES:
        print(
            f"dlperf.bench.mx_service: DMLC_ROLE is {role!r}, expected one of {', '.join(ROLES)}; "
            "this module is started by the benchmark launcher for distributed MXNet runs",
            file=sys.stderr,
        )
        return 2
    import mxnet  # noqa: F401 -- runs the scheduler/server loop, then calls sys.exit

    print(
        f"dlperf.bench.mx_service: mxnet returned without running the {role} loop", file=sys.stderr
    )
    return 1


if __name__ == "__main__":
    sys.exit(main())
