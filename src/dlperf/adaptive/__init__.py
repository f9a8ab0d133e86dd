"""Adaptive sweeps: measure a small space-filling design, then the configurations where the models
are most uncertain, round after round, until a budget or a target interval width (docs/adaptive.md).

    design.py    where configurations lie (normalised log coordinates) and the initial design
    scoring.py   how uncertain and how informative each unmeasured configuration is
    loop.py      the rounds: choose, measure, refit, stop
    replay.py    the loop on a table already measured, against random subsets and the full grid
    sweep.py     the workflow's adaptive mode: the candidate grid, one round's choice on file
"""
