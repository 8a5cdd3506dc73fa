# Class: Hugging Face Accelerate with gradient accumulation (4 micro-batches an optimizer step,
# bf16), a small GPT-2 built from its config (no download), batches made on the GPU — and the
# loss logged the way many scripts do: accelerator.gather(loss).mean().item() after every
# micro-batch (line 35), a sync four times an optimizer step; the micro-batches are small, so the
# host's launches and those syncs bound the loop.
import os, time, warnings
os.environ.update(HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", TOKENIZERS_PARALLELISM="false")
warnings.filterwarnings("ignore")
import torch
from accelerate import Accelerator
from transformers import GPT2Config, GPT2LMHeadModel
from transformers.utils import logging as hf_logging
hf_logging.set_verbosity_error()

class Tokens(torch.utils.data.Dataset):
    def __init__(self, n=4096, t=128, vocab=8192):
        self.ids = torch.randint(0, vocab, (n, t), generator=torch.Generator().manual_seed(0))
    def __len__(self): return len(self.ids)
    def __getitem__(self, i): return self.ids[i]

acc = Accelerator(gradient_accumulation_steps=4, mixed_precision="bf16")
model = GPT2LMHeadModel(GPT2Config(vocab_size=8192, n_positions=128, n_embd=256, n_layer=4, n_head=4))
opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
loader = torch.utils.data.DataLoader(Tokens(), batch_size=8, shuffle=True)
model, opt, loader = acc.prepare(model, opt, loader)
losses = []
t = time.time()
for epoch in range(1):
    for ids in loader:
        with acc.accumulate(model):
            out = model(input_ids=ids, labels=ids)
            acc.backward(out.loss)
            opt.step()
            opt.zero_grad()
        losses.append(acc.gather(out.loss.detach()).mean().item())   # logged every micro-batch
torch.cuda.synchronize(); print(f"c74 wall_s={time.time()-t:.3f} micro_batches={len(losses)}")
