"""What the Snakefile calls while it plans: cluster resources, code digests, bench
parameters, sweep checks, failed jobs, GC tuning."""
