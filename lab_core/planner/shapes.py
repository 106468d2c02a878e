"""Which shapes (stage ids, stage.py) the plans of a grid can have, for the search's
checks (search.py): a grid, micro-batch or interleaving that cannot produce a
plan of some shape need not beat that shape's best plan so far."""
from .bounds import fits, stage_activation_bytes, stage_state_bytes


def shape_classes(grid):
    """The shapes (stage ids) plans of a grid can have (stage.shape_stage_parts)."""
    if grid.gpus == 1:
        return ("single_gpu",)
    if grid.tp * grid.cp * grid.pp * grid.ep == 1:
        return ("data_parallel", "zero_sharded")
    return ("tensor_pipeline", "full_3d")


def needs_full(run, grid, choices, state, b, v):
    """Whether a plan with this training state (a ZeRO stage's stage_state_bytes)
    at micro-batch b and interleave v must recompute fully to fit: the search
    takes the least recompute that fits (search.py), so a plan of a split grid
    is full_3d only when the mode before "full" overflows."""
    modes = choices.modes
    if modes[-1] != "full":
        return False
    if len(modes) == 1:
        return True
    acts = stage_activation_bytes(run.ctx, grid, modes[-2], b, v, choices.sp(grid))
    return fits(state, acts) > run.usable


def possible_classes(run, grid, choices, largest):
    """shape_classes less full_3d when no plan of the grid can need full recompute,
    and less tensor_pipeline when every plan of it does.
    Why the tests cover every plan: memory grows with the micro-batch (up to
    `largest`), falls with the ZeRO stage (the lowest one, zeros[0], holds the
    most state), and the interleaved schedule's in-flight activations,
    1 + (p - 1) / (p v) times (activations.interleave_multiplier), are largest
    at v = 2 and least without interleaving; so if the mode before "full" fits
    there, it fits for every plan, and if it overflows the leanest plan (the
    most sharded stage, the smallest micro-batch, no interleaving), every plan."""
    classes = leanest_classes(run, grid, choices)
    if classes != ("tensor_pipeline", "full_3d"):
        return classes
    zeros = choices.zeros(grid)
    v = choices.interleave or (2 if grid.pp > 1 else 1)
    if needs_full(run, grid, choices, stage_state_bytes(run.ctx, grid, zeros[0]), largest, v):
        return classes
    return ("tensor_pipeline",)


def leanest_classes(run, grid, choices):
    """shape_classes less tensor_pipeline when the grid's leanest plan (the most sharded
    ZeRO stage, the smallest micro-batch, the least interleaving) must recompute fully:
    then every plan of it does (possible_classes). Needs no largest micro-batch, so the
    search asks it before it looks for one."""
    classes = shape_classes(grid)
    if "full_3d" not in classes:
        return classes
    zeros = choices.zeros(grid)
    smallest = choices.micro_batches(run.ctx.batch_sequences // grid.dp)[0]
    if needs_full(run, grid, choices, stage_state_bytes(run.ctx, grid, zeros[-1]), smallest, choices.interleave or 1):
        return ("full_3d",)
    return classes
