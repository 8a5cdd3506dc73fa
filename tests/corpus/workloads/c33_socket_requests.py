# Class: an inference service fed over a TCP socket. A client (a thread standing in for the network)
# sends a request every ~20 ms; the main thread blocks reading the socket (line 23) between them,
# and each answer is ~2 ms of GPU work read back and sent to the client. The GPU idles because
# requests come slowly.
import socket, threading, time, torch
model = torch.nn.Sequential(torch.nn.Linear(4096, 4096), torch.nn.ReLU(), torch.nn.Linear(4096, 4096)).cuda().eval()
REQ = 2048 * 4096 // 256 * 4                   # a request: 32,768 float32 features, 128 KiB
srv = socket.create_server(("127.0.0.1", 0)); port = srv.getsockname()[1]
def client():
    c = socket.create_connection(("127.0.0.1", port)); payload = bytes(REQ)
    for _ in range(300):
        time.sleep(0.02)                       # the next user's request arrives
        c.sendall(payload); c.recv(8)
    c.close()
threading.Thread(target=client, daemon=True).start()
conn, _ = srv.accept()
buf = bytearray(REQ); view = memoryview(buf)
t = time.time(); served = 0
with torch.no_grad():
    while True:
        got = 0
        while got < REQ:
            n = conn.recv_into(view[got:])     # blocks until the client sends
            if n == 0: break
            got += n
        if got < REQ: break
        x = torch.frombuffer(buf, dtype=torch.float32).view(256, 128).repeat(8, 32).cuda()
        served += int(model(x).argmax(dim=1)[0].item() >= 0)
        conn.sendall(served.to_bytes(8, "little"))
print(f"c33 wall_s={time.time()-t:.3f} served={served}")
