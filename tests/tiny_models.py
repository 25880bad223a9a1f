"""Tiny random models built from a config, for the plumbing tests (no weights are downloaded)."""

from pathlib import Path


def tiny_multiple_choice_bert(folder: Path, minilm_path: Path, layers: int = 2, positions: int = 64) -> Path:
    """Save a seeded random BERT with a multiple-choice head and the MiniLM's tokenizer into ``folder``."""
    import torch
    from transformers import AutoTokenizer, BertConfig, BertForMultipleChoice

    tokenizer = AutoTokenizer.from_pretrained(minilm_path)  # the MiniLM vocab.txt, lower-cased WordPiece
    config = BertConfig(vocab_size=tokenizer.vocab_size, hidden_size=32, num_hidden_layers=layers,
                        num_attention_heads=2, intermediate_size=64, max_position_embeddings=positions)  # fmt: skip
    torch.manual_seed(0)
    BertForMultipleChoice(config).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder
