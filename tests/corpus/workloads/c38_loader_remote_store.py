# Class: data loading bound by a remote store. Each item is fetched from a key-value store over TCP
# (a process standing in for an object store: ~2 ms a request), one request per item in the
# Dataset's __getitem__, by 4 DataLoader workers, 16 items a batch, for a small MLP whose step is
# far shorter than a batch's fetches. The GPU waits on the network round trips.
import multiprocessing as mp, socket, socketserver, struct, time, torch
from torch.utils.data import Dataset, DataLoader
ITEM = 64 * 1024
class Store(socketserver.BaseRequestHandler):
    def handle(self):
        blob = bytes(ITEM)
        while len(self.request.recv(8)) == 8:
            time.sleep(0.002)                      # the store's latency
            self.request.sendall(blob)
def serve(port_q):
    socketserver.ThreadingTCPServer.daemon_threads = True
    with socketserver.ThreadingTCPServer(("127.0.0.1", 0), Store) as s:
        port_q.put(s.server_address[1]); s.serve_forever()
class Remote(Dataset):
    def __init__(self, port): self.port = port
    def __len__(self): return 100_000
    def __getitem__(self, i):
        if not hasattr(self, "conn"): self.conn = socket.create_connection(("127.0.0.1", self.port))
        self.conn.sendall(struct.pack("q", i)); got = bytearray()
        while len(got) < ITEM: got += self.conn.recv(ITEM - len(got))   # the fetch
        return torch.frombuffer(got, dtype=torch.int16)[:4096].float()
if __name__ == "__main__":
    q = mp.get_context("fork").Queue(); store = mp.get_context("fork").Process(target=serve, args=(q,), daemon=True)
    store.start(); port = q.get()
    net = torch.nn.Sequential(torch.nn.Linear(4096, 4096), torch.nn.ReLU(), torch.nn.Linear(4096, 10)).cuda()
    opt = torch.optim.SGD(net.parameters(), lr=0.01)
    dl = DataLoader(Remote(port), batch_size=16, num_workers=4, shuffle=True, persistent_workers=True)
    t = time.time(); steps = 0
    for x in dl:
        loss = net(x.cuda()).square().mean()
        opt.zero_grad(); loss.backward(); opt.step(); steps += 1
        if time.time() - t > 12: break
    torch.cuda.synchronize(); print(f"c38 wall_s={time.time()-t:.3f} steps={steps}")
