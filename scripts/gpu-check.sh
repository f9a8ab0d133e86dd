#!/usr/bin/env bash
# Check one NVIDIA GPU machine with dlperf's PyTorch CUDA paths, without the workflow.
#
# Needs: Python (3.11 or later) with PyTorch built with CUDA, NumPy, pandas, SciPy and pynvml
# (nvidia-ml-py), and beyond that ONE package such a machine may lack:
#   scikit-learn   (dlperf's performance models import it; `pip install --no-index
#                   scikit_learn-*.whl` from a wheel copied to the machine: no network needed)
# Not needed: network access, Snakemake, TensorFlow, MXNet, or installing dlperf (it runs from
# this checkout's src/).
#
# Runs, through the real harness (one process per worker, NVML sampled during every epoch):
# ImageNet-sized ResNet-50 (224x224) and BERT-Base (128 tokens), in fp32 and in fp16 mixed
# precision (autocast + GradScaler), batch sizes 64/128 and 16/32 per GPU, on 1 GPU and on 2
# where the machine has them; then aggregates the run records (timings.csv), fits the
# performance models the points support, and prints a summary: throughput, peak device
# memory, GPU utilisation and power, the mixed-precision speed-up, the fits.
#
#   scripts/gpu-check.sh [--out DIR] [--iterations N]   # on the GPU machine (about 5-10 min)
#   scripts/gpu-check.sh --dry-run                       # the same path on a CPU (small networks,
#                                                        # bf16, 1 and 2 workers, no NVML)
#   PYTHON=/path/to/python scripts/gpu-check.sh ...      # another interpreter (default python3)
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
python="${PYTHON:-python3}"
dry_run=0
for arg in "$@"; do
    [[ "$arg" == "--dry-run" ]] && dry_run=1
done

needed=(torch numpy pandas scipy sklearn)
[[ $dry_run == 1 ]] || needed+=(pynvml)
missing="$("$python" - "${needed[@]}" <<'PY'
import importlib.util, sys
print(" ".join(name for name in sys.argv[1:] if importlib.util.find_spec(name) is None))
PY
)"
if [[ -n "$missing" ]]; then
    echo "gpu-check: error: $python lacks: $missing (scikit-learn for sklearn, nvidia-ml-py" \
        "for pynvml); install them, or set PYTHON to an interpreter that has them" >&2
    exit 2
fi

export PYTHONPATH="$here/src${PYTHONPATH:+:$PYTHONPATH}"
exec "$python" -m dlperf.cli.gpucheck "$@"
