"""Every number the planner chose rather than derived — in one place.

All are TEACHING ASSUMPTIONS: round, defensible values a reader can question;
the page shows them (THRESHOLDS is exported as data by meters.py). None is
fitted to a measurement.
"""

# A plan must leave this fraction of device memory free: the CUDA context,
# NCCL buffers, allocator fragmentation and temporary workspaces the model
# does not count (typically a few GB of 80). TEACHING ASSUMPTION.
MEMORY_SAFETY_MARGIN = 0.10

# Plans whose goodput throughput is within this fraction of the best are
# near-ties; among them the simpler plan wins (fewer parallel dimensions,
# lower ZeRO stage, less recompute). Smaller than the model's own error
# against published runs would be false precision. TEACHING ASSUMPTION.
TIE_TOLERANCE = 0.03

# A multi-node cluster with at least this many expected interruptions per
# day is "at scale": recovery is routine and checkpointing is part of the
# design (Llama 3 405B saw ~7.8/day on 16,384 GPUs, arXiv:2407.21783 Table 5).
# TEACHING ASSUMPTION.
AT_SCALE_INTERRUPTIONS_PER_DAY = 1.0

# Meter levels: ratio < warn -> ok, < critical -> warn, else critical; each
# level has one label per meter ("labels": catalog ids under
# lab.meter_levels), so a meter's words and colour come from this one table.
# Only the memory meters (memory, activation) may say "does_not_fit".
# When no plan fits, the meters that measure a running plan (comms, data,
# fault) read "none": there is no step to measure. TEACHING ASSUMPTIONS,
# each with what the ratio measures.
METER_THRESHOLDS = {
    # Memory used on the most loaded GPU / device memory. Critical at the
    # safety margin above: a plan past it is not accepted.
    "memory": {"measure": "memory_used_over_device", "warn": 0.75, "critical": 1.0 - MEMORY_SAFETY_MARGIN,
               "labels": {"ok": "room_to_spare", "warn": "tight", "critical": "does_not_fit"}},
    # Communication not hidden behind compute (TP, pipeline sends, exposed DP
    # and ZeRO-3 traffic) plus the pipeline bubble, over the step time.
    "comms": {"measure": "exposed_comm_and_bubble_over_step", "warn": 0.15, "critical": 0.30,
              "labels": {"ok": "mostly_hidden", "warn": "noticeable", "critical": "dominates_step"}},
    # Tokens/s the GPUs consume over what loaders or storage deliver (the
    # tighter of the two). At 1 the GPUs wait for data.
    "data": {"measure": "required_over_delivered_tokens", "warn": 0.5, "critical": 1.0,
             "labels": {"ok": "keeps_up", "warn": "tight", "critical": "gpus_wait"}},
    # Activations the plan keeps (after its recompute choice) over the memory
    # left after model state. At 1 the plan does not fit.
    "activation": {"measure": "activations_kept_over_room", "warn": 0.7, "critical": 1.0,
                   "labels": {"ok": "room_to_spare", "warn": "tight", "critical": "does_not_fit"}},
    # Wall time lost to checkpoint writes, lost work and restarts (1 - goodput)
    # at the reader's checkpoint interval.
    "fault": {"measure": "time_lost_to_failures_and_checkpoints", "warn": 0.05, "critical": 0.15,
              "labels": {"ok": "small", "warn": "noticeable", "critical": "large"}},
}

# Label of the meters that measure a running plan when no plan fits.
NO_PLAN_LABEL = "no_plan"

# Checkpoint advice is material only when moving to Daly's optimum would
# win back at least this share of wall time (1 - goodput); below it the
# chosen interval is fine, whatever its distance from the optimum.
# TEACHING ASSUMPTION (1%: about the run-to-run noise of a job's throughput).
CHECKPOINT_MATERIAL_GAIN = 0.01

# A checkpoint interval within this factor of the Daly optimum is "near the
# optimum". TEACHING ASSUMPTION (goodput is flat near the optimum: within a
# factor 1.5 the loss stays within ~10% of the minimum loss).
CHECKPOINT_NEAR_OPTIMUM_FACTOR = 1.5

# Upper end of the smallest-GPU-count search for a model that fits nowhere
# else (twice the slider maximum). TEACHING ASSUMPTION.
MAX_GPUS_SEARCHED = 65536

# Context parallelism is searched only for sequences of at least this many
# tokens (with flash attention). Megatron-Core's parallelism guide names
# context parallelism the tool for "long sequences (8K+ tokens)" (Megatron Core
# developer guide, "Parallelism Strategies Guide"); NeMo's Llama 3 recipes use
# CP 2 from 8,192 tokens (content/validation/end_to_end.yaml). TEACHING
# ASSUMPTION: the threshold of that guide.
CP_MIN_SEQ_LEN = 8192

# Largest context-parallel degree searched (powers of two up to it). Llama 3
# trained 128K-token sequences with CP 16 (arXiv:2407.21783 Table 4); 32 leaves
# one step beyond. TEACHING ASSUMPTION.
CP_MAX = 32

# The lab's first answer to a slider move: the search stops after this many
# evaluated plans once one fits, the page shows that plan as "refining…" and
# asks for the full search right after (issue 19: an answer within one frame).
# Not a teaching assumption: a speed setting with no effect on the final plan.
QUICK_SEARCH_EVALUATIONS = 24

# The quick answer's warm start (warm_start.py): the plan on screen is carried
# to its own layout on the new workload, else to this many of the new
# workload's grids nearest its layout. A speed setting with no effect on the
# final plan. (Even a small search, a few grids on 8 GPUs, costs several
# milliseconds of bounds and evaluations in Pyodide: issue 19.)
WARM_START_GRIDS = 2
