"""The code digests that decide what re-runs: derived from the imports, checked against the
modules a real run of each stage loads."""

import json
import os
import subprocess
import sys
import textwrap

import pytest

from dlperf.bench.backends import BACKENDS
from dlperf.bench.spec import RunConfig
from dlperf.environments import requirements as envs
from dlperf.io import atomic_write_json
from dlperf.pipeline import provenance

SRC = provenance.PACKAGE.parent


def test_digest_ignores_comments_docstrings_and_layout(tmp_path):
    a = tmp_path / "a.py"
    a.write_text('"""Doc."""\nx = 1  # one\n\n\ndef f():\n    """Doc."""\n    return x\n')
    b = tmp_path / "b.py"
    b.write_text("# header\nx = 1\ndef f():\n    return x\n")
    assert provenance.module_digest(a) == provenance.module_digest(b)
    b.write_text("x = 2\ndef f():\n    return x\n")
    assert provenance.module_digest(a) != provenance.module_digest(b)


def test_every_stage_has_a_distinct_stable_digest():
    digests = {stage: provenance.code_digest(stage) for stage in provenance.STAGE_ENTRIES}
    digests |= {fw: provenance.code_digest("bench", fw) for fw in provenance.FRAMEWORK_ENTRIES}
    assert len(set(digests.values())) == len(digests)
    assert all(len(d) == 16 for d in digests.values())
    assert provenance.code_digest("fit") == digests["fit"]


def test_unknown_stage_and_missing_framework_are_named():
    with pytest.raises(ValueError, match="unknown stage 'plot'"):
        provenance.code_digest("plot")
    with pytest.raises(ValueError, match="depends on the framework"):
        provenance.code_digest("bench")


def test_every_framework_with_a_backend_has_bench_entries():
    assert set(provenance.FRAMEWORK_ENTRIES) == set(BACKENDS)
    for framework, target in BACKENDS.items():
        assert target.split(":")[0] in provenance.FRAMEWORK_ENTRIES[framework]


def test_one_frameworks_backend_is_in_its_own_bench_closure_only():
    closures = {
        fw: provenance.import_closure(provenance.stage_entries("bench", fw))
        for fw in provenance.FRAMEWORK_ENTRIES
    }
    assert "dlperf.bench.mx_nets" in closures["mxnet"]
    assert "dlperf.bench.mx_nets" not in closures["pytorch"] | closures["tensorflow"]
    assert "dlperf.bench.torch_nets" not in closures["mxnet"] | closures["tensorflow"]
    core = closures["pytorch"] & closures["tensorflow"] & closures["mxnet"]
    assert {"dlperf.bench.harness", "dlperf.bench.runner", "dlperf.io"} <= core
    # the analysis side never enters a benchmark's digest (nor its environment)
    assert not any(m.startswith(("dlperf.models", "dlperf.measurements.tables")) for m in core)


def test_a_benchmarks_digest_reads_the_bench_package_io_errors_and_the_version_only():
    """What a benchmark's digest covers: moving or changing any other module (the analysis
    side, its packages) never re-measures a study."""
    for framework in provenance.FRAMEWORK_ENTRIES:
        closure = provenance.import_closure(provenance.stage_entries("bench", framework))
        files = {provenance.module_path(m).relative_to(provenance.PACKAGE) for m in closure}
        outside = {f.as_posix() for f in files if f.parts[0] != "bench"}
        assert outside == {"__init__.py", "io.py", "errors.py"}, (framework, outside)


def test_analysis_stages_cover_what_they_run_and_no_other_stage():
    closure = {s: provenance.import_closure(provenance.stage_entries(s)) for s in ("fit", "report")}
    # fit, validate and report read timings through dlperf.measurements.timings_files (issue 14
    # item 6), which reads a brought-in CSV with dlperf.measurements.external
    assert "dlperf.measurements.timings_files" in closure["fit"]
    assert "dlperf.measurements.external" in closure["fit"] and "dlperf.stages" in closure["fit"]
    assert not any(m.startswith("dlperf.report") for m in closure["fit"])
    assert not any(m.startswith("dlperf.validate") for m in closure["report"])


