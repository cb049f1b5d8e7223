"""Mining past one machine: the shards of a corpus read, profiled and counted on a cluster.

    plan.py     the shards of a corpus: files, and byte ranges of large JSON-lines files
    worker.py   what a worker does: read a shard into its store, merge stores of shards
                that share tasks, run a mining step on a store
    dask.py     the engine: Dask distributed (with address.py, the modules that import it)
    api.py      :func:`mine_sharded`, which the CLI's ``mine --workers`` calls
    address.py  what ``--scheduler`` may name, and the first answer asked of it

Mining itself is the same code as on one store: its steps run on every shard's store and
their results merge exactly (:mod:`tracemine.mine.profile.shards`). Another engine (Ray, Spark)
is another module beside ``dask.py`` with the same two classes.
"""

from tracemine.engine.address import Tls
from tracemine.engine.api import ShardedMine, mine_sharded

__all__ = ["ShardedMine", "Tls", "mine_sharded"]
