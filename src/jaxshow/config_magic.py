"""``%jaxconfig``: JAX's config options, where each value came from, and what changing it costs.

Glue only: options, display and ``-o``. The capture lives in
:mod:`jaxshow.config_inventory`.
"""

from __future__ import annotations

from typing import Any

from IPython.core.error import UsageError
from IPython.core.magic import Magics, line_magic, magics_class, no_var_expand
from IPython.core.magic_arguments import argument, argument_group, magic_arguments
from IPython.display import display
from traitlets import Integer

from jaxshow import render
from jaxshow.config_inventory import config_report
from jaxshow.magic_args import GivenOnce, fitted_errors, output_name_error, parse_options, silenced, usage


class mutually_exclusive(argument_group):  # noqa: N801 - named like IPython's argument decorators
    """Like ``argument_group``, for the arguments below it: at most one of them may be given."""

    def add_to_parser(self, parser: Any, group: Any) -> Any:
        return parser.add_mutually_exclusive_group(*self.args, **self.kwds)


@magics_class
class JaxConfigMagics(Magics):
    """The ``%jaxconfig`` line magic and its configurable row budget.

    Not ``ConfigMagics``: that is IPython's own class (``%config``), and magics
    are registered, configured and unregistered by class name.
    """

    max_rows = Integer(500, help="Show at most this many options in one %jaxconfig report; the record keeps all.").tag(config=True)

    @magic_arguments()
    @argument("filter", nargs="?", metavar="FILTER",
              help="Only options whose name contains FILTER, or matches it as a glob when it has * ? or [ (case-insensitive).")
    @argument("--changed", action="store_true",
              help="Only options whose value differs from JAX's default, and which of them change JAX's cache keys.")
    @argument("-o", "--output", metavar="NAME", action=GivenOnce, help="Also store the report object in the variable NAME.")
    @mutually_exclusive()
    @argument("--scopable", action="store_true", help="Only options with a context manager (JAX's State).")
    @argument("--flags", action="store_true", help="Only options without one (JAX's Flag).")
    @no_var_expand
    @line_magic
    @fitted_errors
    def jaxconfig(self, line: str = ""):
        """Show JAX's config options: value, default, source, what a change costs.

        One row per option of the JAX in this process (``jax.config.values``):
        the value this thread sees, JAX's default, what set it (the default, an
        environment variable read at import, ``jax.config.update``, or a
        context manager active now on this thread), its kind (scopable: a
        context manager exists, as for ``jax.enable_x64``; flag: one value for
        the process, set only by ``jax.config.update`` or the environment),
        whether a change re-traces every jitted function (JAX's trace context)
        or adds a jit cache entry (the jit key), and whether it must be set
        before a backend starts. Each option's help text is folded under its
        name. Nothing is changed: the magic only reads. A trailing ``;`` shows
        nothing (useful with ``-o NAME``).

        Examples::

            %jaxconfig
            %jaxconfig x64
            %jaxconfig *dump* --flags
            %jaxconfig --changed
            %jaxconfig --scopable -o cfg;

            with jax.enable_x64(True):
                get_ipython().run_line_magic("jaxconfig", "x64")
        """
        line, silent = silenced(line)
        args = self._parse(line)
        kind = "scopable" if args.scopable else "flag" if args.flags else None
        report = config_report(args.filter, changed=args.changed, kind=kind)
        if not silent:
            display(render.Rendered(report, render.TextBudget(max_rows=self.max_rows)))
        if args.output:
            self.shell.user_ns[args.output] = report

    def _parse(self, line: str) -> Any:
        args = parse_options(self.jaxconfig, line)
        if args.output is not None and (why := output_name_error(self.shell, args.output)):
            raise UsageError(f"{why}\n{usage(self.jaxconfig)}")
        return args

    def shutdown(self) -> None:
        """Nothing to undo: ``%jaxconfig`` installs nothing (called on ``%unload_ext``)."""
