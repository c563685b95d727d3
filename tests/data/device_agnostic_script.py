# A device-agnostic training script written for PyTorch, kept exactly as torch users write
# it; tests/test_device_agnostic.py runs it with `torch` resolving to cudalite.
import torch
import torch.nn as nn

if torch.cuda.is_available():
    device = torch.device("cuda")
elif torch.backends.mps.is_available():
    device = torch.device("mps")
else:
    device = torch.device("cpu")
print("device:", device)
print("accelerator:", torch.accelerator.current_accelerator(check_available=True))

torch.backends.cudnn.benchmark = True
torch.backends.cudnn.deterministic = False
torch.backends.cuda.matmul.allow_tf32 = True
print("torch", torch.__version__, "cuda", torch.version.cuda)
torch.set_num_threads(2)
print("threads:", torch.get_num_threads())
torch.use_deterministic_algorithms(False)
torch.manual_seed(0)

model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1)).to(device)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x = torch.randn(16, 4, device=device)
y = x.sum(dim=1, keepdim=True)
losses = []
for _ in range(5):
    opt.zero_grad()
    loss = nn.functional.mse_loss(model(x), y)
    loss.backward()
    opt.step()
    losses.append(loss.item())
if device.type == "cuda":
    torch.cuda.synchronize()
print("loss went down:", losses[-1] < losses[0])
