# Adaptive mode (config `adaptive.enabled`): rounds of measurement chosen by the models'
# uncertainty instead of the whole grid. Round r is a checkpoint: it reads the run records of
# rounds 0..r-1 and writes the configurations to measure next (results/adaptive/round{r}.json);
# the ordinary bench rule measures them, so a finished round is never measured again.


def adaptive_chosen_records(rounds):
    """Run records of every configuration chosen in rounds 0..rounds-1 (each round's file is a
    checkpoint: asking for it makes Snakemake run that round first)."""
    records = []
    for number in range(rounds):
        path = checkpoints.adaptive_round.get(round=number).output[0]
        chosen = dlperf.adaptive.rounds.read_round(path)["chosen"]
        records += dlperf.adaptive.rounds.record_paths(config, chosen)
    return records


def adaptive_measured_records(wildcards=None):
    """The records of every round until one stops (or the configured number of rounds)."""
    records = []
    for number in range(config["adaptive"]["max_rounds"]):
        path = checkpoints.adaptive_round.get(round=number).output[0]
        result = dlperf.adaptive.rounds.read_round(path)
        records += dlperf.adaptive.rounds.record_paths(config, result["chosen"])
        if result["stop"]:
            break
    return records


def adaptive_round_files(wildcards=None):
    files = []
    for number in range(config["adaptive"]["max_rounds"]):
        path = checkpoints.adaptive_round.get(round=number).output[0]
        files.append(path)
        if dlperf.adaptive.rounds.read_round(path)["stop"]:
            break
    return files


checkpoint adaptive_round:
    input:
        records=lambda wildcards: adaptive_chosen_records(int(wildcards.round)),
    output:
        "results/adaptive/round{round}.json",
    log:
        "logs/adaptive/round{round}.log",
    conda:
        WORKFLOW_ENV
    params:
        code=CODE["adaptive"],
        config=json.dumps(
            {
                key: config[key]
                for key in (
                    "frameworks",
                    "networks",
                    "device",
                    "nodes",
                    "procs",
                    "batch_sizes",
                    "data_sizes",
                    "repeats",
                    "max_procs_per_node",
                    "seed",
                    "adaptive",
                )
                if key in config
            },
            sort_keys=True,
        ),
    shell:
        "dlperf adaptive-round --config-json '{params.config}' --round {wildcards.round} "
        "--out {output} {input.records} > {log} 2>&1"
