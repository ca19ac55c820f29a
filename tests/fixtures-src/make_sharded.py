#!/usr/bin/env python3
"""Regenerates tests/fixtures/hf-sharded/: a sharded SafeTensors checkpoint in the
Hugging Face layout, written by Python's `safetensors` (numpy API), plus the same tensors
in one archive (all.safetensors) and the graphs that use them.

Layout, as `huggingface_hub.save_torch_state_dict` / `transformers` write it:
  model-0000k-of-0000N.safetensors   shards, metadata {"format": "pt"} (the shard holding
                                     packed 4-bit tensors: {"rustnn.webnn.packed4": "1"}
                                     instead; safetensors writes metadata from a hash map,
                                     so several keys would come out in a different order on
                                     every run and the files would not be reproducible)
  model.safetensors.index.json       {"metadata": {"total_size": N}, "weight_map": {...}}
                                     (json.dumps(indent=2, sort_keys=True) + "\n")

Run from the repository root:  python3 tests/fixtures-src/make_sharded.py
Needs: pip install safetensors numpy
"""

import json
import os
import sys

import numpy as np
from safetensors.numpy import save_file

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures", "hf-sharded")
PACKED4 = {"rustnn.webnn.packed4": "1"}


def pattern(shape, dtype, seed):
    n = int(np.prod(shape))
    values = (np.arange(n, dtype=np.int64) * 7 + seed * 13) % 251
    if np.issubdtype(np.dtype(dtype), np.floating):
        return ((values.astype(np.float64) - 125.0) / 16.0).astype(dtype).reshape(shape)
    return values.astype(dtype).reshape(shape)


# Shard -> (tensors, extra metadata). Names are Hugging Face style (dots); two names that
# normalize alike (pooler.dense.weight / pooler_dense.weight) sit in different shards.
SHARDS = [
    (
        {
            "embeddings.word_embeddings.weight": pattern((32, 8), np.float32, 1),
            "embeddings.position_ids": np.arange(16, dtype=np.int64).reshape(1, 16),
            "pooler.dense.weight": pattern((2, 2), np.float32, 2),
        },
        {},
    ),
    (
        {
            "encoder.layer.0.attention.self.query.weight": pattern((8, 8), np.float16, 3),
            "encoder.layer.0.attention.self.query.bias": pattern((8,), np.float32, 4),
            "pooler_dense.weight": pattern((2, 2), np.float32, 5),
            # Packed 4-bit bytes in a shard WITHOUT the packed-4-bit marker.
            "quant.unmarked": np.array([0x21, 0x43, 0x65, 0x87], dtype=np.uint8),
        },
        {},
    ),
    (
        {
            "encoder.layer.0.output.LayerNorm.weight": pattern((8,), np.float32, 6),
            "pooler.mask": np.array([1, 1, 1, 1, 0, 0, 0, 0], dtype=np.uint8),
            # int4[8] packed into 4 bytes; this shard carries the marker.
            "quant.w": np.array([0x10, 0x32, 0x54, 0x76], dtype=np.uint8),
        },
        PACKED4,
    ),
]

GRAPH = """webnn_graph "{name}" v1 @quantized {{
  inputs {{ ids: i64[1, 16]; }}
  consts {{
    emb: f32[32, 8] @weights("embeddings_word_embeddings_weight");
    tied: f32[32, 8] @weights("embeddings.word_embeddings.weight");
    q_weight: f16[8, 8] @weights("encoder.layer.0.attention.self.query.weight");
    q_bias: f32[8] @weights("encoder_layer_0_attention_self_query_bias");
    ln: f32[8] @weights("encoder.layer.0.output.LayerNorm.weight");
    pos: i64[1, 16] @weights("embeddings.position_ids");
    mask: u8[8] @weights("pooler.mask");
    pd: f32[2, 2] @weights("pooler_dense.weight");
    quant: i4[8] @weights("quant.w");
  }}
  nodes {{
    e = gather(emb, ids, axis=0);
    q = matmul(e, q_weight);
  }}
  outputs {{ q; }}
}}
"""

# A graph that needs only the first shard.
SMALL = """webnn_graph "small" v1 {
  inputs { ids: i64[1, 16]; }
  consts {
    emb: f32[32, 8] @weights("embeddings.word_embeddings.weight");
    pos: i64[1, 16] @weights("embeddings.position_ids");
  }
  nodes { e = gather(emb, ids, axis=0); }
  outputs { e; }
}
"""


def main():
    os.makedirs(OUT, exist_ok=True)
    for name in os.listdir(OUT):
        os.remove(os.path.join(OUT, name))
    n = len(SHARDS)
    weight_map = {}
    total_size = 0
    everything = {}
    for k, (tensors, extra) in enumerate(SHARDS, start=1):
        shard = f"model-{k:05d}-of-{n:05d}.safetensors"
        save_file(tensors, os.path.join(OUT, shard), metadata=extra or {"format": "pt"})
        for tensor_name, array in tensors.items():
            weight_map[tensor_name] = shard
            total_size += array.nbytes
            everything[tensor_name] = array
    index = {"metadata": {"total_size": total_size}, "weight_map": weight_map}
    with open(os.path.join(OUT, "model.safetensors.index.json"), "w") as f:
        f.write(json.dumps(index, indent=2, sort_keys=True) + "\n")
    # The same tensors in one archive.
    save_file(everything, os.path.join(OUT, "all.safetensors"), metadata=PACKED4)
    with open(os.path.join(OUT, "encoder.webnn"), "w") as f:
        f.write(GRAPH.format(name="encoder_sharded"))
    # Same graph, resolved against all.safetensors (explicit path).
    with open(os.path.join(OUT, "encoder_single.webnn"), "w") as f:
        f.write(GRAPH.format(name="encoder_single"))
    with open(os.path.join(OUT, "small.webnn"), "w") as f:
        f.write(SMALL)
    print(f"wrote {n} shards, index (total_size {total_size}), all.safetensors and graphs to {OUT}", file=sys.stderr)


if __name__ == "__main__":
    main()
