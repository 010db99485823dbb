"""Writes a tiny random-weight Llama model with a locally trained tokenizer
and a chat template into the directory given as argv[1]. Nothing is
downloaded: the tokenizer is trained here with `tokenizers`, the weights are
random from `transformers`' config. head_dim is 64 because vLLM's CPU
attention refuses smaller heads ("Unsupported CPU attention configuration:
head_dim=16")."""
import os
import sys

from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
words = ("the quick brown fox jumps over the lazy dog hello world benchmark token stream engine latency "
         "throughput request response model serve client server metric prefix cache decode prefill ").split()
corpus = [" ".join(words[i % len(words):] + words[:i % len(words)]) for i in range(200)]
tok = Tokenizer(models.BPE(unk_token="<unk>"))
tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
tok.decoder = decoders.ByteLevel()
trainer = trainers.BpeTrainer(vocab_size=1000, special_tokens=["<unk>", "<s>", "</s>"],
                              initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
tok.train_from_iterator(corpus, trainer)
fast = PreTrainedTokenizerFast(tokenizer_object=tok, bos_token="<s>", eos_token="</s>", unk_token="<unk>")
fast.chat_template = ("{% for m in messages %}<s>{{ m['role'] }}\n{{ m['content'] }}</s>\n{% endfor %}"
                      "{% if add_generation_prompt %}<s>assistant\n{% endif %}")
fast.save_pretrained(out)
cfg = LlamaConfig(vocab_size=tok.get_vocab_size(), hidden_size=128, intermediate_size=256, num_hidden_layers=2,
                  num_attention_heads=2, num_key_value_heads=2, max_position_embeddings=2048,
                  bos_token_id=1, eos_token_id=2, torch_dtype="float32")
LlamaForCausalLM(cfg).save_pretrained(out)
print("model written to", out, "vocab", tok.get_vocab_size())
