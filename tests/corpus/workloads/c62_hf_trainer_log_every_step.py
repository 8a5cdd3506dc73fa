# Class: a real Hugging Face Trainer job (transformers.Trainer, one GPU): a small BERT built from its
# config (no download), random token batches, logging_steps=1. The Trainer keeps the running loss on
# the GPU and reads it with .item() when it logs, so logging every step makes a sync every step
# inside the library (transformers/trainer.py), reached from trainer.train() (line 33); the small
# model's step is short, so the host's launches and that sync bound it.
import os, tempfile, time, warnings
os.environ.update(HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", WANDB_DISABLED="true", TOKENIZERS_PARALLELISM="false")
warnings.filterwarnings("ignore")
import torch
from transformers import BertConfig, BertForSequenceClassification, Trainer, TrainingArguments
from transformers.utils import logging as hf_logging
hf_logging.set_verbosity_error()

class Tokens(torch.utils.data.Dataset):
    def __init__(self, n=9600, t=128, vocab=8192):
        g = torch.Generator().manual_seed(0)
        self.ids = torch.randint(0, vocab, (n, t), generator=g)
        self.labels = torch.randint(0, 2, (n,), generator=g)
    def __len__(self): return len(self.ids)
    def __getitem__(self, i):
        return {"input_ids": self.ids[i], "attention_mask": torch.ones_like(self.ids[i]), "labels": self.labels[i]}

if __name__ == "__main__":
    cfg = BertConfig(vocab_size=8192, hidden_size=256, num_hidden_layers=4, num_attention_heads=4,
                     intermediate_size=1024, max_position_embeddings=256, num_labels=2)
    model = BertForSequenceClassification(cfg)
    out = tempfile.mkdtemp()
    args = TrainingArguments(output_dir=out, per_device_train_batch_size=32, max_steps=300, logging_steps=1,
                             save_strategy="no", report_to=[], dataloader_num_workers=2,
                             disable_tqdm=True, learning_rate=1e-4)
    trainer = Trainer(model=model, args=args, train_dataset=Tokens())
    t = time.time()
    trainer.train()                                                          # the user's one call
    print(f"c62 wall_s={time.time()-t:.3f}")
