"""The fixed workloads bench_planner.py (CPython) and node_bench.mjs (Pyodide) time.

Plain data: the five sanity workloads of the planner issue and 1T on 8 GPUs first, then
44 drawn once (seed 20240601) log-uniformly over the slider ranges of lab_core.inputs, with
a GPU preset other than the default in ~30% and flash attention off in ~20%; then the
long-context and mixture-of-experts cases (LONG_CONTEXT_AND_MOE_CASES: Llama 3 405B at 128K
tokens, 405B at 32K on 2,048 GPUs, DeepSeek-V3 on 2,048 H800s, Mixtral 8x22B on 128 H100s).
"""

PLANNER_CASES = [
    {'params': 1300000000.0, 'gpus': 1},
    {'params': 1300000000.0, 'gpus': 64},
    {'params': 13000000000.0, 'gpus': 64},
    {'params': 175000000000.0, 'gpus': 1024, 'global_batch_tokens': 3145728},
    {'params': 405000000000.0, 'gpus': 16384, 'gpu': 'h100_80gb', 'seq_len': 8192, 'global_batch_tokens': 16777216, 'inter_node_gbps': 400},
    {'params': 1000000000000.0, 'gpus': 8},
    {'params': 392000000.0, 'gpus': 79, 'global_batch_tokens': 16777216, 'seq_len': 4096, 'inter_node_gbps': 196.0, 'checkpoint_interval_min': 4.35},
    {'params': 263000000.0, 'gpus': 25307, 'global_batch_tokens': 33554432, 'seq_len': 131072, 'inter_node_gbps': 128.0, 'checkpoint_interval_min': 2.54},
    {'params': 425000000.0, 'gpus': 19076, 'global_batch_tokens': 33554432, 'seq_len': 131072, 'inter_node_gbps': 36.1, 'checkpoint_interval_min': 589.0},
    {'params': 6840000000.0, 'gpus': 419, 'global_batch_tokens': 33554432, 'seq_len': 65536, 'inter_node_gbps': 31.9, 'checkpoint_interval_min': 414.0, 'gpu': 'h100_80gb', 'flash_attention': False},
    {'params': 472000000.0, 'gpus': 750, 'global_batch_tokens': 4194304, 'seq_len': 32768, 'inter_node_gbps': 2410.0, 'checkpoint_interval_min': 20.5, 'flash_attention': False},
    {'params': 1920000000.0, 'gpus': 14, 'global_batch_tokens': 1048576, 'seq_len': 512, 'inter_node_gbps': 34.2, 'checkpoint_interval_min': 5.23},
    {'params': 22400000000.0, 'gpus': 16802, 'global_batch_tokens': 131072, 'seq_len': 32768, 'inter_node_gbps': 2240.0, 'checkpoint_interval_min': 5.25},
    {'params': 74200000000.0, 'gpus': 3499, 'global_batch_tokens': 1048576, 'seq_len': 32768, 'inter_node_gbps': 268.0, 'checkpoint_interval_min': 300.0, 'flash_attention': False},
    {'params': 3020000000.0, 'gpus': 29273, 'global_batch_tokens': 2097152, 'seq_len': 32768, 'inter_node_gbps': 185.0, 'checkpoint_interval_min': 1040.0},
    {'params': 5310000000.0, 'gpus': 14, 'global_batch_tokens': 8388608, 'seq_len': 32768, 'inter_node_gbps': 438.0, 'checkpoint_interval_min': 2.83},
    {'params': 2860000000.0, 'gpus': 2, 'global_batch_tokens': 1048576, 'seq_len': 4096, 'inter_node_gbps': 32.7, 'checkpoint_interval_min': 18.1},
    {'params': 58500000000.0, 'gpus': 18701, 'global_batch_tokens': 65536, 'seq_len': 512, 'inter_node_gbps': 96.4, 'checkpoint_interval_min': 2.63, 'gpu': 'b200_192gb'},
    {'params': 329000000000.0, 'gpus': 890, 'global_batch_tokens': 131072, 'seq_len': 65536, 'inter_node_gbps': 146.0, 'checkpoint_interval_min': 47.5},
    {'params': 748000000000.0, 'gpus': 751, 'global_batch_tokens': 33554432, 'seq_len': 65536, 'inter_node_gbps': 43.4, 'checkpoint_interval_min': 30.7},
    {'params': 142000000.0, 'gpus': 28, 'global_batch_tokens': 2097152, 'seq_len': 131072, 'inter_node_gbps': 64.5, 'checkpoint_interval_min': 636.0, 'gpu': 'h100_80gb'},
    {'params': 5870000000.0, 'gpus': 29530, 'global_batch_tokens': 8388608, 'seq_len': 131072, 'inter_node_gbps': 123.0, 'checkpoint_interval_min': 2.08},
    {'params': 198000000000.0, 'gpus': 506, 'global_batch_tokens': 524288, 'seq_len': 2048, 'inter_node_gbps': 215.0, 'checkpoint_interval_min': 13.3, 'flash_attention': False},
    {'params': 28400000000.0, 'gpus': 3, 'global_batch_tokens': 33554432, 'seq_len': 1024, 'inter_node_gbps': 61.4, 'checkpoint_interval_min': 58.9},
    {'params': 755000000000.0, 'gpus': 10090, 'global_batch_tokens': 1048576, 'seq_len': 65536, 'inter_node_gbps': 54.6, 'checkpoint_interval_min': 697.0},
    {'params': 1360000000.0, 'gpus': 634, 'global_batch_tokens': 4194304, 'seq_len': 2048, 'inter_node_gbps': 2120.0, 'checkpoint_interval_min': 17.4, 'gpu': 'b200_192gb'},
    {'params': 5520000000.0, 'gpus': 1176, 'global_batch_tokens': 4194304, 'seq_len': 16384, 'inter_node_gbps': 1100.0, 'checkpoint_interval_min': 13.6},
    {'params': 38000000000.0, 'gpus': 389, 'global_batch_tokens': 2097152, 'seq_len': 8192, 'inter_node_gbps': 1500.0, 'checkpoint_interval_min': 107.0},
    {'params': 239000000000.0, 'gpus': 2, 'global_batch_tokens': 524288, 'seq_len': 4096, 'inter_node_gbps': 55.1, 'checkpoint_interval_min': 664.0},
    {'params': 283000000.0, 'gpus': 933, 'global_batch_tokens': 8388608, 'seq_len': 32768, 'inter_node_gbps': 77.8, 'checkpoint_interval_min': 1.13},
    {'params': 42000000000.0, 'gpus': 61, 'global_batch_tokens': 262144, 'seq_len': 65536, 'inter_node_gbps': 316.0, 'checkpoint_interval_min': 3.63, 'gpu': 'h100_80gb'},
    {'params': 1540000000.0, 'gpus': 25, 'global_batch_tokens': 16777216, 'seq_len': 4096, 'inter_node_gbps': 2130.0, 'checkpoint_interval_min': 216.0, 'flash_attention': False},
    {'params': 922000000000.0, 'gpus': 10245, 'global_batch_tokens': 2097152, 'seq_len': 2048, 'inter_node_gbps': 32.4, 'checkpoint_interval_min': 8.44},
    {'params': 2830000000.0, 'gpus': 3008, 'global_batch_tokens': 131072, 'seq_len': 512, 'inter_node_gbps': 46.8, 'checkpoint_interval_min': 81.1},
    {'params': 140000000000.0, 'gpus': 3, 'global_batch_tokens': 4194304, 'seq_len': 131072, 'inter_node_gbps': 47.1, 'checkpoint_interval_min': 33.1},
    {'params': 6390000000.0, 'gpus': 3, 'global_batch_tokens': 2097152, 'seq_len': 512, 'inter_node_gbps': 428.0, 'checkpoint_interval_min': 35.3},
    {'params': 645000000.0, 'gpus': 16938, 'global_batch_tokens': 67108864, 'seq_len': 8192, 'inter_node_gbps': 27.4, 'checkpoint_interval_min': 206.0, 'gpu': 'h200_141gb'},
    {'params': 2980000000.0, 'gpus': 28366, 'global_batch_tokens': 16777216, 'seq_len': 131072, 'inter_node_gbps': 1280.0, 'checkpoint_interval_min': 143.0},
    {'params': 13400000000.0, 'gpus': 125, 'global_batch_tokens': 33554432, 'seq_len': 8192, 'inter_node_gbps': 856.0, 'checkpoint_interval_min': 3.87},
    {'params': 282000000000.0, 'gpus': 30, 'global_batch_tokens': 1048576, 'seq_len': 131072, 'inter_node_gbps': 334.0, 'checkpoint_interval_min': 22.1},
    {'params': 58600000000.0, 'gpus': 6, 'global_batch_tokens': 8388608, 'seq_len': 8192, 'inter_node_gbps': 2550.0, 'checkpoint_interval_min': 47.6, 'flash_attention': False},
    {'params': 92200000000.0, 'gpus': 292, 'global_batch_tokens': 524288, 'seq_len': 65536, 'inter_node_gbps': 2010.0, 'checkpoint_interval_min': 148.0},
    {'params': 4560000000.0, 'gpus': 249, 'global_batch_tokens': 67108864, 'seq_len': 512, 'inter_node_gbps': 2070.0, 'checkpoint_interval_min': 755.0},
    {'params': 397000000.0, 'gpus': 18, 'global_batch_tokens': 524288, 'seq_len': 512, 'inter_node_gbps': 32.1, 'checkpoint_interval_min': 17.9, 'gpu': 'h100_80gb'},
    {'params': 2970000000.0, 'gpus': 14, 'global_batch_tokens': 4194304, 'seq_len': 32768, 'inter_node_gbps': 1810.0, 'checkpoint_interval_min': 13.5},
    {'params': 2100000000.0, 'gpus': 6, 'global_batch_tokens': 16777216, 'seq_len': 1024, 'inter_node_gbps': 202.0, 'checkpoint_interval_min': 15.8},
    {'params': 2040000000.0, 'gpus': 13, 'global_batch_tokens': 2097152, 'seq_len': 65536, 'inter_node_gbps': 332.0, 'checkpoint_interval_min': 2.65, 'gpu': 'h100_80gb'},
    {'params': 544000000.0, 'gpus': 4, 'global_batch_tokens': 524288, 'seq_len': 16384, 'inter_node_gbps': 1540.0, 'checkpoint_interval_min': 32.6, 'gpu': 'b200_192gb'},
    {'params': 1240000000.0, 'gpus': 27, 'global_batch_tokens': 67108864, 'seq_len': 65536, 'inter_node_gbps': 78.2, 'checkpoint_interval_min': 3.99},
    {'params': 16600000000.0, 'gpus': 2809, 'global_batch_tokens': 262144, 'seq_len': 4096, 'inter_node_gbps': 57.0, 'checkpoint_interval_min': 145.0, 'gpu': 'b200_192gb'},
]

