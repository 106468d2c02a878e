"""Every id the planner can emit, as data: the page's catalogs (en, zh) must
have a text for each; tests/planner check the planner never emits another.

Decision options that name parallel dimensions are built from the parts in
PARALLELISM_OPTION_PARTS (e.g. "tp_pp_dp_zero1"); see decisions.parallelism.
"""
from .decisions import DECISIONS
from .diagram import PARTS
from .meters import LEVELS, METERS
from .stage import STAGES

DECISION_OPTIONS = {
    "parallelism": ("single", "tp", "pp", "dp", "tp_pp", "tp_dp", "pp_dp", "tp_pp_dp"),
    "gradient_sync": ("none", "all_reduce", "reduce_scatter_all_gather", "zero3_gather_reduce_scatter"),
    "activation_memory": ("keep_all", "flash_attention", "selective_recompute", "full_recompute"),
    "checkpointing": ("keep_interval", "shorten_interval", "lengthen_interval"),
    "data_pipeline": ("loaders_sufficient", "add_loaders", "faster_storage"),
    "interconnect": ("none", "nvlink_node", "nvlink_plus_fabric"),
}

# Suffixes a parallelism option may carry when dp > 1 and ZeRO is on.
PARALLELISM_OPTION_SUFFIXES = ("", "_zero1", "_zero2", "_zero3")

DECISION_REASONS = {
    "parallelism": ("nothing_fits", "fits_one_gpu", "weights_exceed_gpu_split_model",
                    "weights_exceed_gpu_shard_weights", "state_exceeds_gpu_split_model",
                    "state_exceeds_gpu_shard_state", "split_model_faster", "replicas_fit"),
    "gradient_sync": ("single_replica", "hidden_by_backward", "exposed"),
    "activation_memory": ("fits_without_recompute", "recompute_required"),
    "checkpointing": ("no_failures", "too_long_loses_work", "too_short_wastes_writes", "near_optimum"),
    "data_pipeline": ("loader_bound", "storage_bound", "headroom"),
    "interconnect": ("single_gpu", "fits_in_one_node", "fabric_bound", "tp_on_nvlink_rest_on_fabric",
                     "replicas_across_fabric"),
}

ALTERNATIVE_REASONS = ("more_complex_near_tie", "slower_step", "lower_goodput")
UNFIT_REASONS = ("memory", "no_layout")


def vocabulary():
    """All ids as JSON-ready data."""
    options = {k: list(v) for k, v in DECISION_OPTIONS.items()}
    options["parallelism"] = [base + suffix for base in DECISION_OPTIONS["parallelism"]
                              for suffix in PARALLELISM_OPTION_SUFFIXES
                              if not suffix or "dp" in base.split("_")]
    return {
        "stages": list(STAGES),
        "meters": list(METERS),
        "levels": list(LEVELS),
        "decisions": list(DECISIONS),
        "decision_options": options,
        "decision_reasons": {k: list(v) for k, v in DECISION_REASONS.items()},
        "diagram_parts": list(PARTS),
        "alternative_reasons": list(ALTERNATIVE_REASONS),
        "unfit_reasons": list(UNFIT_REASONS),
    }
