# Class: raw text tokenized inside the training loop, on the main thread: each step calls a Hugging
# Face fast tokenizer (tokenizers' Rust library, its own thread pool) on 256 strings with
# padding and return_tensors="pt" (line 30), then moves the batch to the GPU for a small
# transformer encoder whose step is a few milliseconds. The GPU waits while the host tokenizes.
import os, random, time, warnings
os.environ.update(HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
warnings.filterwarnings("ignore")
import torch
from tokenizers import Tokenizer, models, pre_tokenizers, trainers
from transformers import PreTrainedTokenizerFast

random.seed(0); torch.manual_seed(0)
words = ["".join(random.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(random.randint(3, 9))) for _ in range(6000)]
texts = [" ".join(random.choices(words, k=300)) for _ in range(4096)]      # the raw dataset, made once
core = Tokenizer(models.WordPiece(unk_token="[UNK]"))
core.pre_tokenizer = pre_tokenizers.Whitespace()
core.train_from_iterator(texts[:1000], trainers.WordPieceTrainer(vocab_size=8000, special_tokens=["[UNK]", "[PAD]"]))
tok = PreTrainedTokenizerFast(tokenizer_object=core, unk_token="[UNK]", pad_token="[PAD]")

layer = torch.nn.TransformerEncoderLayer(d_model=256, nhead=4, dim_feedforward=1024, batch_first=True)
emb = torch.nn.Embedding(8000, 256).cuda()
enc = torch.nn.TransformerEncoder(layer, num_layers=2).cuda()
head = torch.nn.Linear(256, 2).cuda()
params = list(emb.parameters()) + list(enc.parameters()) + list(head.parameters())
opt = torch.optim.AdamW(params, lr=1e-4)

t = time.time()
for step in range(120):
    batch = texts[(step * 256) % 4096:(step * 256) % 4096 + 256]
    enc_in = tok(batch, padding="max_length", truncation=True, max_length=256, return_tensors="pt")  # tokenize
    ids = enc_in["input_ids"].cuda(non_blocking=True)
    y = (ids[:, 0] % 2).long()
    loss = torch.nn.functional.cross_entropy(head(enc(emb(ids)).mean(1)), y)
    opt.zero_grad(set_to_none=True); loss.backward(); opt.step()
torch.cuda.synchronize(); print(f"c63 wall_s={time.time()-t:.3f}")
