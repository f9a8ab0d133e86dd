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
