"""``python -m tracemine.simulate ...`` is ``tracemine simulate ...``."""

import typer

from tracemine.cli.simulate import simulate_command

app = typer.Typer(add_completion=False, pretty_exceptions_enable=False)
app.command()(simulate_command)
app(prog_name="python -m tracemine.simulate")
