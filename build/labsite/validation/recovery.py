"""Rows for failures, checkpoints and recovery at scale (content/validation/
published.yaml): Table 5's causes and another fleet's failure rates, the
checkpoint pause, write and restart parts, and effective training time of
two runs on more than 10,000 GPUs."""
from dataclasses import dataclass

import lab_core
from lab_core import calibration as cal
from lab_core import checkpoint_modes, failures, recovery
from lab_core.context import context_for

from .facts import arxiv
from .table import PageEntry, Row, absolute, rel

#: Llama 3 405B as Table 3 gives it (arXiv:2407.21783), on 16,384 H100s.
LLAMA3_WORKLOAD = dict(params=405e9, layers=126, hidden=16384, heads=128, kv_heads=8, ffn_hidden=int(1.5 * 53248),
                       vocab=128000, dropout=False, gpus=cal.LLAMA3_GPUS, gpu="h100_80gb", seq_len=8192,
                       global_batch_tokens=16 * 1048576, inter_node_gbps=400)
#: MegaScale's largest measured configuration (arXiv:2402.15627 Table 2).
MEGASCALE_GPUS = 12288
#: A100 nodes of Meta's research clusters (arXiv:2410.21680).
RSC_GPUS_PER_NODE = 8
#: How far another fleet's failure rate may be from the lab's one rate.
FLEET_TOLERANCE = rel(0.65)
#: Points of effective training time a run may be from its published figure.
ETT_TOLERANCE = absolute(3.0)


@dataclass(frozen=True)
class EffectiveTime:
    """The lab's effective training time of a Llama 3 405B run and its parts."""
    mode: str
    interval_s: float
    goodput: float           # at the interval, without planned stops
    planned_share: float     # wall time the planned stops take
    recovery_s: float

    @property
    def effective(self):
        return self.goodput * (1.0 - self.planned_share)


def llama3_effective_time(facts, mode="blocking"):
    """Llama 3 405B as §3.3 describes it (published.yaml's note says what is
    assumed): checkpoints written at the storage's sustained bandwidth while the
    GPUs pause (``mode``), at the lab's optimal interval for that pause, the
    lab's recovery parts, and the planned stops as restarts without detection."""
    fact = facts["run.llama3_405b.effective_training_time"]
    published = fact["published"]
    storage = published["storage_sustained_TBps"] * 1000.0
    w = lab_core.Workload(checkpoint_mode=mode, checkpoint_storage_gbps=storage, storage_read_gbps=storage,
                          **LLAMA3_WORKLOAD)
    f = context_for(w).failures
    planned_per_hour = published["planned_interruptions"] / (fact["inputs"]["window_days"] * 24.0)
    planned = failures.planned_stop_share(planned_per_hour, f.recovery.total_s - f.recovery.detection_s)
    return EffectiveTime(mode, f.optimal_s, f.goodput_at_optimal, planned, f.recovery.total_s)


def reliability_rows(facts):
    """Table 5's causes add up to the interruptions the rate is fitted to; another
    fleet's failure rates (Meta's research clusters) against the lab's one rate."""
    counted = 0
    for _, _, count in cal.LLAMA3_INTERRUPTIONS_BY_COMPONENT:
        counted += count
    llama = facts["run.llama3_405b.interruptions"]["published"]
    rows = [Row("run.llama3_405b.interruptions", "Table 5 causes summed (interruptions)", float(counted),
                float(llama["unexpected"]), absolute(0.0), "calibrated",
                PageEntry("failures", "arXiv:2407.21783 Table 5", arxiv("2407.21783"), "table5_sum", "plain",
                          "table5_sum"))]
    rsc = facts["rsc.failure_rates"]["published"]
    per_node_days = cal.GPU_FAILURES_PER_HOUR * RSC_GPUS_PER_NODE * 24.0 * 1000.0
    for cluster in ("rsc1", "rsc2"):
        rows.append(Row("rsc.failure_rates", f"{cluster} failures per 1,000 node-days", per_node_days,
                        float(rsc[f"{cluster}_failures_per_1000_node_days"]), FLEET_TOLERANCE, "prediction",
                        PageEntry("failures", "arXiv:2410.21680", arxiv("2410.21680"), f"fleet_{cluster}",
                                  "per_1000_node_days", "fleet")))
    return rows


