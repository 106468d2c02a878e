"""Per-GPU memory of plans, with the repeated parts computed once.

The numbers are lab_core.gpu_memory's (stages, stage_params, state_parts,
layer_kind_activations, stage_terms and stage_activation_total: the functions
memory_of() composes), so they equal evaluate()'s memory_bytes exactly. What
the planner asks for repeats: the training state of a stage depends only on
tp, pp, the split, ep, the ranks and ZeRO; a layer's activations only on
tp, cp, recompute, sequence parallelism and the micro-batch (a stage adds up
its dense and expert layers).
(The pipeline schedule is part of a table's key: DualPipe's weight copies and every
schedule's in-flight micro-batches are in its figures; so are the recompute modules,
which set what selective recompute keeps.)
Memory also does not depend on the GPU count, the fabric, the GPU preset or
the checkpoint interval, so one table serves every slider move that keeps
the model, the sequence and the batch (table_for caches a few).
"""
from ..gpu_memory import (layer_kind_activations, model_stages, stage_activation_total, stage_params, stage_terms,
                          state_parts)

_TABLES = {}
_TABLES_KEPT = 8
# Tables dropped from _TABLES, not yet freed (release_retired); past this many
# the oldest is freed at once.
_RETIRED = []
_RETIRED_KEPT = 4
# A table drops its entries past this many (a long session of slider moves).
_ENTRIES_KEPT = 200_000


def _key(ctx):
    shape = ctx.shape
    experts = None if shape.experts is None else tuple(sorted(shape.experts.to_dict().items()))
    return (shape.layers, shape.mtp_layers, shape.hidden, shape.heads, shape.kv_heads, shape.ffn_hidden, shape.vocab,
            experts, ctx.seq_len, ctx.batch_sequences, ctx.flash, ctx.dropout, ctx.precision, ctx.state_bytes,
            ctx.per_op_selective, ctx.fp8_inputs, ctx.gathered_inputs, ctx.loss_bytes_per_logit, ctx.pipeline_schedule,
            ctx.recompute_modules)


_LAST = [None, None]  # the last context asked for and its table (the search asks many times in a row)


def table_for(ctx):
    """The MemoryTable of a workload context (shared by workloads with the same memory inputs)."""
    if _LAST[0] is ctx:
        return _LAST[1]
    key = _key(ctx)
    table = _TABLES.get(key)
    if table is None:
        if len(_TABLES) >= _TABLES_KEPT:
            # Freeing a table of thousands of entries takes 1-3 ms in CPython (twice that in
            # Pyodide), and a new table is usually asked for by a slider move's quick answer:
            # the table waits for the full search that follows (release_retired).
            _RETIRED.append(_TABLES.pop(next(iter(_TABLES))))
            if len(_RETIRED) > _RETIRED_KEPT:
                del _RETIRED[0]
        table = _TABLES[key] = MemoryTable(ctx)
    _LAST[0], _LAST[1] = ctx, table
    return table


def release_retired():
    """Free the tables table_for dropped; a full search calls it first (no reader
    waits on it: in the lab's worker it runs in slices after the quick answer)."""
    _RETIRED.clear()


class MemoryTable:
    """Memory of the stage kinds of grids (bounds.py's functions read it)."""

    __slots__ = ("ctx", "_kinds", "_states", "_terms", "_totals", "_size")

    def __init__(self, ctx):
        self.ctx = ctx
        self._kinds = {}
        self._states = {}
        self._terms = {}
        self._totals = {}
        self._size = 0

    def _room(self):
        self._size += 1
        if self._size > _ENTRIES_KEPT:
            self._states.clear()
            self._terms.clear()
            self._totals.clear()
            self._size = 0

    def kinds(self, grid):
        """The grid's kinds of stage (gpu_memory.model_stages)."""
        key = (grid.pp, grid.first, grid.last)
        found = self._kinds.get(key)
        if found is None:
            ctx = self.ctx
            first, middle, last = grid.split(ctx.layers)
            found = self._kinds[key] = model_stages(ctx, grid.pp, first, middle, last)
        return found

    def states(self, grid, zero):
        """Training state of each kind of stage, as gpu_memory.memory_of counts it:
        shared weights over the dp x cp ranks, experts over the tp cp dp / ep ranks."""
        key = (grid.tp, grid.pp, grid.first, grid.last, grid.ep, grid.dp * grid.cp, grid.expert_ranks, zero)
        found = self._states.get(key)
        if found is None:
            ctx = self.ctx
            out = []
            for stage in self.kinds(grid):
                shared, expert = stage_params(ctx, grid.tp, stage, grid.pp, grid.ep)
                weights, grads, optimizer = state_parts(ctx, grid.tp, shared, grid.dp * grid.cp, zero, expert,
                                                        grid.expert_ranks, grid.ep)
                out.append(weights + grads + optimizer)
            found = self._states[key] = tuple(out)
            self._room()
        return found

    def activations(self, grid, recompute, micro_batch, interleave, sequence_parallel):
        """Activations of each kind of stage (gpu_memory.stage_activations)."""
        key = (grid.tp, grid.cp, grid.pp, grid.first, grid.last, grid.dp, recompute, micro_batch, interleave,
               sequence_parallel)
        found = self._totals.get(key)
        if found is None:
            found = self._totals[key] = self._activations(grid, recompute, micro_batch, interleave, sequence_parallel)
            self._room()
        return found

    def _activations(self, grid, recompute, micro_batch, interleave, sequence_parallel):
        ctx = self.ctx
        micro_batches = ctx.batch_sequences // grid.dp // micro_batch
        tp, cp, pp = grid.tp, grid.cp, grid.pp
        key = (tp, cp, recompute, sequence_parallel, micro_batch)
        kinds = self._terms.get(key)
        if kinds is None:
            kinds = self._terms[key] = layer_kind_activations(ctx, tp, cp, recompute, sequence_parallel,
                                                              micro_batch, ctx.shape.experts is not None)
            self._room()
        return tuple([stage_activation_total(ctx, tp, cp, pp, stage, stage_terms(stage, kinds), micro_batch,
                                             micro_batches, interleave) for stage in self.kinds(grid)])