def digests_after(tmp_path, edit) -> tuple[dict, dict]:
    """Every stage's digest (bench per framework) of a copy of the package changed by
    ``edit(package)``, beside the digests of the package as it is."""
    import shutil

    package = tmp_path / "dlperf"
    shutil.copytree(SRC / "dlperf", package, ignore=shutil.ignore_patterns("__pycache__"))
    edit(package)
    script = (
        "from dlperf.pipeline import provenance as p\n"
        "import json\n"
        "print(json.dumps({s: p.code_digest('bench', s) for s in p.FRAMEWORK_ENTRIES}"
        " | {s: p.code_digest(s) for s in p.STAGE_ENTRIES}))"
    )
    changed = json.loads(
        subprocess.run(
            [sys.executable, "-c", script],
            env={**os.environ, "PYTHONPATH": str(tmp_path)},
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    )
    unchanged = {fw: provenance.code_digest("bench", fw) for fw in provenance.FRAMEWORK_ENTRIES}
    unchanged |= {s: provenance.code_digest(s) for s in provenance.STAGE_ENTRIES}
    return changed, unchanged


def test_a_changed_module_changes_exactly_the_digests_of_stages_that_run_it(tmp_path):
    """A copy of the package with one changed statement in the MXNet networks."""

    def edit(package):
        nets = package / "bench" / "mx_nets.py"
        nets.write_text(nets.read_text() + "\nCHANGED = 1\n")

    changed, unchanged = digests_after(tmp_path, edit)
    assert {k for k in changed if changed[k] != unchanged[k]} == {"mxnet"}


def test_an_edited_gpu_catalogue_changes_the_digest_of_the_fit_not_of_a_benchmark(tmp_path):
    """The catalogue is data beside the hardware package's modules: the stages that read it
    (fit among them) re-run when a figure in it changes; no benchmark does."""

    def edit(package):
        catalogue = package / "hardware" / "catalogue.yaml"
        catalogue.write_text(catalogue.read_text() + "\n# an edited figure\n")

    changed, unchanged = digests_after(tmp_path, edit)
    moved = {k for k in changed if changed[k] != unchanged[k]}
    assert "fit" in moved and not moved & set(provenance.FRAMEWORK_ENTRIES)


LOADED = (
    "\nprint(json.dumps(sorted(m for m in sys.modules "
    "if m == 'dlperf' or m.startswith('dlperf.'))))"
)


def loaded_modules(script: str, python: str = sys.executable) -> set[str]:
    proc = subprocess.run(
        [python, "-c", "import json, sys\n" + textwrap.dedent(script) + LOADED],
        env={**os.environ, "PYTHONPATH": str(SRC), "MPLBACKEND": "Agg"},
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return set(json.loads(proc.stdout.splitlines()[-1]))


@pytest.fixture
def timings_csv(tmp_path, record_factory):
    records = []
    for procs in (1, 2, 4):
        for batch in (8, 16, 32):
            for data in (64, 128):
                path = tmp_path / "runs" / f"p{procs}_b{batch}_d{data}.json"
                iter_s = 0.01 * batch / 8 + 0.002 * procs
                atomic_write_json(
                    path, record_factory(procs=procs, batch=batch, data=data, iter_s=iter_s)
                )
                records.append(str(path))
    out = tmp_path / "timings.csv"
    from dlperf import stages

    stages.aggregate(records, out, None, tmp_path / "failures.csv")
    return out, records


def test_closure_of_each_analysis_stage_is_what_a_real_run_imports(timings_csv, tmp_path):
    timings, records = timings_csv
    runs = {
        "aggregate": f"""
            from dlperf import stages
            stages.aggregate({records!r}, {str(tmp_path / "t.csv")!r}, None,
                             {str(tmp_path / "f.csv")!r})
        """,
        "fit": f"""
            from dlperf import stages
            stages.fit({str(timings)!r}, "pytorch", {{"usl": {{}}}}, 0,
                       {str(tmp_path / "m.json")!r})
        """,
        "validate": f"""
            from dlperf import stages
            stages.validate({str(timings)!r}, "pytorch", {{"usl": {{}}}}, {{"kfold": {{"k": 2}}}},
                            0, {str(tmp_path / "v.csv")!r}, {str(tmp_path / "s.csv")!r}, n_boot=20)
        """,
    }
    for stage, script in runs.items():
        expected = provenance.import_closure(provenance.stage_entries(stage))
        assert loaded_modules(script) == expected, stage


@pytest.mark.slow
def test_closure_of_the_report_is_what_a_real_report_imports(timings_csv, tmp_path):
    timings, _ = timings_csv
    script = f"""
        from dlperf import stages
        stages.fit({str(timings)!r}, "pytorch", {{"usl": {{}}}}, 0, {str(tmp_path / "m.json")!r})
        stages.validate({str(timings)!r}, "pytorch", {{"usl": {{}}}}, {{"kfold": {{"k": 2}}}},
                        0, {str(tmp_path / "v.csv")!r}, {str(tmp_path / "s.csv")!r}, n_boot=20)
        from dlperf.report.study import ReportSources
        sources = ReportSources({str(timings)!r}, None, [{str(tmp_path / "m.json")!r}],
                                {str(tmp_path / "s.csv")!r}, [{str(tmp_path / "v.csv")!r}],
                                {{"models": {{"usl": {{}}}}}})
        stages.report(sources, {str(tmp_path / "r.html")!r})
    """
    expected = provenance.import_closure(provenance.stage_entries("report"))
    loaded = loaded_modules(script)
    # The script runs fit and validate first: the report's own closure must be inside.
    assert expected <= loaded
    fit_validate = provenance.import_closure(
        provenance.stage_entries("fit") + provenance.stage_entries("validate")
    )
    assert loaded == expected | fit_validate


def _framework_python(framework: str) -> str | None:
    requirements = SRC.parent / "envs" / f"{framework}.txt"
    if not requirements.exists():
        return None
    env = envs.env_dir(framework, requirements, envs.default_root())
    python = env / "bin" / "python"
    return str(python) if (env / envs.COMPLETE_MARKER).exists() else None


def test_closure_of_the_driver_is_what_the_driver_imports():
    """The driver side of every framework's benchmark runs in the workflow's environment."""
    loaded = loaded_modules("import dlperf.bench.runner")
    assert loaded == provenance.import_closure(("dlperf.bench.runner",))


@pytest.mark.slow
@pytest.mark.framework
@pytest.mark.parametrize("framework", sorted(provenance.FRAMEWORK_ENTRIES))
def test_closure_of_a_benchmark_is_what_its_processes_import(framework, tmp_path):
    """A real one-process worker run (one tiny epoch) in the framework's own environment:
    its imports, lazy ones (backend, networks, harness) included, plus the driver's and the
    framework's other processes' (started by module name)."""
    python = _framework_python(framework)
    if python is None:
        pytest.skip(f"the {framework} environment is not built (the workflow builds it)")
    config = RunConfig(framework, "mlp", "cpu", 1, 1, 8, 16, 0, warmup_iters=1)
    (tmp_path / "config.json").write_text(json.dumps(config.to_dict()))
    others = [m for m in provenance.FRAMEWORK_ENTRIES[framework] if m.endswith("_service")]
    argv = ["worker", "--config", str(tmp_path / "config.json"), "--work-dir", str(tmp_path)]
    script = f"""
        import runpy
        import dlperf.bench.runner
        {"".join(f"import {m}; " for m in others)}
        sys.argv = {argv!r}
        try:
            runpy.run_module("dlperf.bench.worker", run_name="__main__")
        except SystemExit as end:
            assert not end.code, open({str(tmp_path / "rank0.json")!r}).read()
        import dlperf.bench.worker  # ran as __main__ above; the module is the same file
    """
    loaded = loaded_modules(script, python)
    assert json.loads((tmp_path / "rank0.json").read_text())["status"] == "ok"
    assert loaded == provenance.import_closure(provenance.stage_entries("bench", framework))


def test_workflow_code_digests_are_kept_under_the_digest_of_the_sources(tmp_path, monkeypatch):
    from dlperf.pipeline import provenance

    cache = tmp_path / "code-digests.json"
    digests = provenance.workflow_code_digests(["pytorch"], cache)
    assert digests["fit"] == provenance.code_digest("fit")
    assert digests["bench:pytorch"] == provenance.code_digest("bench", "pytorch")
    key = next(iter(json.loads(cache.read_text())))
    # A cached answer is read back; another source tree (a file changed) computes them anew.
    cache.write_text(json.dumps({key: {**digests, "fit": "cached"}}))
    assert provenance.workflow_code_digests(["pytorch"], cache)["fit"] == "cached"
    monkeypatch.setattr(provenance, "_source_tree_key", lambda: "another tree")
    assert provenance.workflow_code_digests(["pytorch"], cache)["fit"] == digests["fit"]
    assert list(json.loads(cache.read_text())) == ["another tree"]
