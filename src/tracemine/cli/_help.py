"""How ``--help`` reads: ``-h`` wherever ``--help`` works, no type labels (``<bool>``,
``<list[Path]>``) where a metavar or a flag says enough, and docstring paragraphs that
wrap to the terminal instead of breaking where the source broke them."""

from __future__ import annotations

import re
from typing import Any

import typer
from typer.core import TyperArgument, TyperCommand, TyperGroup

HELP_NAMES = ["-h", "--help"]
CONTEXT = {"help_option_names": HELP_NAMES}


class _NamedArgument(TyperArgument):
    """An argument with a metavar: the metavar is its whole description."""

    def display_type_rich(self, ctx: Any) -> str | None:
        return None if self.metavar else super().display_type_rich(ctx)

    def _usage_display_name(self) -> str:
        name = super()._usage_display_name()
        # a metavar that already says "..." is not repeated: {FILE...} not {FILE...}...
        said = self.metavar is not None and self.metavar.endswith("...")
        return name.removesuffix("...") if said and self.nargs != 1 else name


def _paragraphs(text: str | None) -> str | None:
    """Lines of a docstring's paragraph joined: rich wraps them to the terminal."""
    if not text:
        return text
    import inspect

    blocks = inspect.cleandoc(text).split("\n\n")
    return "\n\n".join(re.sub(r"\s*\n\s*", " ", block) for block in blocks)


def _tidy(command: Any) -> None:
    command.help = _paragraphs(command.help)
    for param in command.params:
        if getattr(param, "is_flag", False) and param.metavar is None:
            param.metavar = ""  # a flag takes no value: no "<bool>" beside it
        if type(param) is TyperArgument and param.metavar:
            # the label typer prints beside an argument's metavar cannot be turned off
            # per argument; the subclass leaves it out and changes nothing else
            param.__class__ = _NamedArgument


def _quiet_help_option(option: Any) -> Any:
    if option is not None:
        option.metavar = ""  # a flag: no "<bool>" beside it
    return option


class Command(TyperCommand):
    """A command whose help follows the module's rules."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        _tidy(self)

    def get_help_option(self, ctx: Any) -> Any:
        return _quiet_help_option(super().get_help_option(ctx))


class Group(TyperGroup):
    """A group (the app, ``review``) whose help follows the module's rules."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        _tidy(self)

    def get_help_option(self, ctx: Any) -> Any:
        return _quiet_help_option(super().get_help_option(ctx))


def adopt(app: typer.Typer) -> None:
    """Give every command and group of ``app`` (registered by now) these classes and
    ``-h``; commands keep a class of their own if they name one."""
    if app.info.cls in (None, TyperGroup) or not app.info.cls:
        app.info.cls = Group
    app.info.context_settings = {**CONTEXT, **(app.info.context_settings or {})}
    for command in app.registered_commands:
        if command.cls in (None, TyperCommand):  # typer's default, not a choice
            command.cls = Command
        command.context_settings = {**CONTEXT, **(command.context_settings or {})}
    for group in app.registered_groups:
        if group.typer_instance is not None:
            adopt(group.typer_instance)
