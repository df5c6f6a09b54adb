"""Golden outputs for speed work: the full JSON of many estimates, hashed, to show a faster path changes no
number. Write the set from the code before a change, compare after it:

    python benchmarks/golden_estimates.py write /tmp/golden.json
    python benchmarks/golden_estimates.py check /tmp/golden.json      # exit 1 and the first differences

Cases: every zoo network x {orin-agx, orin-agx:15w, xavier-agx} DLA and GPU, a100 GPU x {fp16, int8} x
batch {1, 2}, some with sparsity enabled or GPU fallback off (a build error is recorded as its message),
plus random candidates of the NAS spaces. Each case's `to_dict(parts=True)` is dumped with sorted keys
and hashed; total_ms is kept beside the hash to show the size of a difference.
"""
from __future__ import annotations

import hashlib
import json
import sys

import dlasim
from dlasim import zoo


def cases():
    for name in zoo.names():
        for hw in ("orin-agx", "orin-agx:15w", "xavier-agx", "a100"):
            for device in (("gpu",) if hw == "a100" else ("dla", "gpu")):
                for prec in ("fp16", "int8"):
                    for batch in (1, 2):
                        yield f"zoo:{name}", hw, dict(device=device, precision=prec, batch=batch)
        yield f"zoo:{name}", "orin-agx", dict(device="dla", precision="int8", batch=1, sparsity="enable")
        yield f"zoo:{name}", "orin-agx", dict(device="dla", precision="fp16", batch=1, gpu_fallback=False)
    from dlasim.nas import mobilenet_v3_space, resnet_space
    for space in (mobilenet_v3_space(), resnet_space()):
        for i, row in enumerate(space.sample(20, seed=42)):
            yield (space.name, row), "orin-agx", dict(device="dla", precision="int8", batch=1)


def digest(model, hw, opts) -> dict:
    label = model if isinstance(model, str) else f"{model[0]}#{','.join(map(str, model[1]))}"
    if not isinstance(model, str):
        from dlasim.nas import mobilenet_v3_space, resnet_space
        space = {"mbv3_space": mobilenet_v3_space(), "resnet_space": resnet_space()}[model[0]]
        model = space.build(model[1])
    try:
        d = dlasim.estimate(model, hw, **opts).to_dict(parts=True)
        text, total = json.dumps(d, sort_keys=True, default=str), d["total_ms"]
    except dlasim.DlasimError as e:
        text, total = f"error: {e}", None
    return {"case": f"{label} {hw} {json.dumps(opts, sort_keys=True)}", "total_ms": total,
            "sha256": hashlib.sha256(text.encode()).hexdigest()}


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 2 or argv[0] not in ("write", "check"):
        print(__doc__.strip().splitlines()[3:5][0].strip(), file=sys.stderr)
        return 2
    got = [digest(*c) for c in cases()]
    if argv[0] == "write":
        with open(argv[1], "w") as f:
            json.dump(got, f, indent=0)
        print(f"{len(got)} cases written to {argv[1]}")
        return 0
    with open(argv[1]) as f:
        want = {g["case"]: g for g in json.load(f)}
    bad = [(g, want.get(g["case"])) for g in got if want.get(g["case"], {}).get("sha256") != g["sha256"]]
    for g, w in bad[:10]:
        print(f"DIFFERS {g['case']}: total {w and w['total_ms']} -> {g['total_ms']}")
    print(f"{len(got) - len(bad)} of {len(got)} cases identical")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
