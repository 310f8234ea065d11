"""A small PyTorch program with the kernel shapes of an LLM layer (GEMM, elementwise, softmax,
layer norm, reduction, gather, scan), profiled with `ncu --set full` to produce a real Nsight
Compute export (tests/data/ncu/) and to check the calculator against ncu's block limits."""
import torch


def main():
    torch.manual_seed(0)
    dev = "cuda"
    x = torch.randn(4096, 4096, device=dev, dtype=torch.float16)
    w = torch.randn(4096, 4096, device=dev, dtype=torch.float16)
    idx = torch.randint(0, 4096, (2048,), device=dev)
    torch.cuda.synchronize()

    y = x @ w                                        # GEMM (cuBLAS/CUTLASS)
    g = torch.nn.functional.gelu(y)                  # elementwise
    s = torch.softmax(g.float(), dim=-1)             # cast + row softmax
    n = torch.nn.functional.layer_norm(y, (4096,))   # layer norm
    r = s.sum(dim=0)                                 # column reduction
    e = n.index_select(0, idx)                       # gather
    c = torch.cumsum(r, 0)                           # scan
    torch.cuda.synchronize()
    print("checksum", float(c[-1]), float(e.float().mean()))


if __name__ == "__main__":
    main()