LLAMA3_405B = {'params': 405e9, 'layers': 126, 'hidden': 16384, 'heads': 128, 'kv_heads': 8, 'ffn_hidden': 79872,
               'vocab': 128256, 'gpu': 'h100_80gb', 'inter_node_gbps': 400, 'dropout': False}

LONG_CONTEXT_AND_MOE_CASES = [
    dict(LLAMA3_405B, gpus=16384, seq_len=131072, global_batch_tokens=16777216),
    dict(LLAMA3_405B, gpus=2048, seq_len=32768, global_batch_tokens=4194304),
    {'params': 671e9, 'layers': 61, 'hidden': 7168, 'heads': 128, 'kv_heads': 128, 'head_dim': 192, 'v_head_dim': 128,
     'q_lora_rank': 1536, 'kv_lora_rank': 512, 'moe_dispatcher': 'per_node', 'ffn_hidden': 27648,
     'vocab': 129280, 'experts': 256, 'experts_per_token': 8, 'expert_ffn_hidden': 3072, 'shared_experts': 1,
     'dense_layers': 3, 'gpus': 2048, 'global_batch_tokens': 62914560, 'seq_len': 4096, 'gpu': 'h800_80gb',
     'inter_node_gbps': 400, 'precision': 'fp8', 'dropout': False},
    {'params': 141e9, 'layers': 56, 'hidden': 6144, 'heads': 48, 'kv_heads': 8, 'ffn_hidden': 24576, 'vocab': 32768,
     'experts': 8, 'experts_per_token': 2, 'expert_ffn_hidden': 24576, 'gpus': 128, 'seq_len': 16384,
     'global_batch_tokens': 16777216, 'gpu': 'h100_80gb', 'inter_node_gbps': 400},
]

PLANNER_CASES = PLANNER_CASES + LONG_CONTEXT_AND_MOE_CASES

