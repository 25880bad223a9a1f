"""Analysis over a population of models (SPEC §8): relate probe scores to downstream accuracy.

- ``PathModel``, ``parse_model``, ``check_data``: latent variables, their score columns, the paths;
- ``PLSSpec``, ``fit_pls``, ``PLSResult``: PLS path modelling with a seeded, parallel bootstrap;
- ``population``: one row of probe scores and original-task accuracy per scored model or
  inoculation checkpoint, assembled from workbench outputs.

>>> result = fit_pls(population(runs=["runs/inoc"]), parse_model(TEXT), PLSSpec(bootstrap=500))  # doctest: +SKIP
"""

from workbench.analysis.model import PathModel, check_data, parse_model
from workbench.analysis.pls import SCHEMES, PLSResult, PLSSpec, fit_pls
from workbench.analysis.population import population

__all__ = ["SCHEMES", "PLSResult", "PLSSpec", "PathModel", "check_data", "fit_pls", "parse_model", "population"]
