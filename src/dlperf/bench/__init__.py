"""The benchmark harness.

Everything under ``dlperf.bench`` runs inside a framework environment, so it
imports only the standard library, NumPy and the one framework it drives --
never pandas, SciPy or the analysis modules. The run record (a JSON file) is
the only thing that crosses over to the analysis side.
"""
