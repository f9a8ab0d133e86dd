"""One worker process of a benchmark run: ``python -m dlperf.bench.worker``.

Started once per rank by the driver (locally) or by ``srun`` (Slurm). Each rank
writes ``rank<N>.json`` into the run's work directory; the driver turns rank 0's
file into the run record.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import sys
import traceback
from pathlib import Path

from dlperf.io import atomic_write_json

from .ranks import from_environment
from .spec import RunConfig

OOM_MARKERS = (
    "out of memory",
    "outofmemory",
    "resourceexhausted",
    "oom when allocating",
    "memoryerror",
    "cannot allocate memory",
)


def classify_error(text: str) -> str:
    lowered = text.lower().replace(" ", "")
    if any(marker.replace(" ", "") in lowered for marker in OOM_MARKERS):
        return "oom"
    return "failed"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--config", required=True, help="run configuration (JSON)")
    parser.add_argument("--work-dir", required=True, help="where each rank writes its result")
    args = parser.parse_args(argv)

    dist = from_environment()
    work_dir = Path(args.work_dir)
    result_path = work_dir / f"rank{dist.rank}.json"
    threads = int(os.environ.get("DLPERF_THREADS", "1"))
    backend = None
    try:
        config = RunConfig.from_dict(json.loads(Path(args.config).read_text()))
        from .backends import load_backend
        from .harness import run_training

        backend = load_backend(config.framework)(config, dist, threads)
        timing = run_training(backend, config, dist, work_dir, threads)
        result = {
            "status": "ok",
            "rank": dist.rank,
            "hostname": socket.gethostname(),
            "dist": dist.to_dict(),
            "framework_environment": backend.environment(),
            "settings": backend.settings(),
            **timing,
        }
        code = 0
    except BaseException as exc:  # noqa: BLE001 -- every failure must reach the run record
        text = "".join(traceback.format_exception(exc))
        result = {
            "status": classify_error(text),
            "rank": dist.rank,
            "hostname": socket.gethostname(),
            "dist": dist.to_dict(),
            "error": f"{type(exc).__name__}: {exc}",
            "traceback": text[-8000:],
        }
        print(text, file=sys.stderr, flush=True)
        code = 1
    atomic_write_json(result_path, result)
    if backend is not None and code == 0:
        backend.close()
    return code


if __name__ == "__main__":
    sys.exit(main())
