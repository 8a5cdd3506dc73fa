# Class: WGAN training as its papers write it: five critic updates for each generator update,
# every critic update its own forward, backward() (line 21) and optimizer step, then the
# generator's (line 27); critic and generator small MLPs of about the same size at batch 256, so
# each backward pass is about as long as the next. Six backward passes a step, each after a
# forward of its own — yet no gradient is accumulated: every pass is followed by an optimizer step.
import time, torch
def mlp(i, o): return torch.nn.Sequential(torch.nn.Linear(i, 512), torch.nn.ReLU(), torch.nn.Linear(512, 512),
                                          torch.nn.ReLU(), torch.nn.Linear(512, o)).cuda()
G, D = mlp(64, 256), mlp(256, 1)
opt_g = torch.optim.RMSprop(G.parameters(), lr=5e-5)
opt_d = torch.optim.RMSprop(D.parameters(), lr=5e-5)
real = torch.randn(4096, 256, device="cuda")
N_CRITIC = 5
t = time.time(); steps = 0
while time.time() - t < 2:
    for _ in range(N_CRITIC):
        x = real[torch.randint(0, 4096, (256,), device="cuda")]
        z = torch.randn(256, 64, device="cuda")
        loss_d = D(G(z).detach()).mean() - D(x).mean()
        opt_d.zero_grad()
        loss_d.backward()
        opt_d.step()
        for p in D.parameters():
            p.data.clamp_(-0.01, 0.01)
    z = torch.randn(256, 64, device="cuda")
    loss_g = -D(G(z)).mean()
    opt_g.zero_grad(); loss_g.backward(); opt_g.step()
    steps += 1
torch.cuda.synchronize(); print(f"c82 wall_s={time.time()-t:.3f} steps={steps}")
