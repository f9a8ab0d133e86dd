"""Bounds beyond which a number is a typo or a mix-up of units, never a measurement or a
request. The command line (``dlperf.cli.arguments``) and the external-timings reader share them,
so nothing infinite or overflowing reaches NumPy or SciPy, and every product of them stays
exact in float64."""

MAX_COUNT = 10**6  # nodes, workers, GPUs per node, repetitions
# Per-worker batch sizes of recommender networks pass a million (NVIDIA's NCF tables: 2^20).
MAX_BATCH = 10**9
MAX_SAMPLES = 10**12  # samples per epoch
MIN_SECONDS = 1e-9  # a measured time: a nanosecond ...
MAX_SECONDS = 1e9  # ... to thirty years
MAX_RATE = 1e12  # samples per second
MAX_PARAMS = 1e15  # parameters of a network
MAX_FLOPS = 1e21  # floating-point operations per sample
# Workers on one node when max_procs_per_node does not say: the largest shared-memory
# machines have under 2,000 hardware threads, so more is a total worker count given per node.
MAX_PROCS_PER_NODE = 4096
