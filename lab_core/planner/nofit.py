"""When nothing fits: how far off the closest plan is, and how many GPUs would do.

Uses the memory floor of a layout (ZeRO-3 when dp > 1, full recompute,
micro-batch 1, no interleaving: the least memory any plan of it can use,
bounds.py), which only shrinks as pp or dp grows. GPU counts are t pp dp
with tp dividing the GPUs per node, pp the layers and dp the batch.
"""
from .assumptions import MAX_GPUS_SEARCHED
from .bounds import plan_memory


def floor_bytes(wctx, t, p, d):
    return plan_memory(wctx, t, p, d, 3 if d > 1 else 0, "full", 1, 1)


def smallest_fitting(wctx, space, usable, at_most=MAX_GPUS_SEARCHED):
    """(gpus, tp, pp, dp) of the fewest GPUs whose floor fits, or None.

    For each (tp, pp) the floor falls as dp grows, so a binary search over the
    divisors of the batch finds the least dp that fits.
    """
    best = None
    for t in space.tps:
        for p in space.pps:
            dps = space.dps
            if floor_bytes(wctx, t, p, dps[-1]) > usable:
                continue
            lo, hi = 0, len(dps) - 1
            while lo < hi:
                mid = (lo + hi) // 2
                if floor_bytes(wctx, t, p, dps[mid]) <= usable:
                    hi = mid
                else:
                    lo = mid + 1
            d = dps[lo]
            n = t * p * d
            if n <= at_most and (best is None or (n, t, p) < (best[0], best[1], best[2])):
                best = (n, t, p, d)
    return best


def largest_fitting(wctx, space, usable, at_most):
    """The most GPUs (<= at_most) some layout whose floor fits uses, or None."""
    best = None
    for t in space.tps:
        for p in space.pps:
            for d in reversed(space.dps):
                n = t * p * d
                if n > at_most:
                    continue
                if floor_bytes(wctx, t, p, d) <= usable and (best is None or n > best):
                    best = n
                break
    return best
