"""Run-level contracts, cross-fitted per run."""
