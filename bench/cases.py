"""The fixed configurations bench_model.py times (reused by the Node/Pyodide bench).

bench_cases() -> list of (workload dict, parallelism dict), plain JSON values.
"""


def bench_cases():
    gpt3 = dict(params=175e9, gpus=1024, seq_len=2048, global_batch_tokens=1536 * 2048, layers=96,
                hidden=12288, heads=96, flash_attention=False, inter_node_gbps=200)
    return [
        (dict(params=1.3e9, gpus=8, seq_len=2048, global_batch_tokens=512 * 2048, layers=24, hidden=2048, heads=16),
         dict(tp=1, pp=1, dp=8, zero=1, recompute="none", sequence_parallel=False, micro_batch=4, interleave=1)),
        (dict(params=7e9, gpus=64, seq_len=4096, global_batch_tokens=1024 * 4096, layers=32, hidden=4096, heads=32,
              gpu="h100_80gb", inter_node_gbps=400),
         dict(tp=2, pp=1, dp=32, zero=1, recompute="selective", sequence_parallel=True, micro_batch=2, interleave=1)),
        (dict(params=22e9, gpus=8, seq_len=2048, global_batch_tokens=4 * 2048, layers=48, hidden=6144, heads=64,
              flash_attention=False),
         dict(tp=8, pp=1, dp=1, zero=0, recompute="selective", sequence_parallel=True, micro_batch=4, interleave=1)),
        (gpt3, dict(tp=8, pp=8, dp=16, zero=1, recompute="full", sequence_parallel=False, micro_batch=1, interleave=1)),
        (dict(params=70e9, gpus=2048, seq_len=4096, global_batch_tokens=1024 * 4096, layers=80, hidden=8192, heads=64,
              gpu="h100_80gb", inter_node_gbps=400),
         dict(tp=8, pp=4, dp=64, zero=3, recompute="selective", sequence_parallel=True, micro_batch=1, interleave=1)),
        (dict(params=1e12, gpus=3072, seq_len=2048, global_batch_tokens=3072 * 2048, layers=128, hidden=25600,
              heads=160, flash_attention=False),
         dict(tp=8, pp=64, dp=6, zero=1, recompute="full", sequence_parallel=False, micro_batch=1, interleave=1)),
    ]
