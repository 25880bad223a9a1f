"""Sweeps: score a population of models on probe sets, planned as data first (``plan_sweep``: a frame of units
to filter), then run by the backends inoculation uses (``run_sweep``: local or Ray), resumable unit by unit.

>>> plan = plan_sweep("sweep.toml", out="sweeps/s1")  # doctest: +SKIP
>>> run_sweep(plan, backend="ray", address="auto")  # doctest: +SKIP
"""

from workbench.sweep.grid import read_grid
from workbench.sweep.plan import PLAN_SCHEMA, SweepSpec, checkpoints, plan_sweep
from workbench.sweep.run import SUMMARY_SCHEMA, run_sweep

__all__ = ["PLAN_SCHEMA", "SUMMARY_SCHEMA", "SweepSpec", "checkpoints", "plan_sweep", "read_grid", "run_sweep"]
