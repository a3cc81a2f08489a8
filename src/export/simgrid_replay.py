#!/usr/bin/env python3
"""Replays a cclab schedule on SimGrid (python3-simgrid, 3.32 or later): the independent engine
that `cclab model --engine simgrid` and test/simgrid.test.ts compare cclab's network model with.

    python3 simgrid_replay.py CASE.json        # prints {"time_us": ..., "finish_us": [...]}

CASE.json (written by src/export/simgrid.ts):
    ranks     n
    host      per rank, its host on the topology (ranks on one host exchange for free, as in cclab)
    links     [bytes per second, ...]: every link a route below uses
    routes    {"a b": {"links": [link index, ...], "latency": seconds}} per pair of hosts a message
              crosses, the latency being the route's links' and switches' together
    programs  per rank, its operations in program order: {"k": "s"|"r"|"c", "p": peer, "t": tag,
              "b": bytes, "ns": calc nanoseconds, "d": [operations it waits for],
              "a": [operations that must be posted before it]}

The platform is one full zone: a host per topology host in use, a SHARED SimGrid link per cclab
link (cclab's links are directed, so each is used one way only), one route per pair of hosts.
SimGrid's network model is CM02 without its corrections (latency and bandwidth factors 1, no TCP
window bound, no cross-traffic, weight-S 0): bytes share every link max-min fairly, the flow
model cclab's engine implements; SimGrid computes every rate.

What the replay does itself, as cclab's model defines it (src/model/network/simulate.ts): one
actor per rank starts each operation once the operations it waits for are done (dataflow order);
a send meets its receive (rendezvous, a mailbox per sender, receiver and tag, so they pair as cclab
pairs them); the message then waits out its route's latency (the links carry SimGrid latency 0;
a helper actor per message sleeps it) and its bytes flow once the message before it between the
same two ranks has arrived (one connection per pair, its latency overlapping that wait).
Computation runs one operation at a time per rank (as cclab charges reductions), on a helper
actor at 1e9 flop/s, so `ns` nanoseconds are `ns` flops; requests and replies are empty
messages, which take no time.
"""
import json
import sys

import simgrid
from simgrid import Engine, LinkInRoute, Mailbox, Semaphore, this_actor

