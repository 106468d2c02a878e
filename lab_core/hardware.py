"""GPU presets: the few numbers of a device the model needs.

Peak dense 16-bit tensor FLOP/s, HBM capacity and bandwidth, NVLink bandwidth
per GPU in one direction, and GPUs per node. Sources: hw.a100 / hw.h100 in
content/validation/published.yaml (datasheet figures as used by Narayanan et
al. arXiv:2104.04473 §5 and llm-analysis' gpu_configs); H200 and B200 from
NVIDIA's product pages as quoted by the same tools (teaching presets).
Capacities are decimal bytes (80 GB = 80e9 B), the conservative reading.
"""
from .calibration import INTER_NODE_EFFICIENCY, NVLINK_BUSBW_FRACTION, POWER_CAPPED_H100_PEAK_FLOPS


class GpuSpec:
    """One device preset; plain attributes so the hot path reads them fast."""

    __slots__ = ("id", "name", "architecture", "peak_flops", "fp8_peak_flops", "memory_bytes", "hbm_bytes_per_s",
                 "nvlink_bytes_per_s", "gpus_per_node")

    def __init__(self, id, name, architecture, peak_flops, memory_bytes, hbm_bytes_per_s,
                 nvlink_bytes_per_s, gpus_per_node, fp8_peak_flops=None):
        self.id = id
        self.name = name
        # NVIDIA's GPU generation (ampere, hopper, blackwell): published runs are grouped by it
        # when the lab says how far its predictions were from runs like the reader's.
        self.architecture = architecture
        self.peak_flops = peak_flops
        # Dense FP8 tensor-core peak; None where the device has no FP8 tensor cores.
        self.fp8_peak_flops = fp8_peak_flops
        self.memory_bytes = memory_bytes
        self.hbm_bytes_per_s = hbm_bytes_per_s
        self.nvlink_bytes_per_s = nvlink_bytes_per_s
        self.gpus_per_node = gpus_per_node

    def to_dict(self):
        return {name: getattr(self, name) for name in self.__slots__}


DEFAULT_GPU = "a100_80gb"

GPU_PRESETS = {
    # 312 TFLOP/s: arXiv:2104.04473 §5; 2039 GB/s HBM, NVLink3 300 GB/s one way.
    "a100_80gb": GpuSpec("a100_80gb", "A100 SXM 80GB", "ampere", 312e12, 80e9, 2.039e12, 300e9, 8),
    # 989 TFLOP/s dense bf16 (1,979 dense FP8), 3350 GB/s HBM3, NVLink4 450 GB/s one way.
    "h100_80gb": GpuSpec("h100_80gb", "H100 SXM 80GB", "hopper", 989e12, 80e9, 3.35e12, 450e9, 8, 1979e12),
    # Meta's Grand Teton H100 (torchtitan's benchmark GPUs; pytorch/torchtitan docs/performance.md):
    # 96 GB HBM2e at 2.4 TB/s, run at its default 500 W power limit, so its clocks and peak sit
    # "between SXM and NVL" (TorchTitan, arXiv:2410.06511, on its test GPUs): the midpoint of the SXM's 989 and
    # the NVL's 835 dense bf16 TFLOP/s (calibration.POWER_CAPPED_H100_PEAK_FLOPS), NVLink4 as the SXM.
    "h100_96gb_500w": GpuSpec("h100_96gb_500w", "H100 96GB HBM2e 500W", "hopper", POWER_CAPPED_H100_PEAK_FLOPS,
                              96e9, 2.4e12, 450e9, 8, 2.0 * POWER_CAPPED_H100_PEAK_FLOPS),
    # The export variant of H100 (DeepSeek-V3's cluster, arXiv:2412.19437 Sec 3.1): the same
    # compute and HBM, NVLink cut to 400 GB/s in both directions together (200 GB/s one way).
    "h800_80gb": GpuSpec("h800_80gb", "H800 SXM 80GB", "hopper", 989e12, 80e9, 3.35e12, 200e9, 8, 1979e12),
    # Same compute as H100; 141 GB HBM3e at 4.8 TB/s.
    "h200_141gb": GpuSpec("h200_141gb", "H200 SXM 141GB", "hopper", 989e12, 141e9, 4.8e12, 450e9, 8, 1979e12),
    # 2.25 PFLOP/s dense bf16 (4.5 dense FP8), 192 GB HBM3e at 8 TB/s, NVLink5 900 GB/s one way.
    "b200_192gb": GpuSpec("b200_192gb", "B200 192GB", "blackwell", 2.25e15, 192e9, 8e12, 900e9, 8, 4.5e15),
}


def nic_bytes_per_s(inter_node_gbps):
    """Achievable bytes/s per GPU on the inter-node fabric from its line rate in Gb/s.

    Gb/s / 8 is bytes/s; a ring collective reaches
    calibration.INTER_NODE_EFFICIENCY of it (a teaching assumption, see there).
    """
    return inter_node_gbps * 1e9 / 8.0 * INTER_NODE_EFFICIENCY


def nvlink_busbw_bytes_per_s(device):
    """Asymptotic all-reduce bus bandwidth inside one node (calibration.NVLINK_BUSBW_FRACTION)."""
    return device.nvlink_bytes_per_s * NVLINK_BUSBW_FRACTION[device.id]
