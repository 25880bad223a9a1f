"""The item response model and its estimation: marginal maximum a posteriori over a sparse 0/1 matrix.

For member m of ability theta and question i, the probability of a right answer is

    P = c_i + (1 - c_i) * sigmoid(a_i * (theta - b_i))

with ``c_i = 0`` (1PL, 2PL) or ``1 / choices`` (3PL, the guessing floor fixed). 1PL shares one ``a``; the
explanatory model (linear logistic test model) replaces each ``b_i`` by ``x_i . beta``, its design factors'
effects. Ability is integrated out over a fixed grid (``N(0, 1)`` in the population, which fixes the scale), the
item parameters maximise the marginal likelihood plus weak priors (``log a ~ N(0, 1)``, ``b ~ N(0, 3)``: a
question every member got right keeps a finite difficulty) with L-BFGS in torch. Standard errors are the inverse
of the empirical cross-product information (the members' score vectors); abilities are posterior means and
standard deviations (EAP). docs/IRT.md gives the reading and docs/DEPENDENCIES.md why not an IRT library.
"""

from dataclasses import dataclass

import numpy as np

GRID = np.linspace(-6.0, 6.0, 81)
"""The ability grid the marginal likelihood integrates over."""
Z95 = 1.959964
"""The normal quantile of a two-sided 95 % interval."""
PRIOR_LOG_A_SD = 1.0
PRIOR_B_SD = 3.0


@dataclass(frozen=True)
class Estimate:
    """Fitted item parameters (``a``, ``b`` and their standard errors), effects ``beta`` (explanatory model only)."""

    a: np.ndarray
    a_se: np.ndarray
    b: np.ndarray
    b_se: np.ndarray
    beta: np.ndarray | None = None
    beta_se: np.ndarray | None = None


def estimate(
    right: np.ndarray,
    seen: np.ndarray,
    floor: np.ndarray,
    shared_a: bool = False,
    design: np.ndarray | None = None,
) -> Estimate:
    """Item parameters of the members' answers ``right`` (0/1, members x questions) where ``seen`` (bool).

    ``floor``: each question's guessing floor (zeros but for 3PL); ``shared_a``: one discrimination (1PL);
    ``design`` (questions x factors): difficulties are ``design @ beta`` (the explanatory model).
    """
    import torch

    y = torch.as_tensor(np.where(seen, right, 0), dtype=torch.float64)
    mask = torch.as_tensor(seen, dtype=torch.float64)
    c = torch.as_tensor(floor, dtype=torch.float64)
    grid = torch.as_tensor(GRID, dtype=torch.float64)
    log_w = torch.log(torch.softmax(-(grid**2) / 2, 0))
    n_items = right.shape[1]
    x = None if design is None else torch.as_tensor(design, dtype=torch.float64)
    log_a = torch.zeros(1 if shared_a else n_items, dtype=torch.float64, requires_grad=True)
    loc = torch.zeros(n_items if x is None else x.shape[1], dtype=torch.float64, requires_grad=True)
    with torch.no_grad():  # start b at the logit of each question's error rate
        rate = ((mask - y).sum(0) + 0.5) / (mask.sum(0) + 1.0)
        start = torch.log(rate / (1 - rate))
        loc.copy_(start if x is None else torch.linalg.lstsq(x, start[:, None]).solution[:, 0])

    def difficulty():
        return loc if x is None else x @ loc

    def loss():
        a, b = torch.exp(log_a).expand(n_items), difficulty()
        p = _probability(grid, a, b, c)
        member = torch.logsumexp(y @ torch.log(p).T + (mask - y) @ torch.log1p(-p).T + log_w, dim=1)
        prior = (log_a**2).sum() / (2 * PRIOR_LOG_A_SD**2) + (difficulty() ** 2).sum() / (2 * PRIOR_B_SD**2)
        return -member.sum() + prior

    optimizer = torch.optim.LBFGS(
        [log_a, loc], max_iter=300, tolerance_grad=1e-4, tolerance_change=1e-7, line_search_fn="strong_wolfe"
    )

    def closure():
        optimizer.zero_grad()
        value = loss()
        value.backward()
        return value

    optimizer.step(closure)
    with torch.no_grad():
        a, b = torch.exp(log_a).expand(n_items).detach(), difficulty().detach()
        scores_a, scores_b = _member_scores(y, mask, grid, log_w, a, b, c)
    a_np, b_np = a.numpy().copy(), b.numpy().copy()
    if x is not None:  # d b / d beta = x: the effects' scores are the questions' summed through the design
        effect_scores = scores_b @ x.numpy()
        info = effect_scores.T @ effect_scores + np.eye(x.shape[1]) / PRIOR_B_SD**2
        beta_se = np.sqrt(np.diag(np.linalg.pinv(info)))
        b_se = np.sqrt(np.einsum("ik,kl,il->i", design, np.linalg.pinv(info), design))
        a_se = _a_se(scores_a, a_np, shared_a)
        return Estimate(a_np, a_se, b_np, b_se, loc.detach().numpy().copy(), beta_se)
    b_se, a_se = _item_se(scores_a, scores_b, a_np, shared_a)
    return Estimate(a_np, a_se, b_np, b_se)


