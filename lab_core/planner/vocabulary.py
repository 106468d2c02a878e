"""Every id the planner can emit, as data: the page's catalogs (en, zh) must
have a text for each; tests/planner check the planner never emits another.

Decision options that name parallel dimensions are built from the parts in
PARALLELISM_OPTION_PARTS (e.g. "tp_pp_dp_zero1"); see decisions.parallelism.
"""
from .decisions import DECISIONS
from .diagram import PARTS
from .links import TRAFFIC
from .meters import LEVELS, METERS, labels
from .stage import STAGES

DECISION_OPTIONS = {
    "parallelism": ("single", "cp", "tp", "pp", "dp", "tp_pp", "tp_dp", "pp_dp", "tp_pp_dp"),
    "gradient_sync": ("none", "all_reduce", "reduce_scatter_all_gather", "zero3_gather_reduce_scatter", "no_plan"),
    "activation_memory": ("keep_all", "flash_attention", "selective_recompute", "selective_modules", "full_recompute",
                          "partial_recompute"),
    "checkpointing": ("keep_interval", "shorten_interval", "lengthen_interval", "use_async", "use_in_memory", "no_plan"),
    "data_pipeline": ("loaders_sufficient", "add_loaders", "faster_storage", "no_plan"),
    "interconnect": ("none", "nvlink_node", "nvlink_plus_fabric", "no_plan"),
}

# Options that are not built from parallel dimensions.
PARALLELISM_PLAIN_OPTIONS = ("nothing_fits",)

# Suffixes a parallelism option may carry when dp > 1 and ZeRO is on.
PARALLELISM_OPTION_SUFFIXES = ("", "_zero1", "_zero2", "_zero3")

DECISION_REASONS = {
    "parallelism": ("nothing_fits", "nothing_fits_anywhere", "fits_one_gpu", "weights_exceed_gpu_split_model",
                    "weights_exceed_gpu_shard_weights", "state_exceeds_gpu_split_model",
                    "state_exceeds_gpu_shard_state", "split_model_faster", "replicas_fit"),
    "gradient_sync": ("single_replica", "hidden_by_backward", "exposed", "exposed_with_zero", "repeated_hidden",
                      "repeated_exposed", "not_overlapped", "nothing_fits"),
    "activation_memory": ("fits_without_recompute", "recompute_required", "partial_recompute",
                          "activations_exceed_room", "state_exceeds_memory"),
    "checkpointing": ("no_failures", "too_long_loses_work", "too_short_wastes_writes", "waits_for_background",
                      "near_optimum", "snapshot_beats_blocking", "gain_immaterial", "beats_estimate",
                      "blocking_pauses_training", "memory_recovery_faster", "replication_slower_than_storage",
                      "nothing_fits"),
    "data_pipeline": ("loader_bound", "storage_bound", "headroom", "nothing_fits"),
    "interconnect": ("single_gpu", "fits_in_one_node", "fabric_bound", "nvlink_bound", "bubble_bound",
                     "tp_on_nvlink_rest_on_fabric", "spans_nodes", "nothing_fits"),
}

ALTERNATIVE_REASONS = ("faster_within_tie", "more_complex_near_tie", "slower_step", "lower_goodput")

# Layout ids of alternatives (recommend.layout_id): parallelism options plus a recompute suffix.
LAYOUT_RECOMPUTE_SUFFIXES = ("", "_selective", "_full")
UNFIT_REASONS = ("memory", "no_layout")
# Parts a layout id carries after its dimensions for context and expert parallelism (recommend.layout_id).
LAYOUT_GRID_EXTRAS = ("", "_cp", "_ep", "_cp_ep")


def _with_extras(option, extra):
    """Insert the context/expert parts before a ZeRO part ("tp_dp_zero1" + "_cp" -> "tp_dp_cp_zero1")."""
    if "_zero" in option:
        dims, zero = option.rsplit("_", 1)
        return dims + extra + "_" + zero
    return option + extra


def vocabulary():
    """All ids as JSON-ready data."""
    options = {k: list(v) for k, v in DECISION_OPTIONS.items()}
    options["parallelism"] = [base + suffix for base in DECISION_OPTIONS["parallelism"]
                              for suffix in PARALLELISM_OPTION_SUFFIXES
                              if not suffix or "dp" in base.split("_")]
    layouts = [_with_extras(option, extra) + suffix for option in options["parallelism"]
               for extra in LAYOUT_GRID_EXTRAS for suffix in LAYOUT_RECOMPUTE_SUFFIXES]
    options["parallelism"] += list(PARALLELISM_PLAIN_OPTIONS)
    return {
        "stages": list(STAGES),
        "meters": list(METERS),
        "levels": list(LEVELS),
        "meter_labels": labels(),
        "layouts": layouts,
        "decisions": list(DECISIONS),
        "decision_options": options,
        "decision_reasons": {k: list(v) for k, v in DECISION_REASONS.items()},
        "diagram_parts": list(PARTS),
        "alternative_reasons": list(ALTERNATIVE_REASONS),
        # What the interconnect decision lists on the fabric or on NVLink.
        "fabric_traffic": list(TRAFFIC),
        "unfit_reasons": list(UNFIT_REASONS),
    }
