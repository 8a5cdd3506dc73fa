# Class: Hugging Face generate() with a TextIteratorStreamer, the way its documentation shows it:
# generate runs in a thread (line 30) while the main thread reads the streamed text. A small GPT-2
# built from its config (no download), batch 1, greedy, 160 new tokens a prompt. Each token is
# ~100 small kernels issued one by one from the generate thread, and the library syncs every token
# (the streamer's .tolist() in put(), generate's stopping check); the user's file is not on the
# generating thread's stack at all (Thread(target=model.generate)).
import os, threading, time, warnings
os.environ.update(HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", TOKENIZERS_PARALLELISM="false")
warnings.filterwarnings("ignore")
import torch
from transformers import GPT2Config, GPT2LMHeadModel, TextIteratorStreamer
from transformers.utils import logging as hf_logging
hf_logging.set_verbosity_error()

class Words:
    """The streamer only calls decode(); a tokenizer file needs a download."""
    def decode(self, ids, **kw): return " ".join(f"w{i}" for i in ids)

if __name__ == "__main__":
    torch.manual_seed(0)
    cfg = GPT2Config(vocab_size=8192, n_positions=512, n_embd=512, n_layer=6, n_head=8)
    model = GPT2LMHeadModel(cfg).cuda().eval()
    t = time.time(); words = 0
    for prompt in range(10):
        ids = torch.randint(0, 8192, (1, 32), device="cuda")
        streamer = TextIteratorStreamer(Words(), skip_prompt=True)
        kw = dict(input_ids=ids, attention_mask=torch.ones_like(ids), max_new_tokens=160,
                  min_new_tokens=160, do_sample=False, streamer=streamer, pad_token_id=0)
        gen = threading.Thread(target=model.generate, kwargs=kw)
        gen.start()                                                              # generate in a thread
        for text in streamer:                                                    # the main thread reads
            words += len(text.split())
        gen.join()
    print(f"c75 wall_s={time.time()-t:.3f} words={words}")
