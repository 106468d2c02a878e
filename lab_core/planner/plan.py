"""Plan: what recommend() returns, with a JSON-ready to_dict().

Keys are stable snake_case; units SI (bytes, seconds, tokens/s, ratios);
values only dict/list/str/int/float/bool/None.
"""
from .assumptions import MEMORY_SAFETY_MARGIN, TIE_TOLERANCE
from .stage import stage_rank


class Plan:
    """The recommended system for one workload.

    parallelism / report: the chosen plan (or, when nothing fits, the closest
    one, with fits False); stage: one of stage.STAGES (what the workload
    forces); shape: the stage id of what the plan itself uses; meters, decisions,
    diagram, checkpoint: see their modules; alternatives: the best fitting plan
    of each other shape (stage ids of what a plan uses) and why it lost;
    unfit_stages: shapes with no fitting plan and their least memory; no_fit: None, or the overflow and the
    smallest GPU count that would fit; search: how much work the search did; pins: the pinned
    fields the plan was searched with ({} when none); provisional: True when a
    search with a budget stopped early (recommend(budget=...)): the best plan found so far.
    """

    __slots__ = ("fits", "parallelism", "report", "stage", "shape", "gpus_requested", "gpus_used", "usable_bytes",
                 "goodput_tokens_per_s", "meters", "decisions", "diagram", "checkpoint", "alternatives",
                 "unfit_stages", "no_fit", "search", "pins", "provisional")

    def to_dict(self):
        r = self.report
        return {
            "fits": self.fits,
            "stage": self.stage,
            "stage_rank": stage_rank(self.stage),
            "plan_shape": self.shape,
            "parallelism": self.parallelism.to_dict(),
            "gpus": {
                "requested": self.gpus_requested,
                "used": self.gpus_used,
                "idle": self.gpus_requested - self.gpus_used,
            },
            "memory": {
                "usable_bytes": self.usable_bytes,
                "safety_margin": MEMORY_SAFETY_MARGIN,
                "used_over_usable": r.memory_bytes / self.usable_bytes,
            },
            "throughput": {
                "tokens_per_s": r.tokens_per_s,
                "goodput": r.goodput,
                "goodput_tokens_per_s": self.goodput_tokens_per_s,
                "mfu": r.mfu,
            },
            "checkpoint": dict(self.checkpoint),
            "meters": {k: dict(v) for k, v in self.meters.items()},
            "decisions": [dict(d, numbers=dict(d["numbers"])) for d in self.decisions],
            "diagram": {k: dict(v) for k, v in self.diagram.items()},
            "alternatives": [dict(a) for a in self.alternatives],
            "unfit_stages": [dict(u) for u in self.unfit_stages],
            "no_fit": None if self.no_fit is None else dict(self.no_fit),
            "search": dict(self.search, tie_tolerance=TIE_TOLERANCE),
            "pins": dict(self.pins),
            "provisional": self.provisional,
            "report": r.to_dict(),
        }
