"""Sweeps: grids of mixes, algorithms, tables, scenarios and seeds, run on
Dask distributed, resumable, with an HTML report.

A sweep file (TOML, see docs/sweeps.md) names a base (a profile
evaluation or a simulator scenario) and the axes it is repeated over.
:func:`plan` expands it into runs, each with a content hash;
:func:`run` runs them on a Dask cluster (a local one by default), each
run's rows written under its hash in a results directory, so a re-run
resumes; :func:`load` reads the results back as one DataFrame and
:func:`report` writes an HTML page.

>>> import cachepart.sweep as sw
>>> p = sw.plan("examples/sweeps/quick.toml")
>>> len(p.runs)
>>> sw.run("examples/sweeps/quick.toml", workers=2, out="quick-results")
>>> df = sw.load("quick-results")
>>> sw.report("quick-results", "quick.html")

Modules: :mod:`~cachepart.sweep.spec` (the file), :mod:`~cachepart.sweep.plan`
(runs and hashes), :mod:`~cachepart.sweep.execute` (one run in a worker),
:mod:`~cachepart.sweep.store` (the results directory),
:mod:`~cachepart.sweep.runner` (Dask), :mod:`~cachepart.sweep.results`
(loading), :mod:`~cachepart.sweep.report_html` (the page),
``python -m cachepart.sweep`` (the command line).
"""

from cachepart.sweep.plan import Plan, Run
from cachepart.sweep.plan import expand as plan
from cachepart.sweep.report_html import report
from cachepart.sweep.results import load, load_failures, load_samples
from cachepart.sweep.runner import Summary, run
from cachepart.sweep.spec import SweepFileError, SweepSpec

__all__ = [
    "Plan",
    "Run",
    "Summary",
    "SweepFileError",
    "SweepSpec",
    "load",
    "load_failures",
    "load_samples",
    "plan",
    "report",
    "run",
]
