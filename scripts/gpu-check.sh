#!/usr/bin/env bash
# Check one NVIDIA GPU machine with dlperf's PyTorch CUDA paths.
#
# Needs: Python (3.11 or later) with PyTorch built with CUDA, NumPy, pandas, SciPy and pynvml
# (nvidia-ml-py), and beyond that ONE package such a machine may lack:
#   scikit-learn   (dlperf's performance models import it; `pip install --no-index
#                   scikit_learn-*.whl` from a wheel copied to the machine: no network needed)
# Not needed: network access, TensorFlow, MXNet, or installing dlperf (it runs from this
# checkout's src/).
#
# Runs, through the real harness (one process per worker, NVML sampled during every epoch), in
# each framework's reference settings (channels_last, cudnn.benchmark, fused SGD, SDPA; the run
# records' `settings`): ImageNet-sized ResNet-50 (224x224) and BERT-Base (128 tokens), in tf32
# and in fp16 mixed precision, batch sizes 128 and 256 per GPU, on 1 GPU and on 2 where the
# machine has them; then aggregates the run records (timings.csv), fits the performance models
# the points support, and prints a summary: throughput, peak device memory, GPU utilisation and
# power, the mixed-precision speed-up, each measured rate beside the published reference for
# that GPU and precision (ratio and model FLOPs utilisation), the fits.
#
#   scripts/gpu-check.sh [--out DIR] [--iterations N]   # on the GPU machine (about 5-10 min)
#       [--compile [--cuda-graphs]] [--input host]     # torch.compile, CUDA graphs, host-fed
#   scripts/gpu-check.sh --dry-run                       # the same path on a CPU (small networks,
#                                                        # bf16, 1 and 2 workers, no NVML)
#   scripts/gpu-check.sh --workflow [--wheels DIR]       # the real Snakemake workflow, device cuda
#   scripts/gpu-check.sh --workflow --dry-run            # the same workflow on a CPU
#   scripts/gpu-check.sh --make-wheels DIR [--python-version 3.12]   # on a networked machine
#   PYTHON=/path/to/python scripts/gpu-check.sh ...      # another interpreter (default python3)
#
# --workflow runs the Snakefile (benchmark, aggregate, fit, validate, report) on a study of the
# same networks with 1 GPU and with every GPU of the machine, PyTorch from $PYTHON (or
# $TORCH_PYTHON) as the site's framework build. Beyond the packages above it needs those of
# `wheel_of` below, installed from wheels carried beside the script when the machine has no
# network (`--wheels DIR`: pip install --no-index --target OUT/tools/site, nothing else is
# touched; only the modules the machine lacks). `--make-wheels DIR` makes that folder on a
# networked Linux x86-64 machine, for the GPU machine's Python version (`--python-version`,
# default this machine's): every wheel of those packages and their needs, and a wheel built
# here of each pure-Python need published only as a source archive (Snakemake's
# connection_pool is one), which `pip download` for another interpreter cannot take.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
python="${PYTHON:-python3}"
dry_run=0
workflow=0
wheels=""
make_wheels=""
python_version=""
out="gpu-check-$(date +%Y%m%d-%H%M%S)"
args=()
while [[ $# -gt 0 ]]; do
    case "$1" in
        --dry-run) dry_run=1; args+=("$1") ;;
        --workflow) workflow=1; args+=("$1") ;;
        --wheels) wheels="$2"; shift ;;
        --make-wheels) make_wheels="$2"; shift ;;
        --python-version) python_version="$2"; shift ;;
        --out) out="$2"; args+=("$1" "$2"); shift ;;
        *) args+=("$1") ;;
    esac
    shift
done
[[ " ${args[*]-} " == *" --out "* ]] || args+=(--out "$out")

# module -> wheel the workflow side needs (Snakemake's pin is the project's).
declare -A wheel_of=(
    [snakemake]="snakemake==9.27.1" [yaml]=pyyaml [jsonschema]=jsonschema
    [matplotlib]=matplotlib [jinja2]=jinja2 [pyarrow]=pyarrow [rocrate]=rocrate
    [pygments]=pygments [marshmallow]="marshmallow>=3.7,<4" [tqdm]=tqdm
)

