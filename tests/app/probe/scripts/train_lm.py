"""A tiny language model fed (batch, seq_len) token ids, with two optimizers stepped in every
iteration (the embedding's SGD, the rest's Adam), as some fine-tuning scripts do."""
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset

VOCAB, SEQ_LEN, BATCH = 100, 16, 4


class TokenDataset(Dataset):
    def __len__(self):
        return 10000

    def __getitem__(self, index):
        generator = torch.Generator().manual_seed(index)
        return torch.randint(0, VOCAB, (SEQ_LEN + 1,), generator=generator)


class TinyLM(nn.Module):
    def __init__(self):
        super().__init__()
        self.embedding = nn.Embedding(VOCAB, 32)
        self.mixer = nn.GRU(32, 32, batch_first=True)
        self.head = nn.Linear(32, VOCAB)

    def forward(self, tokens):
        hidden, _ = self.mixer(self.embedding(tokens))
        return self.head(hidden)


model = TinyLM()
embedding_optimizer = torch.optim.SGD(model.embedding.parameters(), lr=0.1)
rest = [p for name, p in model.named_parameters() if not name.startswith("embedding")]
optimizer = torch.optim.Adam(rest, lr=1e-3)
for batch in DataLoader(TokenDataset(), batch_size=BATCH):
    inputs, targets = batch[:, :-1], batch[:, 1:]
    logits = model(inputs)
    loss = nn.functional.cross_entropy(logits.reshape(-1, VOCAB), targets.reshape(-1))
    embedding_optimizer.zero_grad()
    optimizer.zero_grad()
    loss.backward()
    embedding_optimizer.step()
    optimizer.step()