def abilities(
    right: np.ndarray, seen: np.ndarray, a: np.ndarray, b: np.ndarray, floor: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Each member's ability: the posterior mean and SD over ``GRID`` given its seen answers (EAP)."""
    return moments(posterior(right, seen, a, b, floor))


def moments(post: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The mean and SD of posteriors over ``GRID`` (rows, or one posterior)."""
    mean = post @ GRID
    return mean, np.sqrt(np.maximum(post @ GRID**2 - mean**2, 0.0))


def posterior(right: np.ndarray, seen: np.ndarray, a: np.ndarray, b: np.ndarray, floor: np.ndarray) -> np.ndarray:
    """Members x grid: each member's posterior over ability, from a ``N(0, 1)`` prior and its seen answers."""
    p = probability(GRID, a, b, floor)
    y = np.where(seen, right, 0).astype(float)
    log_post = y @ np.log(p).T + (seen - y) @ np.log1p(-p).T - GRID**2 / 2
    log_post -= log_post.max(axis=1, keepdims=True)
    post = np.exp(log_post)
    return post / post.sum(axis=1, keepdims=True)


def probability(theta: np.ndarray, a: np.ndarray, b: np.ndarray, floor: np.ndarray) -> np.ndarray:
    """P(right) for abilities ``theta`` (rows) and questions (columns)."""
    z = a[None, :] * (np.asarray(theta, dtype=float)[:, None] - b[None, :])
    return np.clip(floor + (1 - floor) / (1 + np.exp(-z)), 1e-9, 1 - 1e-9)


def information(theta: float, a: np.ndarray, b: np.ndarray, floor: np.ndarray) -> np.ndarray:
    """Each question's Fisher information about ability at ``theta`` (the 3PL form; 2PL when the floor is 0)."""
    p = probability(np.array([theta]), a, b, floor)[0]
    return a**2 * ((p - floor) / (1 - floor)) ** 2 * (1 - p) / p


def _probability(grid, a, b, c):
    import torch

    z = a[None, :] * (grid[:, None] - b[None, :])
    return torch.clamp(c + (1 - c) * torch.sigmoid(z), 1e-9, 1 - 1e-9)


def _member_scores(y, mask, grid, log_w, a, b, c):
    """Each member's score (gradient of its log marginal likelihood) for each question's log a and b."""
    import torch

    p = _probability(grid, a, b, c)  # grid x items
    log_post = y @ torch.log(p).T + (mask - y) @ torch.log1p(-p).T + log_w
    post = torch.softmax(log_post, dim=1)  # members x grid
    s = torch.sigmoid(a[None, :] * (grid[:, None] - b[None, :]))
    dp_dz = (1 - c) * s * (1 - s)  # grid x items
    scores_a = torch.zeros_like(y)
    scores_b = torch.zeros_like(y)
    for q in range(len(grid)):  # members x items per grid point: memory stays members x items
        r = mask * (y - p[q]) / (p[q] * (1 - p[q])) * dp_dz[q]
        scores_a += post[:, q : q + 1] * r * (a * (grid[q] - b))
        scores_b += post[:, q : q + 1] * r * (-a)
    return scores_a.numpy(), scores_b.numpy()


def _item_se(scores_a, scores_b, a, shared_a):
    """Standard errors of b and a from each question's 2 x 2 cross-product information (plus the priors)."""
    if shared_a:
        info_b = (scores_b**2).sum(0) + 1 / PRIOR_B_SD**2
        return np.sqrt(1 / info_b), _a_se(scores_a, a, True)
    aa = (scores_a**2).sum(0) + 1 / PRIOR_LOG_A_SD**2
    bb = (scores_b**2).sum(0) + 1 / PRIOR_B_SD**2
    ab = (scores_a * scores_b).sum(0)
    det = aa * bb - ab**2
    return np.sqrt(aa / det), a * np.sqrt(bb / det)


def _a_se(scores_a, a, shared_a):
    if shared_a:
        total = scores_a.sum(1)
        return np.full_like(a, a[0] * np.sqrt(1 / ((total**2).sum() + 1 / PRIOR_LOG_A_SD**2)))
    return a * np.sqrt(1 / ((scores_a**2).sum(0) + 1 / PRIOR_LOG_A_SD**2))
