"""Stage 2: mine outcome contracts from the ingest store, cross-fitted by task.

The rooms follow the data flow; each imports only the rooms above it, and ``api.py`` is
the one door (:func:`mine`, :func:`mine_shards`).

profile/    what is read from the store before anything is proposed
            where (``--where``), shards (one store or many), maps (id-keyed objects),
            formats (string shapes, personal values), aggregates (per tool·path·task
            profiles, in SQL), listing (values per task), state (what is built, reused)
propose/    what the templates read and propose
            context (a fold's summed profiles), templates/ (one family a module),
            measure (checked and violating calls), relations (path pairs),
            conditional (targets and features of decision-tree predicates)
evidence/   candidates and their held-out records
            crossfit (propose on K-1 folds, count on the held-out one), pooling (units
            and family priors), schema (one structural schema per tool and side),
            detect (injected faults each candidate catches), noise (trial flips)
select/     what a tool keeps
            budget (eligibility, price, the false-alarm budget), implied (links),
            describe (one-line descriptions)
runs/       run-level contracts: facts (runs read from the store), templates (what is
            proposed), trajectory (cross-fitted per run)
api.py      ``mine``: the stages in order
"""

from tracemine.mine.api import mine

__all__ = ["mine"]
