import sys, time, statistics
import cudalite as C
import torch

def t_gpu(fn, sync, n=20, rep=7):
    fn(); sync()
    ts = []
    for _ in range(rep):
        sync(); t0 = time.perf_counter()
        for _ in range(n): fn()
        sync(); ts.append((time.perf_counter() - t0) / n)
    return statistics.median(ts)

cs, ts_ = C.cuda.synchronize, torch.cuda.synchronize
torch.backends.cuda.matmul.allow_tf32 = False
flops = 2 * 8192 * 4096 * 4096
for dt in ("bfloat16", "float16", "float32"):
    xc = C.randn(8192, 4096, device="cuda", dtype=getattr(C, dt)); wc = C.randn(4096, 4096, device="cuda", dtype=getattr(C, dt)); bc = C.randn(4096, device="cuda", dtype=getattr(C, dt))
    xt = torch.randn(8192, 4096, device="cuda", dtype=getattr(torch, dt)); wt = torch.randn(4096, 4096, device="cuda", dtype=getattr(torch, dt)); bt = torch.randn(4096, device="cuda", dtype=getattr(torch, dt))
    r = {}
    r["mm cl"] = flops / t_gpu(lambda: xc @ wc.t(), cs, 3) / 1e12
    r["mm torch"] = flops / t_gpu(lambda: xt @ wt.t(), ts_, 3) / 1e12
    r["addmm cl"] = flops / t_gpu(lambda: C.addmm(bc, xc, wc.t()), cs, 3) / 1e12
    r["addmm torch"] = flops / t_gpu(lambda: torch.addmm(bt, xt, wt.t()), ts_, 3) / 1e12
    b2 = bt.expand(8192, 4096).contiguous()
    r["addmm torch 2d-bias"] = flops / t_gpu(lambda: torch.addmm(b2, xt, wt.t()), ts_, 3) / 1e12
    r["mm cl NN"] = flops / t_gpu(lambda: xc @ wc, cs, 3) / 1e12
    print(dt, {k: round(v, 1) for k, v in r.items()}, flush=True)

def lat(fn, sync, n=2000):
    fn(); sync()
    ts = []
    for _ in range(7):
        t0 = time.perf_counter()
        for _ in range(n): fn()
        ts.append((time.perf_counter() - t0) / n)
    return statistics.median(ts) * 1e6
a = C.ones(1, device="cuda"); at = torch.ones(1, device="cuda")
h = C.ones(1); ht = torch.ones(1)
print("item us: cl %.2f torch %.2f" % (lat(lambda: a.item(), cs), lat(lambda: at.item(), ts_)))
print("cuda() us: cl %.2f torch %.2f" % (lat(lambda: h.cuda(), cs), lat(lambda: ht.cuda(), ts_)))
print("tensor3 us: cl %.2f torch %.2f" % (lat(lambda: C.tensor([1., 2., 3.], device="cuda"), cs), lat(lambda: torch.tensor([1., 2., 3.], device="cuda"), ts_)))
b = C.ones(1, device="cuda"); bt1 = torch.ones(1, device="cuda")
print("add_ us: cl %.2f torch %.2f" % (lat(lambda: a.add_(b), cs), lat(lambda: at.add_(bt1), ts_)))
print("a+b us: cl %.2f torch %.2f" % (lat(lambda: a + b, cs), lat(lambda: at + bt1, ts_)))
print("a+=b us: cl %.2f" % lat(lambda: a.__iadd__(b), cs))
