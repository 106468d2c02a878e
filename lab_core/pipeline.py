"""Pipeline-parallel schedule: bubble and in-flight micro-batches.

Three schedules (Workload.pipeline_schedule): 1F1B, interleaved with v > 1 model
chunks per GPU (Megatron-LM, torchtitan; arXiv:2104.04473 Sec 2.2), and the two
bidirectional schedules of DeepSeek-V3 (arXiv:2412.19437 Sec 3.2.1, Table 2;
deepseek-ai/DualPipe README, "Pipeline Bubbles and Memory Usage Comparison"):
DualPipe feeds micro-batches from both ends, so each GPU holds its own stage and
its mirror's (two copies of the weights); DualPipeV (the "cut-in-half" V shape,
torchtitan's ScheduleDualPipeV) puts 2 p stages on p GPUs, two chunks each.
"""

PIPELINE_SCHEDULES = ("1f1b", "dualpipe", "dualpipev")
# Their names as their authors write them (proper names, the same in every language).
SCHEDULE_NAMES = {"1f1b": "1F1B", "dualpipe": "DualPipe", "dualpipev": "DualPipeV"}
# Copies of a stage's weights a GPU holds under DualPipe: its own and its mirror's (arXiv:2412.19437 Table 2).
DUALPIPE_WEIGHT_COPIES = 2


def bubble_fraction(p, m, v=1):
    """Bubble time over ideal time: (p - 1) / m, interleaved (p - 1) / (v m).

    Source: Narayanan et al. arXiv:2104.04473 Sec 2.2.1 (1F1B) and 2.2.2
    (interleaved, v model chunks per device).
    """
    return (p - 1.0) / (v * m)


def bubble_time(p, v, slot_s, schedule="1f1b", backward_s=0.0, weight_grad_s=0.0):
    """Seconds of fill and drain.

    1F1B: (p - 1)/v slots of one micro-batch (the bubble_fraction above times
    m micro-batches of slot_s each, arXiv:2104.04473 Sec 2.2.1-2.2.2): with v
    interleaved chunks each fill or drain hop is one chunk, 1/v of a stage's work.
    DualPipe: (PP/2 - 1)(F&B + B - 3W) with PP its p stages, B a full backward
    chunk, W its backward for weights and F&B a forward and a backward chunk run
    overlapped (arXiv:2412.19437 Table 2): F&B is taken as the slot, F + B with the
    sends, the overlap hiding communication, not compute (TEACHING ASSUMPTION).
    DualPipeV: the same over its 2 p stages of half a GPU's layers, (p - 1)(slot + B - 3W) / 2.
    backward_s, weight_grad_s: B and W of the GPU's layers for one micro-batch.
    """
    if schedule == "1f1b" or p == 1:
        return (p - 1.0) / v * slot_s
    per_chunk = slot_s + backward_s - 3.0 * weight_grad_s
    if schedule == "dualpipe":
        return (p / 2.0 - 1.0) * per_chunk
    return (p - 1.0) / 2.0 * per_chunk


def least_drain_slots(p, v, schedule):
    """The fewest slots of one micro-batch the fill and drain can take (bubble_time over
    slot_s), whatever the backward and its weight part: the planner's bounds use it.
    Exact for 1F1B. For the bidirectional schedules the model's W is the forward GEMMs'
    time, so W <= F and 2 W <= B: 3 W <= F + B <= slot and B - 3 W >= -W >= -slot / 3,
    so slot + B - 3W >= 2/3 slot: (p - 2) / 3 slots for DualPipe, (p - 1) / 3 for DualPipeV."""
    if schedule == "1f1b" or p == 1:
        return (p - 1.0) / v
    if schedule == "dualpipe":
        return (p - 2.0) / 3.0
    return (p - 1.0) / 3.0


def in_flight_chunks(p, stage_index, m, schedule="1f1b"):
    """Micro-batches of a stage's layers a GPU holds activations for at the peak.

    1F1B: min(p - i, m) on stage i (arXiv:2104.04473 Sec 2.2.1: "<= p
    micro-batches (1F1B) vs m (GPipe)"); DualPipe: p + 1 on every GPU, DualPipeV
    2 p + 1 chunks of half a GPU's layers (arXiv:2412.19437 Table 2; the DualPipe
    README's table), never more than the step's m micro-batches. Without a
    pipeline (p = 1) every schedule is the same.
    """
    if schedule == "1f1b" or p == 1:
        return min(p - stage_index, m)
    most = p + 1.0 if schedule == "dualpipe" else p + 0.5
    return most if most < m else float(m)


def weight_copies(p, schedule="1f1b"):
    """Copies of its stage's weights (and their gradients and optimizer state) a GPU
    holds: 2 under DualPipe with a pipeline (its stage and its mirror's,
    arXiv:2412.19437 Table 2, "Parameter 2x"), else 1."""
    return DUALPIPE_WEIGHT_COPIES if schedule == "dualpipe" and p > 1 else 1


def gpipe_bubble_share(K, M):
    """GPipe's bubble as a share of total time: (K - 1) / (M + K - 1).

    Source: Huang et al. arXiv:1811.06965 Sec 2.3.
    """
    return (K - 1.0) / (M + K - 1.0)


def in_flight_micro_batches(p, m):
    """Micro-batches the first stage holds under 1F1B: at most p.

    Source: arXiv:2104.04473 Sec 2.2.1 ("<= p micro-batches (1F1B) vs m (GPipe)").
    """
    return in_flight_chunks(p, 0, m)