CONFIG = [
    "--cfg=network/model:CM02",
    "--cfg=network/latency-factor:1",
    "--cfg=network/bandwidth-factor:1",
    "--cfg=network/TCP-gamma:0",
    "--cfg=network/crosstraffic:0",
    "--cfg=network/weight-S:0",
    "--cfg=network/loopback-lat:0",
    "--cfg=surf/precision:1e-14",  # seconds: SimGrid's default 1 ns would round sub-µs runs
    "--log=root.thresh:critical",
]


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: simgrid_replay.py CASE.json")
    with open(sys.argv[1]) as f:
        case = json.load(f)
    n = case["ranks"]
    e = Engine([sys.argv[0]] + CONFIG)
    zone = simgrid.NetZone.create_full_zone("cclab")
    host_of = case["host"]
    hosts = {h: zone.create_host(f"h{h}", 1e9) for h in sorted(set(host_of))}
    links = []
    for i, bw in enumerate(case["links"]):
        link = zone.create_link(f"l{i}", bw)
        link.set_latency(0)
        link.set_sharing_policy(simgrid.Link.SharingPolicy.SHARED, None)
        links.append(link.seal())
    latency = {}
    for key, route in case["routes"].items():
        a, b = (int(x) for x in key.split())
        latency[(a, b)] = route["latency"]
        path = [LinkInRoute(links[i]) for i in route["links"]]
        zone.add_route(hosts[a].netpoint, hosts[b].netpoint, None, None, path, False)
    zone.seal()
    finish = [0.0] * n
    last_on_pair = {}  # (sender, receiver) -> the semaphore the pair's latest message releases on arrival
    posted_recv = {}  # (sender, receiver, tag) -> released when the receiver posts its receive

    def receive_posted(r, p, tag):
        return posted_recv.setdefault((r, p, tag), Semaphore(0))

    def message(r, p, tag, size, before, arrived):
        # Matched when the receiver has posted, then the route's latency, then the connection
        # free, then the bytes.
        receive_posted(r, p, tag).acquire()
        this_actor.sleep_for(latency[(host_of[r], host_of[p])])
        if before is not None:
            before.acquire()
            before.release()
        Mailbox.by_name(f"data {r}>{p}#{tag}").put(tag, size)
        arrived.release()
        Mailbox.by_name(f"sent {r}>{p}#{tag}").put(tag, 0)

    def rank(r):
        ops = case["programs"][r]
        count = len(ops)
        waiting = [len(set(o["d"])) for o in ops]
        after = [set(o.get("a", [])) for o in ops]
        users = [[] for _ in ops]
        for i, o in enumerate(ops):
            for d in set(o["d"]):
                users[d].append(i)
        posted = [False] * count
        active = []  # (comm, operation, what the comm receives into, kept until it is done)
        detached = []  # empty messages this rank sent and does not wait for
        finished = 0

        def post(i):
            nonlocal finished
            posted[i] = True
            o = ops[i]
            k = o["k"]
            if (k != "c" and (o["b"] == 0 or host_of[o["p"]] == host_of[r])) or (k == "c" and o["ns"] == 0):
                complete(i)  # an empty message, one through the host's memory, or free computation
                return
            if k == "s":
                pair = (r, o["p"])
                arrived = Semaphore(0)
                before = last_on_pair.get(pair)
                last_on_pair[pair] = arrived
                simgrid.Actor.create(f"m{r}>{o['p']}#{o['t']}", hosts[host_of[r]], message, r, o["p"], o["t"], o["b"], before, arrived)
                comm, keep = Mailbox.by_name(f"sent {r}>{o['p']}#{o['t']}").get_async()
            elif k == "r":
                receive_posted(o["p"], r, o["t"]).release()
                comm, keep = Mailbox.by_name(f"data {o['p']}>{r}#{o['t']}").get_async()
            else:
                detached.append(Mailbox.by_name(f"cpu{r}").put_async(i, 0))
                comm, keep = Mailbox.by_name(f"cpu{r}.{i}").get_async()
            # get_async's second half is what the comm receives into: kept until the comm is done.
            active.append((comm, i, keep))

        def complete(i):
            nonlocal finished
            finished += 1
            for u in users[i]:
                waiting[u] -= 1

        def sweep():
            progress = True
            while progress:
                progress = False
                for i in range(count):
                    if not posted[i] and waiting[i] == 0 and all(posted[j] for j in after[i]):
                        post(i)
                        progress = True

        sweep()
        while finished < count:
            if not active:
                raise RuntimeError(f"rank {r}: {count - finished} operations wait and none is under way")
            if len(active) == 1:
                comm, i, _ = active.pop()
                comm.wait()
            else:
                k = simgrid.Comm.wait_any([c for c, _, _ in active])
                comm, i, _ = active.pop(k)
            complete(i)
            sweep()
        finish[r] = Engine.clock
        for d in detached:
            d.wait()
        Mailbox.by_name(f"cpu{r}").put(-1, 0)

    def cpu(r):
        ops = case["programs"][r]
        box = Mailbox.by_name(f"cpu{r}")
        while True:
            i = box.get()
            if i < 0:
                return
            this_actor.execute(ops[i]["ns"])
            Mailbox.by_name(f"cpu{r}.{i}").put(i, 0)

    for r in range(n):
        simgrid.Actor.create(f"rank{r}", hosts[host_of[r]], rank, r)
        simgrid.Actor.create(f"cpu{r}", hosts[host_of[r]], cpu, r)
    e.run()
    print(json.dumps({"time_us": max(finish) * 1e6, "finish_us": [t * 1e6 for t in finish]}))


if __name__ == "__main__":
    main()
