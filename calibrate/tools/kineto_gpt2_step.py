#!/usr/bin/env python3
"""One GPT-2 small training step (12 layers, micro-batch 2, sequence 1024, bf16) under the PyTorch profiler, exported
as a Chrome trace for `partsim-calibrate import-kineto TRACE --workload gpt2-small`. Attention is written with explicit
matmuls (not a fused kernel) so that every product is a recorded aten op with shapes. Inputs are random, never zeros.

usage: kineto_gpt2_step.py OUT.json [--micro-batch 2] [--steps 3]
"""
import argparse
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class Block(nn.Module):
    def __init__(self, h=768, heads=12, ffn=3072):
        super().__init__()
        self.heads = heads
        self.ln1, self.ln2 = nn.LayerNorm(h), nn.LayerNorm(h)
        self.qkv, self.proj = nn.Linear(h, 3 * h), nn.Linear(h, h)
        self.up, self.down = nn.Linear(h, ffn), nn.Linear(ffn, h)

    def forward(self, x):
        b, s, h = x.shape
        d = h // self.heads
        q, k, v = self.qkv(self.ln1(x)).split(h, dim=-1)
        q, k, v = (t.view(b, s, self.heads, d).transpose(1, 2).reshape(b * self.heads, s, d) for t in (q, k, v))
        scores = torch.bmm(q, k.transpose(1, 2)) / math.sqrt(d)
        mask = torch.triu(torch.ones(s, s, device=x.device, dtype=torch.bool), 1)
        attn = torch.bmm(F.softmax(scores.masked_fill(mask, float("-inf")), dim=-1), v)
        x = x + self.proj(attn.view(b, self.heads, s, d).transpose(1, 2).reshape(b, s, h))
        return x + self.down(F.gelu(self.up(self.ln2(x))))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("out")
    p.add_argument("--micro-batch", type=int, default=2)
    p.add_argument("--steps", type=int, default=3)
    a = p.parse_args()
    torch.manual_seed(0)
    dev = "cuda"
    vocab, seq, h = 50257, 1024, 768
    emb, pos = nn.Embedding(vocab, h).to(dev), nn.Embedding(seq, h).to(dev)
    blocks = nn.Sequential(*[Block() for _ in range(12)]).to(dev)
    ln_f, head = nn.LayerNorm(h).to(dev), nn.Linear(h, vocab, bias=False).to(dev)
    params = [*emb.parameters(), *pos.parameters(), *blocks.parameters(), *ln_f.parameters(), *head.parameters()]
    opt = torch.optim.AdamW(params, lr=1e-4)
    tokens = torch.randint(0, vocab, (a.micro_batch, seq + 1), device=dev)

    def step():
        with torch.autocast("cuda", dtype=torch.bfloat16):
            x = emb(tokens[:, :-1]) + pos(torch.arange(seq, device=dev))
            logits = head(ln_f(blocks(x)))
            loss = F.cross_entropy(logits.float().view(-1, vocab), tokens[:, 1:].reshape(-1))
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    for _ in range(2):  # warm-up: cuBLAS heuristics, allocator, clocks
        step()
    torch.cuda.synchronize()
    acts = [torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]
    with torch.profiler.profile(activities=acts, record_shapes=True) as prof:
        for _ in range(a.steps):
            step()
        torch.cuda.synchronize()
    prof.export_chrome_trace(a.out)
    print(f"wrote {a.out}: {a.steps} steps of GPT-2 small at micro-batch {a.micro_batch} on {torch.cuda.get_device_name()}")


if __name__ == "__main__":
    main()
