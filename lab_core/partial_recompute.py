"""Full recompute of only some layers of each pipeline stage (Parallelism.recompute_layers).

With recompute "full" and recompute_layers N > 0, each model chunk of a stage
(one, or `interleave` of them) replays the forward of its first N layers in
the backward and keeps only their inputs; its other layers keep all their
activations and replay nothing, as without recompute. This is Megatron-Core's
--recompute-granularity full --recompute-method block --recompute-num-layers N
(megatron/core/transformer/transformer_block.py, _checkpointed_forward: with
"block", layer l of the chunk is checkpointed when l < recompute_num_layers;
arguments.py: "recompute the input activations of only a set number of
individual Transformer layers per pipeline stage and do the rest without any
recomputing"). It spends as much extra compute as the memory a stage lacks
needs. recompute_layers 0: every layer recomputes (the lab's plain "full").

TEACHING ASSUMPTION: a stage recomputes min(its layers, interleave x N)
layers, its dense layers first (the leading dense layers of a
mixture-of-experts model open the first chunk); the unequal chunks of an
uneven split are not told apart.
"""
from dataclasses import replace


def is_partial(par):
    """Whether Parallelism `par` recomputes fully only some layers of each stage."""
    return par.recompute == "full" and par.recompute_layers > 0


def recomputed_layers(stage, par):
    """(dense, mixture-of-experts) layers of gpu_memory.Stage `stage` that recompute fully under `par`."""
    if par.recompute != "full":
        return 0, 0
    if not par.recompute_layers:
        return stage.dense, stage.moe
    count = min(stage.layers, par.interleave * par.recompute_layers)
    dense = min(count, stage.dense)
    return dense, count - dense


def model_recomputed_layers(stages, par):
    """(dense, mixture-of-experts) layers of the whole model that recompute fully:
    recomputed_layers of each kind of stage (gpu_memory.stages) times the stages
    of that kind (Stage.copies)."""
    dense = moe = 0
    for stage in stages:
        stage_dense, stage_moe = recomputed_layers(stage, par)
        dense += stage.copies * stage_dense
        moe += stage.copies * stage_moe
    return dense, moe


def kept_plan(par):
    """`par` without recompute: the plan whose layers are the ones a partial plan keeps whole."""
    return replace(par, recompute="none", recompute_layers=0)


def largest_chunk(first, middle, last, interleave):
    """Layers of the largest model chunk of a split (parallelism.stage_split), rounded up:
    the most recompute_layers can recompute in one chunk."""
    return -(-max(first, middle, last) // interleave)
