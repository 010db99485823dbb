"""Writes a tiny random-weight Llama GGUF (2 layers, d=64) to argv[2], with
the real 32,000-token Llama SentencePiece vocabulary copied from argv[1]
(llama.cpp's models/ggml-vocab-llama-spm.gguf, a vocabulary-only GGUF that
the same llama-cpp-python sdist vendors) and a ChatML chat template.
Nothing is downloaded. The weights are seeded, so the file is the same on
every machine; the text the model writes is gibberish, while tokenization,
templates, streaming, usage and metrics are llama-server's own."""
import sys

import gguf
import numpy as np

vocab_path, out = sys.argv[1], sys.argv[2]
D, FF, LAYERS, HEADS, CTX = 64, 128, 2, 2, 2048
CHATML = ("{% for message in messages %}{{'<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n'}}"
          "{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}")

vocab = gguf.GGUFReader(vocab_path)
def field(name):
    return vocab.fields[name].contents()

tokens = field("tokenizer.ggml.tokens")
w = gguf.GGUFWriter(out, "llama")
w.add_name("llmbench tiny llama (random weights)")
w.add_context_length(CTX)
w.add_embedding_length(D)
w.add_block_count(LAYERS)
w.add_feed_forward_length(FF)
w.add_head_count(HEADS)
w.add_head_count_kv(HEADS)
w.add_layer_norm_rms_eps(1e-5)
w.add_rope_dimension_count(D // HEADS)
w.add_vocab_size(len(tokens))
w.add_file_type(gguf.LlamaFileType.ALL_F32)
w.add_tokenizer_model(field("tokenizer.ggml.model"))
w.add_tokenizer_pre(field("tokenizer.ggml.pre"))
w.add_token_list(tokens)
w.add_token_scores(field("tokenizer.ggml.scores"))
w.add_token_types(field("tokenizer.ggml.token_type"))
w.add_bos_token_id(field("tokenizer.ggml.bos_token_id"))
w.add_eos_token_id(field("tokenizer.ggml.eos_token_id"))
w.add_unk_token_id(field("tokenizer.ggml.unknown_token_id"))
w.add_add_bos_token(field("tokenizer.ggml.add_bos_token"))
w.add_add_eos_token(field("tokenizer.ggml.add_eos_token"))
w.add_chat_template(CHATML)

rng = np.random.default_rng(22)
def rand(*shape):
    return (rng.standard_normal(shape) * 0.02).astype(np.float32)

# numpy shapes are (rows, columns): ggml's ne reversed.
w.add_tensor("token_embd.weight", rand(len(tokens), D))
for i in range(LAYERS):
    w.add_tensor(f"blk.{i}.attn_norm.weight", np.ones(D, dtype=np.float32))
    for t in ("attn_q", "attn_k", "attn_v", "attn_output"):
        w.add_tensor(f"blk.{i}.{t}.weight", rand(D, D))
    w.add_tensor(f"blk.{i}.ffn_norm.weight", np.ones(D, dtype=np.float32))
    w.add_tensor(f"blk.{i}.ffn_gate.weight", rand(FF, D))
    w.add_tensor(f"blk.{i}.ffn_up.weight", rand(FF, D))
    w.add_tensor(f"blk.{i}.ffn_down.weight", rand(D, FF))
w.add_tensor("output_norm.weight", np.ones(D, dtype=np.float32))
w.add_tensor("output.weight", rand(len(tokens), D))

w.write_header_to_file()
w.write_kv_data_to_file()
w.write_tensors_to_file()
w.close()
print("wrote", out, "vocab", len(tokens))
