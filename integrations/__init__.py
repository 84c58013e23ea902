"""Adapters for generation engines, one module per engine; each imports its engine only when used."""
