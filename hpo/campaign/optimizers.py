"""The optimizers a campaign can run: one table, read by the settings, the CLI, SMAC's assembly
and the docs.

Each :class:`Optimizer` names its facade builder, whether it races budgets (multi-fidelity),
the names older ``campaign.json`` files hold for it, and one line for ``hpo run --help``.
:class:`hpo.campaign.config.CampaignConfig` checks a name against the table,
:func:`hpo.campaign.smac.facades.make_facade` calls the builder, ``hpo run --optimizer`` offers the
names, and ``tests/campaign/test_optimizers.py`` checks that docs/campaigns.md lists every
offered one. A built-in optimizer is one ``_builtin`` call at the end of this module, whose
builder is ``build_<name>`` (dashes as underscores) in
:mod:`hpo.campaign.smac.facade_builders`; a plugin's is one :func:`register` call (that test
adds one and runs a campaign with it).

The table holds no SMAC object: a builder is referred to by its ``"module:function"`` path and
imported when a campaign starts, so reading settings or a run folder does not load SMAC (about
3 seconds).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypedDict, Unpack

from hpo.errors import ConfigError

__all__ = [
    "Optimizer",
    "canonical_name",
    "get_optimizer",
    "is_multi_fidelity",
    "known_optimizers",
    "legacy_aliases",
    "multi_fidelity_optimizers",
    "offered_optimizers",
    "register",
    "unregister",
]


@dataclass(frozen=True, kw_only=True)
class Optimizer:
    """One optimizer of the table.

    Parameters
    ----------
    name
        The name ``hpo run --optimizer`` takes and ``campaign.json`` records.
    multi_fidelity
        True when trials run at budgets from ``min_budget`` to ``max_budget`` (successive
        halving or Hyperband); False when every trial runs at ``max_budget``.
    facade
        The facade builder, ``builder(request) -> AbstractFacade`` with a
        :class:`hpo.campaign.smac.facade_builders.FacadeRequest`, or its ``"module:function"``
        path (imported on first use, so the table loads without SMAC). The facade's
        intensifier must be a :class:`hpo.campaign.smac.intensifiers.BaselineFirst`.
    description
        One line for the CLI's help.
    aliases
        Names older ``campaign.json`` files hold for this optimizer; they load as ``name``.
    offered
        False for an optimizer that old runs resume with but new campaigns cannot choose.
    model_based
        True when a surrogate picks configurations after an initial design, of which
        ``--n-local`` makes some the baseline's neighbours; the random optimizers draw every
        configuration and take none.
    """

    name: str
    multi_fidelity: bool
    facade: str | Callable[..., Any]
    description: str
    aliases: tuple[str, ...] = ()
    offered: bool = True
    model_based: bool = True

    def builder(self) -> Callable[..., Any]:
        """The facade builder, imported from its path when given as one."""
        if callable(self.facade):
            return self.facade
        module, _, function = self.facade.partition(":")
        built: Callable[..., Any] = getattr(importlib.import_module(module), function)
        return built


_BUILDERS = "hpo.campaign.smac.facade_builders"
# the order is the CLI's and the docs': the default first
_TABLE: dict[str, Optimizer] = {}


def register(optimizer: Optimizer) -> Optimizer:
    """Add ``optimizer`` to the table; return it.

    Raises
    ------
    ConfigError
        If its name or one of its aliases is taken.
    """
    taken = set(_TABLE) | set(legacy_aliases())
    clash = [n for n in (optimizer.name, *optimizer.aliases) if n in taken]
    if clash:
        raise ConfigError(f"optimizer '{clash[0]}' is registered already")
    _TABLE[optimizer.name] = optimizer
    return optimizer


def unregister(name: str) -> None:
    """Remove the optimizer ``name`` from the table (a test's, or a plugin's)."""
    _TABLE.pop(name, None)


def legacy_aliases() -> dict[str, str]:
    """``{old name: name}`` of the names older ``campaign.json`` files hold."""
    return {alias: o.name for o in _TABLE.values() for alias in o.aliases}


def canonical_name(name: str) -> str:
    """``name``, or the optimizer an old name of :func:`legacy_aliases` stands for."""
    return legacy_aliases().get(name, name)


def get_optimizer(name: str) -> Optimizer:
    """The optimizer ``name`` (an old name is accepted).

    Raises
    ------
    ConfigError
        If no optimizer has that name.
    """
    found = _TABLE.get(canonical_name(name))
    if found is None:
        raise ConfigError(
            f"campaign setting 'optimizer': expected one of {', '.join(offered_optimizers())}, "
            f"found {name!r}"
        )
    return found


def offered_optimizers() -> tuple[str, ...]:
    """The names a new campaign can choose, the default first."""
    return tuple(n for n, o in _TABLE.items() if o.offered)


def known_optimizers() -> tuple[str, ...]:
    """Every name a campaign.json may hold after aliases are resolved (offered or not)."""
    return tuple(_TABLE)


def multi_fidelity_optimizers() -> tuple[str, ...]:
    """The optimizers whose trials run at budgets from ``min_budget`` to ``max_budget``."""
    return tuple(n for n, o in _TABLE.items() if o.multi_fidelity)


def is_multi_fidelity(name: str) -> bool:
    """Whether the optimizer ``name`` races budgets (see :attr:`Optimizer.multi_fidelity`)."""
    return get_optimizer(name).multi_fidelity


class _Flags(TypedDict, total=False):
    """:class:`Optimizer`'s fields that have defaults."""

    aliases: tuple[str, ...]
    offered: bool
    model_based: bool


def _builtin(name: str, description: str, *, multi_fidelity: bool, **flags: Unpack[_Flags]) -> None:
    """Register a built-in optimizer, whose builder is ``build_<name>`` of ``_BUILDERS`` with
    the name's dashes as underscores (``model-hb``: ``build_model_hb``)."""
    facade = f"{_BUILDERS}:build_{name.replace('-', '_')}"
    register(
        Optimizer(
            name=name,
            multi_fidelity=multi_fidelity,
            facade=facade,
            description=description,
            **flags,
        )
    )


_builtin(
    "model-hb", "random-forest surrogate on Hyperband brackets (BOHB-style)", multi_fidelity=True
)
_builtin("model-sh", "the same with successive halving", multi_fidelity=True)
_builtin(
    "random-hb",
    "model-free Hyperband",
    multi_fidelity=True,
    model_based=False,
    aliases=("hyperband",),
)
_builtin("bo", "single-fidelity BO at --max-budget", multi_fidelity=False)
_builtin("random", "random search at --max-budget", multi_fidelity=False, model_based=False)
# random sampling raced by successive halving: not offered any more, old runs resume
_builtin(
    "random-sh",
    "random sampling raced by successive halving (old runs only)",
    multi_fidelity=True,
    model_based=False,
    aliases=("sh",),
    offered=False,
)
