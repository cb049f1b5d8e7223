"""Candidates with their held-out records: cross-fitting, pooled family priors, the structural
schema, detection estimates and trial noise."""
