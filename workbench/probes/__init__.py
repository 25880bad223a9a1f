"""Multiple-choice probes built from knowledge graphs (SPEC §2-3)."""
