"""Data pipeline: what the GPUs consume against what loaders and storage deliver."""
from .calibration import DATA_BYTES_PER_TOKEN


def data_pipeline(tokens_per_s, nodes, loader_tokens_per_s_per_node, storage_read_bytes_per_s):
    """Required tokens/s and bytes/s vs capability; ratios above 1 mean starved GPUs.

    Bytes per token: calibration.DATA_BYTES_PER_TOKEN (pre-tokenized ids).
    """
    loader = nodes * loader_tokens_per_s_per_node
    read = tokens_per_s * DATA_BYTES_PER_TOKEN
    return {
        "required_tokens_per_s": tokens_per_s,
        "loader_tokens_per_s": loader,
        "loader_ratio": tokens_per_s / loader,
        "required_read_bytes_per_s": read,
        "storage_read_bytes_per_s": storage_read_bytes_per_s,
        "storage_ratio": read / storage_read_bytes_per_s,
    }
