"""One line per scoring rule, saying what a choice's score is: shown by the reports next to the
results of any rule a prediction frame uses (``workbench.reports``)."""

RULE_NOTES = {
    "logit": "mcqa: the multiple-choice head's logit for [CLS] question [SEP] choice [SEP].",
    "cosine": "similarity: cosine between the mean token embeddings of question and choice.",
    "mc-mlm": (
        "mlm: log-probability of the one-token choice at the [MASK], softmax restricted to the question's choices."
    ),
    "pll-sum": (
        "mlm: pseudo-log-likelihood, the sum over the choice's tokens of log p(token | statement with it masked)."
    ),
    "pll-mean": "mlm: pseudo-log-likelihood per choice token (the pll-sum over the number of tokens).",
    "sum": "causal/seq2seq: log-likelihood of the choice's tokens given the prompt, summed (favours short choices).",
    "mean-token": "causal/seq2seq: that log-likelihood per choice token (no penalty for long choices).",
    "mean-char": "causal/seq2seq: that log-likelihood per character of the choice (independent of the tokenizer).",
    "mi": (
        "causal/seq2seq: that log-likelihood minus the choice's under a question-free prompt "
        "(how much the question helps)."
    ),
}
