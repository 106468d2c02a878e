"""Published layouts (content/validation/published.yaml) as workload + parallelism.

act.table3.configs (arXiv:2205.05198 Table 3: Selene A100-80GB, seq 2048,
vocab 51200, no data parallelism, interleaving 3 for 175B and 530B, selective
recompute + sequence parallelism, no flash attention) and ptdp.training_time
(arXiv:2104.04473: GPT-3 175B on 1,024 GPUs, batch 1,536, full recompute).
"""

PUBLISHED = [
    ("act.table3.22B",
     dict(params=22e9, gpus=8, seq_len=2048, global_batch_tokens=4 * 2048, layers=48, hidden=6144, heads=64,
          flash_attention=False),
     dict(tp=8, pp=1, dp=1, micro_batch=4, interleave=1, recompute="selective", sequence_parallel=True)),
    ("act.table3.175B",
     dict(params=175e9, gpus=64, seq_len=2048, global_batch_tokens=64 * 2048, layers=96, hidden=12288, heads=96,
          flash_attention=False),
     dict(tp=8, pp=8, dp=1, micro_batch=1, interleave=3, recompute="selective", sequence_parallel=True)),
    ("act.table3.530B",
     dict(params=530e9, gpus=280, seq_len=2048, global_batch_tokens=280 * 2048, layers=105, hidden=20480,
          heads=128, flash_attention=False),
     dict(tp=8, pp=35, dp=1, micro_batch=1, interleave=3, recompute="selective", sequence_parallel=True)),
    ("act.table3.1T",
     dict(params=1e12, gpus=512, seq_len=2048, global_batch_tokens=512 * 2048, layers=128, hidden=25600,
          heads=160, flash_attention=False),
     dict(tp=8, pp=64, dp=1, micro_batch=1, interleave=1, recompute="selective", sequence_parallel=True)),
    ("ptdp.training_time.gpt3_175B",
     dict(params=175e9, gpus=1024, seq_len=2048, global_batch_tokens=1536 * 2048, layers=96, hidden=12288,
          heads=96, flash_attention=False),
     dict(tp=8, pp=8, dp=16, micro_batch=1, interleave=1, recompute="full", sequence_parallel=False)),
]
