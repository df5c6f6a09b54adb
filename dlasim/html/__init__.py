"""Self-contained HTML pages for `--format html -o FILE` (estimate, explain, compare).

One page, inline CSS, pictures as inline SVG written by hand: no scripts, no external assets, no network,
so a page opens offline and can be mailed around. The pictures:

- timeline:  two lanes (DLA, GPU), every step back to back in execution order at its predicted time;
             reformats and GPU<->DLA transitions hatched orange, an arrow between the lanes at each
             transition, a marker at each DLA loadable launch and a strip under each loadable's span;
- bars:      the ~40 longest steps, coloured by what bounds them (compute, memory, overhead);
- roofline:  layer steps at arithmetic intensity (2*MACs/bytes) vs achieved ops/s, log-log, under the
             device roofs (peak ops/s and DRAM bandwidth): the estimate's device peaks (Estimate.peaks,
             computed once by the cost model), or inferred from the cost rows for an estimate given as a dict;
- waterfall: (explain, compare) from the ideal time through each cause to the predicted time.

The renderers read plain dicts (the `to_dict()` forms of Estimate, ExplainResult and CompareResult), so
they do not depend on attribute details of the result classes. All text goes through html.escape.
"""
from __future__ import annotations

from .charts import bars_svg, breakdown_svg, speedup_svg, timeline_svg, waterfall_svg
from .pages import compare_page, estimate_page, explain_page
from .roofline import roofline_svg

__all__ = ["estimate_page", "explain_page", "compare_page", "timeline_svg", "bars_svg", "roofline_svg",
           "breakdown_svg", "waterfall_svg", "speedup_svg"]
