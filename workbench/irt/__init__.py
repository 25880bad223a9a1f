"""Item response theory over the population of models: which questions measure anything, what makes one hard,
and each member's ability on one scale (docs/IRT.md).

    >>> from workbench.irt import responses, fit_irt
    >>> fit = fit_irt(responses(predictions=["preds/"]), model="2pl")   # doctest: +SKIP
"""

from workbench.irt.explain import predict_difficulty
from workbench.irt.fit import MODELS, IrtFit, IrtSpec, fit_irt
from workbench.irt.responses import responses

__all__ = ["MODELS", "IrtFit", "IrtSpec", "fit_irt", "predict_difficulty", "responses"]