# The --wheels folder for Python $2 on Linux x86-64, made in $1 with this machine's network.
make_wheel_folder() {
    local dir="$1" version="$2" log needed built rounds=0
    local platforms=()
    for tag in manylinux_2_28 manylinux_2_27 manylinux_2_24 manylinux_2_17 manylinux2014 manylinux1; do
        platforms+=(--platform "${tag}_x86_64")
    done
    mkdir -p "$dir"
    until log="$("$python" -m pip download --quiet --only-binary=:all: --implementation cp \
        --python-version "$version" "${platforms[@]}" --find-links "$dir" --dest "$dir" \
        "${wheel_of[@]}" 2>&1)"; do
        # pip names the first need it found no wheel of; build that one here, then go on.
        needed="$(sed -n 's/.*No matching distribution found for \([^ ]*\).*/\1/p' <<<"$log" | head -1)"
        if [[ -z "$needed" || $((rounds += 1)) -gt 20 ]]; then
            echo "$log" >&2
            echo "gpu-check: error: pip download failed for Python $version (above)" >&2
            return 1
        fi
        built="$(mktemp -d)"
        "$python" -m pip wheel --quiet --no-deps --wheel-dir "$built" "$needed"
        if ! compgen -G "$built/*-none-any.whl" >/dev/null; then
            echo "gpu-check: error: $needed has no wheel for Python $version and is not pure" \
                "Python; build its wheel with that Python and put it in $dir" >&2
            return 1
        fi
        mv "$built"/*.whl "$dir/" && rmdir "$built"
    done
    echo "gpu-check: $(ls "$dir" | wc -l) wheels for Python $version in $dir; on the GPU" \
        "machine: scripts/gpu-check.sh --workflow --wheels $dir"
}

if [[ -n "$make_wheels" ]]; then
    version="${python_version:-$("$python" -c 'import sys; print("%d.%d" % sys.version_info[:2])')}"
    make_wheel_folder "$make_wheels" "$version"
    exit
fi

missing_of() {
    "$python" - "$@" <<'PY'
import importlib.util, sys
print(" ".join(name for name in sys.argv[1:] if importlib.util.find_spec(name) is None))
PY
}

needed=(torch numpy pandas scipy sklearn)
[[ $dry_run == 1 ]] || needed+=(pynvml)
missing="$(missing_of "${needed[@]}")"
if [[ -n "$missing" ]]; then
    echo "gpu-check: error: $python lacks: $missing (scikit-learn for sklearn, nvidia-ml-py" \
        "for pynvml); install them, or set PYTHON to an interpreter that has them" >&2
    exit 2
fi

export PYTHONPATH="$here/src${PYTHONPATH:+:$PYTHONPATH}"
if [[ $workflow == 1 ]]; then
    tools="$(mkdir -p "$out/tools/bin" && cd "$out/tools" && pwd)"
    export PYTHONPATH="$PYTHONPATH:$tools/site"
    missing="$(missing_of "${!wheel_of[@]}")"
    if [[ -n "$missing" ]]; then
        names=()
        for module in $missing; do names+=("${wheel_of[$module]}"); done
        if [[ -z "$wheels" ]]; then
            echo "gpu-check: error: --workflow needs ${names[*]}, which $python lacks; carry" \
                "their wheels to this machine and pass --wheels DIR (see the top of $0)" >&2
            exit 2
        fi
        "$python" -m pip install --quiet --no-index --find-links "$wheels" \
            --target "$tools/site" "${names[@]}"
    fi
    # The workflow's jobs call `dlperf`: this checkout's, through the same interpreter.
    printf '#!/bin/sh\nexec "%s" -m dlperf "$@"\n' "$(command -v "$python")" >"$tools/bin/dlperf"
    chmod +x "$tools/bin/dlperf"
    export PATH="$tools/bin:$PATH"
fi
exec "$python" -m dlperf.cli.gpucheck "${args[@]}"
