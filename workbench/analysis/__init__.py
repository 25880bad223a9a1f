"""The analyses beyond accuracy: numbers about prediction frames and populations of models.

One module a question, each importing only what it needs (``import workbench.analysis`` loads none of them):

- ``comparison``: ``compare(a, b)``, paired differences with cluster-bootstrap intervals, McNemar, Holm;
- ``calibration``: ECE, Brier and the reliability diagram of a model's choice probabilities;
- ``consistency``: template sensitivity, the same question asked in other phrasings;
- ``atlas``: the taxonomy atlas, strict cluster accuracy per WordNet node;
- ``release``: a probe set beside a released file of the same probe, drawn as the release was;
- ``ways``: ways of asking side by side, one model asked several ways and the paired difference of two;
- ``difficulty``: what makes an item hard, a mixed-effects logistic model over item properties;
- ``decodability``: behaviour beside representation, per concept its class decoded from frozen states (edge probes,
  MDL) against its cluster's strict accuracy;
- ``model``, ``pls``, ``populations`` (SPEC §8): PLS path modelling over a population of models
  (``PathModel``, ``parse_model``, ``check_data``, ``PLSSpec``, ``fit_pls``, ``PLSResult``, ``population``; the
  module is ``populations`` so that importing it never hides the function ``population``).

>>> result = fit_pls(population(runs=["runs/inoc"]), parse_model(TEXT), PLSSpec(bootstrap=500))  # doctest: +SKIP
"""

import lazy_loader

__getattr__, __dir__, __all__ = lazy_loader.attach(
    __name__,
    submodules=[
        "atlas",
        "calibration",
        "comparison",
        "consistency",
        "decodability",
        "difficulty",
        "model",
        "pls",
        "populations",
        "release",
        "ways",
    ],  # fmt: skip
    submod_attrs={
        "model": ["PathModel", "check_data", "parse_model"],
        "pls": ["SCHEMES", "PLSResult", "PLSSpec", "fit_pls"],
        "populations": ["population"],
        "decodability": ["DecodabilitySpec", "decodability"],
    },
)
