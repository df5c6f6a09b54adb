"""A faster constructor for the frozen, slotted record types the passes and the report make by the hundred per
estimate (plan.Decision, plan.Copy, report.CopyRow, ...).

A frozen dataclass's generated __init__ sets each field through object.__setattr__ (its own __setattr__
raises), about three times slower than writing the slots directly; a NAS loop makes some 300 such records
per candidate. `fast_init` gives the class an __init__ with the same signature that writes each slot through
its member descriptor. Nothing else changes: equality, hashing, repr, and the FrozenInstanceError on
assignment after construction are the dataclass's own.
"""
from __future__ import annotations

from dataclasses import MISSING, fields


def fast_init(cls):
    """Class decorator, applied above @dataclass(frozen=True, slots=True) on a class whose fields all take
    their values (or plain defaults) in __init__ and which has no __post_init__."""
    if "__slots__" not in cls.__dict__ or hasattr(cls, "__post_init__"):
        raise TypeError(f"fast_init: {cls.__name__} is not a slotted dataclass without __post_init__")
    env: dict = {}
    params, body = [], []
    for f in fields(cls):
        if not f.init or f.default_factory is not MISSING or f.kw_only:
            raise TypeError(f"fast_init: field {cls.__name__}.{f.name} needs the generated __init__")
        env[f"_set_{f.name}"] = cls.__dict__[f.name].__set__       # the slot's member descriptor
        if f.default is MISSING:
            params.append(f.name)
        else:
            env[f"_default_{f.name}"] = f.default
            params.append(f"{f.name}=_default_{f.name}")
        body.append(f"    _set_{f.name}(self, {f.name})")
    exec(f"def __init__(self, {', '.join(params)}):\n" + "\n".join(body or ["    pass"]) + "\n", env)
    init = env["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    init.__doc__ = cls.__init__.__doc__
    cls.__init__ = init
    return cls
