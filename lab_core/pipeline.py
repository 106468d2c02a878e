"""Pipeline-parallel schedule: bubble and in-flight micro-batches."""


def bubble_fraction(p, m, v=1):
    """Bubble time over ideal time: (p - 1) / m, interleaved (p - 1) / (v m).

    Source: Narayanan et al. arXiv:2104.04473 Sec 2.2.1 (1F1B) and 2.2.2
    (interleaved, v model chunks per device).
    """
    return (p - 1.0) / (v * m)


def bubble_time(p, v, slot_s):
    """Seconds of fill and drain: (p - 1)/v slots of one micro-batch.

    The bubble_fraction above times m micro-batches of slot_s each
    (arXiv:2104.04473 Sec 2.2.1-2.2.2): with v interleaved chunks each fill or
    drain hop is one chunk, 1/v of a stage's work.
    """
    return (p - 1.0) / v * slot_s


def gpipe_bubble_share(K, M):
    """GPipe's bubble as a share of total time: (K - 1) / (M + K - 1).

    Source: Huang et al. arXiv:1811.06965 Sec 2.3.
    """
    return (K - 1.0) / (M + K - 1.0)


def in_flight_micro_batches(p, m):
    """Micro-batches the first stage holds under 1F1B: at most p.

    Source: arXiv:2104.04473 Sec 2.2.1 ("<= p micro-batches (1F1B) vs m (GPipe)").
    """
    return min(p, m)
