"""Benchmarks: each figure as a ratio to a baseline measured in the same run."""
