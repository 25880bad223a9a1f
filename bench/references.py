"""The plain loops the library's paths are measured against, shared by the bench's cases and the GPU check (they
lived in gpu_check.py, which bench_scoring.py imported while gpu_check.py imported bench_scoring.py: a circle)."""


def rendered(frame):
    """Each question's (prompt, continuation) per choice, as the causal scorer renders them."""
    import polars as pl

    from workbench.scoring.prompts import load_prompts, render_prompts

    pairs = frame.select("probe", "question", pl.col("choices").alias("choice")).explode("choice")
    pairs = render_prompts(pairs, load_prompts())
    return list(zip(pairs["prompt"], pairs["continuation"]))


def reference_loop(network, tokenizer, units: list[tuple[str, str]], batch_size: int, device: str) -> list[float]:
    """What a user writes: prompt and continuation tokenised apart, concatenated, right-padded batches in the
    given order, one forward, a full-vocabulary float32 log-softmax, the continuation's log-probabilities summed."""
    import torch

    prompts = tokenizer([prompt for prompt, _ in units])["input_ids"]
    conts = tokenizer([cont for _, cont in units], add_special_tokens=False)["input_ids"]
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id
    sums: list[torch.Tensor] = []
    with torch.inference_mode():
        for at in range(0, len(units), batch_size):
            rows = [(p + c, len(c)) for p, c in zip(prompts[at : at + batch_size], conts[at : at + batch_size])]
            width = max(len(ids) for ids, _ in rows)
            ids = torch.full((len(rows), width), pad, dtype=torch.long)
            mask = torch.zeros((len(rows), width), dtype=torch.long)
            keep = torch.zeros((len(rows), width - 1), dtype=torch.bool)
            for row, (tokens, count) in enumerate(rows):
                ids[row, : len(tokens)] = torch.tensor(tokens)
                mask[row, : len(tokens)] = 1
                keep[row, len(tokens) - count - 1 : len(tokens) - 1] = True
            ids, mask, keep = ids.to(device), mask.to(device), keep.to(device)
            logits = network(input_ids=ids, attention_mask=mask).logits
            logprobs = torch.log_softmax(logits[:, :-1].float(), dim=-1).gather(-1, ids[:, 1:, None]).squeeze(-1)
            sums.append((logprobs * keep).sum(dim=1))
    return torch.cat(sums).cpu().tolist()