def recovery_rows(facts):
    """The device-to-host pause (ByteCheckpoint, fitted), a blocking write to
    remote storage (GEMINI) and communicator set-up (MegaScale)."""
    rows = []
    table8 = facts["bytecheckpoint.table8"]
    for key, label in (("text_405b", "405B"), ("vit_7b", "7B")):
        setup = table8["inputs"][key]
        per_gpu = setup["params"] * cal.CHECKPOINT_BYTES_PER_PARAM / setup["gpus"]
        rows.append(Row("bytecheckpoint.table8", f"snapshot pause {label} on {setup['gpus']} GPUs (s)",
                        checkpoint_modes.snapshot_s(per_gpu), table8["published"][key]["blocking_s"], rel(0.02),
                        "calibrated",
                        PageEntry("recovery", "arXiv:2407.20143 Table 8", arxiv("2407.20143"), "snapshot_pause", "s",
                                  "snapshot_pause", {"model": label, "gpus": setup["gpus"]})))
    gemini = facts["gemini.remote_checkpoint_time"]
    write_s = checkpoint_modes.storage_write_s(gemini["inputs"]["params"] * cal.CHECKPOINT_BYTES_PER_PARAM,
                                               gemini["inputs"]["storage_bandwidth_Gbps"] * 1e9 / 8.0)
    rows.append(Row("gemini.remote_checkpoint_time", "MT-NLG 530B checkpoint to remote storage (min)", write_s / 60.0,
                    float(gemini["published"]["checkpoint_minutes"]), rel(0.20), "prediction",
                    PageEntry("recovery", "GEMINI, SOSP'23 §2", "https://doi.org/10.1145/3600006.3613145",
                              "remote_write", "minutes", "remote_write")))
    init = facts["megascale.init_time"]["published"]
    for gpus, published, kind, tolerance in ((2048, init["optimized_2048_s"], "calibrated", rel(1e-9)),
                                             (MEGASCALE_GPUS, init["optimized_over_10000_s"], "prediction", rel(0.25))):
        rows.append(Row("megascale.init_time", f"communicator set-up on {gpus} GPUs (s)", recovery.comm_init_s(gpus),
                        float(published), tolerance, kind,
                        PageEntry("recovery", "arXiv:2402.15627 §3.5", arxiv("2402.15627"), "comm_init", "s",
                                  "comm_init", {"gpus": gpus})))
    return rows


def goodput_rows(facts):
    """Effective training time on more than 10,000 GPUs: Llama 3 405B as the paper
    ran it, and MegaScale's bounds on detection and catch-up at the lab's rate."""
    llama = llama3_effective_time(facts)
    published = facts["run.llama3_405b.effective_training_time"]["published"]
    megascale = facts["megascale.recovery"]["published"]
    per_interruption = (megascale["detection_and_diagnosis_min"] + megascale["catch_up_from_checkpoint_min"]) * 60.0
    mtti = 3600.0 / failures.interruptions_per_hour(MEGASCALE_GPUS, cal.GPU_FAILURES_PER_HOUR)
    megascale_ett = 1.0 - failures.interrupted_share(per_interruption, mtti)
    return [
        Row("run.llama3_405b.effective_training_time", "Llama 3 405B effective training time (%)",
            100.0 * llama.effective, float(published["effective_training_time_percent"]), ETT_TOLERANCE,
            "prediction", PageEntry("goodput", "arXiv:2407.21783 §3.3.4", arxiv("2407.21783"), "ett_llama3",
                                    "percent", "ett_llama3", {"gpus": cal.LLAMA3_GPUS})),
        Row("megascale.recovery", "MegaScale effective training time (%)", 100.0 * megascale_ett,
            float(megascale["effective_training_time_percent"]), ETT_TOLERANCE, "prediction",
            PageEntry("goodput", "arXiv:2402.15627 §6.3", arxiv("2402.15627"), "ett_megascale", "percent",
                      "ett_megascale", {"gpus": MEGASCALE_GPUS})),
    ]
