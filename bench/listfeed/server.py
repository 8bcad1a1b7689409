#!/usr/bin/env python3
"""bench/listfeed/server.py - a stand-in API server that feeds recorded Pods and Nodes, by the
hundred thousand, to gputri's list/watch path. A benchmark harness, not product code.

Renders --pods pods and --nodes nodes from the objects recorded in objects.json (the same JSON the
e2e API server lists, with names, uids, resourceVersions, node names and pod IPs varied) and
serves them over HTTPS, Python standard library only:

  GET /api/v1/pods, /api/v1/nodes (LIST)
      resourceVersion=0: everything in one response, limit ignored, as kube-apiserver's watch
      cache answers (--mode rv0, the default); --mode paged answers it in pages instead (a server
      without watch cache). Any other resourceVersion without limit: one response. Otherwise pages
      of `limit` items with continue tokens (a consistent read from etcd).
  GET ...?watch=1 (WATCH)
      a chunked stream that stays quiet (a BOOKMARK every 60 s) until timeoutSeconds; with
      --gone-after S the first --gone-count watches of each kind end after S seconds with an ERROR
      event 410 instead, so that the client relists.
  GET /apis/resource.k8s.io/v1 and its four DRA collections: served, empty.
  GET /api/v1/events (LIST, WATCH): empty; with --gpu-status starting, for every GPU pod the two
      Warning Events its kubelet writes about a GPU container that cannot start (Failed "Error:
      <the NVIDIA container toolkit's driver-not-loaded chain>", FailedCreatePodSandBox), whatever
      the fieldSelector (a reader keeps what it wants).
  --gpu-status running (default): GPU pods as recorded, their container running; starting: as
      the kubelet leaves a GPU pod whose container failed to start (phase Running, the container
      in CrashLoopBackOff after a StartError with exit code 128 and the runtime's message), so
      gputri-controller keeps watching every one of them (cache/store.h
      store_is_starting_gpu_pod).
  PATCH, POST, PUT: the body echoed back (200/201). Anything else: 404 Status.

Every request is logged to stderr as one line: method, path, status, bytes, seconds. The port is
written to --port-file once listening.
"""
import argparse
import http.server
import json
import os
import ssl
import sys
import threading
import time
import urllib.parse

RV = "1000000"
DRA = "/apis/resource.k8s.io/v1"
DRA_KINDS = {"resourceclaims": "ResourceClaimList",
             "resourceclaimtemplates": "ResourceClaimTemplateList",
             "deviceclasses": "DeviceClassList", "resourceslices": "ResourceSliceList"}


def template(obj, subst):
    """obj as the compact JSON the API server writes, with each recorded value in `subst` replaced
    by a %(key)s field (every occurrence: labels, managedFields keys)."""
    text = json.dumps(obj, separators=(",", ":"), ensure_ascii=False).replace("%", "%%")
    for key, value in subst.items():
        assert value in text, (key, value)
        text = text.replace(value, "%(" + key + ")s")
    return text


class Feed:
    """The rendered population: pods spread over nodes; every other node a GPU node with one GPU
    pod, as bench/scale lays them out (bench/scale_helper.py)."""

    START_ERROR = ("failed to create containerd task: failed to create shim task: OCI runtime "
                   "create failed: runc create failed: unable to start container process: error "
                   "during container init: error running prestart hook #0: exit status 1, "
                   "stdout: , stderr: Auto-detected mode as 'legacy'\nnvidia-container-cli: "
                   "initialization error: nvml error: driver not loaded: unknown")
    SANDBOX = ("Failed to create pod sandbox: rpc error: code = Unknown desc = failed to get "
               "sandbox runtime: no runtime for \"nvidia\" is configured")

    def __init__(self, path, pods, nodes, all_gpu=False, starting=False):
        rec = json.load(open(path))
        cpu_pod, gpu_pod = rec["pods"]
        gpu_node, cpu_node = rec["nodes"]
        self.starting = starting
        if starting:
            cs = gpu_pod["status"]["containerStatuses"][0]
            cs.update({"ready": False, "started": False, "restartCount": 5,
                       "state": {"waiting": {"reason": "CrashLoopBackOff", "message":
                                             "back-off 2m40s restarting failed container=%s pod=%s"
                                             % (cs["name"], gpu_pod["metadata"]["name"])}},
                       "lastState": {"terminated": {"reason": "StartError", "exitCode": 128,
                                                    "message": self.START_ERROR}}})

        def pod_subst(p):
            return {"name": p["metadata"]["name"], "uid": p["metadata"]["uid"],
                    "rv": '"resourceVersion":"%s"' % p["metadata"]["resourceVersion"],
                    "node": p["spec"]["nodeName"], "ip": p["status"]["podIP"]}

        def node_subst(n):
            return {"name": n["metadata"]["name"], "uid": n["metadata"]["uid"],
                    "rv": '"resourceVersion":"%s"' % n["metadata"]["resourceVersion"]}

        self.cpu_pod = template(cpu_pod, pod_subst(cpu_pod))
        self.gpu_pod = template(gpu_pod, pod_subst(gpu_pod))
        self.gpu_node = template(gpu_node, node_subst(gpu_node))
        self.cpu_node = template(cpu_node, node_subst(cpu_node))
        self.pods, self.nodes, self.all_gpu = pods, nodes, all_gpu

    @staticmethod
    def uid(kind, i):
        return "00000000-0000-4000-%04x-%012x" % (kind, i)

    def node_name(self, i):
        return "bench-node-%05d" % i

    def pod(self, i):
        node = i % self.nodes
        gpu = self.is_gpu(i)
        return (self.gpu_pod if gpu else self.cpu_pod) % {
            "name": ("gpu-%06d" if gpu else "cpu-%06d") % i, "uid": self.uid(1, i),
            "rv": '"resourceVersion":"%d"' % (1000 + i), "node": self.node_name(node),
            "ip": "10.%d.%d.%d" % (100 + i // 65536, i // 256 % 256, i % 256)}

    def is_gpu(self, i):
        return self.all_gpu or (i % self.nodes % 2 == 0 and i < self.nodes)

    def events(self):
        """The kubelet's Warning Events about the GPU pods (--gpu-status starting)."""
        if not self.starting:
            return []
        out = []
        for i in range(self.pods):
            if not self.is_gpu(i):
                continue
            for k, (reason, msg) in enumerate((("Failed", "Error: " + self.START_ERROR),
                                               ("FailedCreatePodSandBox", self.SANDBOX))):
                out.append(json.dumps({
                    "metadata": {"name": "gpu-%06d.%x" % (i, k), "namespace": "default",
                                 "uid": self.uid(3 + k, i), "resourceVersion": "%d" % (2000 + i)},
                    "involvedObject": {"kind": "Pod", "namespace": "default",
                                       "name": "gpu-%06d" % i, "uid": self.uid(1, i),
                                       "apiVersion": "v1", "fieldPath": "spec.containers{c}"},
                    "reason": reason, "message": msg,
                    "source": {"component": "kubelet", "host": self.node_name(i % self.nodes)},
                    "firstTimestamp": "2026-12-01T10:00:00Z", "lastTimestamp": "2026-12-01T10:05:00Z",
                    "count": 6, "type": "Warning", "reportingComponent": "kubelet",
                    "reportingInstance": self.node_name(i % self.nodes)}, separators=(",", ":")))
        return out

    def node(self, i):
        return (self.gpu_node if i % 2 == 0 else self.cpu_node) % {
            "name": self.node_name(i), "uid": self.uid(2, i),
            "rv": '"resourceVersion":"%d"' % (500 + i)}


class State:
    def __init__(self, args):
        self.args = args
        self.feed = Feed(args.objects, args.pods, args.nodes, args.gpu_pods == "all",
                         args.gpu_status == "starting")
        self.events = self.feed.events()
        self.lock = threading.Lock()
        self.gone = {}  # collection path -> watches ended with 410 so far


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    state = None  # set by main()

    def log_message(self, fmt, *a):
        pass

    def log_request_line(self, status, nbytes, started):
        sys.stderr.write("%s %s %d %d %.3f\n" % (self.command, self.path, status, nbytes,
                                                 time.monotonic() - started))
        sys.stderr.flush()

    def send_json(self, status, obj):
        body = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
        return len(body)

    def start_chunked(self):
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()

    def chunk(self, data):
        if data:
            self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        return len(data)

    def end_chunked(self):
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    def do_GET(self):
        started = time.monotonic()
        u = urllib.parse.urlsplit(self.path)
        q = dict(urllib.parse.parse_qsl(u.query))
        status, n = 200, 0
        try:
            if u.path in ("/api/v1/pods", "/api/v1/nodes", "/api/v1/events") or (
                    u.path.startswith(DRA + "/") and u.path[len(DRA) + 1:] in DRA_KINDS):
                if q.get("watch") in ("1", "true"):
                    n = self.watch(u.path, q)
                else:
                    n = self.list(u.path, q)
            elif u.path == DRA:
                n = self.send_json(200, {"kind": "APIResourceList", "apiVersion": "v1",
                                         "groupVersion": "resource.k8s.io/v1", "resources": [
                                             {"name": k, "namespaced": k.startswith("resourcecl"),
                                              "kind": v[:-4], "verbs": ["list", "watch"]}
                                             for k, v in DRA_KINDS.items()]})
            else:
                status = 404
                n = self.send_json(404, {"kind": "Status", "apiVersion": "v1", "status": "Failure",
                                         "message": "not served by the listfeed server",
                                         "reason": "NotFound", "code": 404})
        except (BrokenPipeError, ConnectionResetError, ssl.SSLError):
            status = 499
        self.log_request_line(status, n, started)

    def list(self, path, q):
        feed = self.state.feed
        if path == "/api/v1/pods":
            kind, total, render = "PodList", feed.pods, feed.pod
        elif path == "/api/v1/nodes":
            kind, total, render = "NodeList", feed.nodes, feed.node
        elif path == "/api/v1/events":
            events = self.state.events
            kind, total, render = "EventList", len(events), events.__getitem__
        else:
            kind, total, render = DRA_KINDS[path[len(DRA) + 1:]], 0, None
        limit = int(q.get("limit", "0") or 0)
        rv = q.get("resourceVersion", "")
        one = limit <= 0 or (rv == "0" and self.state.args.mode == "rv0") or (
            rv not in ("", "0") and "continue" not in q)
        start = int(q.get("continue", "0") or 0)
        end = total if one else min(total, start + limit)
        meta = {"resourceVersion": RV}
        if end < total:
            meta["continue"] = str(end)
            meta["remainingItemCount"] = total - end
        self.start_chunked()
        n = self.chunk(('{"kind":"%s","apiVersion":"v1","metadata":%s,"items":['
                        % (kind, json.dumps(meta, separators=(",", ":")))).encode())
        batch, size, sep = [], 0, ""
        for i in range(start, end):
            batch.append(render(i))
            size += len(batch[-1])
            if size >= 1 << 20 or i == end - 1:
                n += self.chunk((sep + ",".join(batch)).encode())
                batch, size, sep = [], 0, ","
        n += self.chunk(b"]}\n")
        self.end_chunked()
        return n

    def watch(self, path, q):
        args = self.state.args
        timeout = int(q.get("timeoutSeconds", "300") or 300)
        with self.state.lock:
            gone = args.gone_after > 0 and self.state.gone.get(path, 0) < args.gone_count
            if gone:
                self.state.gone[path] = self.state.gone.get(path, 0) + 1
        self.start_chunked()
        self.wfile.flush()
        n = 0
        started = time.monotonic()
        last = started
        until = started + (args.gone_after if gone else timeout)
        while time.monotonic() < until:
            time.sleep(0.5)
            if time.monotonic() - last >= 60:
                last = time.monotonic()
                n += self.chunk(b'{"type":"BOOKMARK","object":{"metadata":{"resourceVersion":"'
                                + RV.encode() + b'"}}}\n')
                self.wfile.flush()
        if gone:
            n += self.chunk(b'{"type":"ERROR","object":{"kind":"Status","apiVersion":"v1",'
                            b'"status":"Failure","message":"too old resource version","reason":'
                            b'"Expired","code":410}}\n')
        self.end_chunked()
        return n

    def echo(self, status):
        started = time.monotonic()
        length = int(self.headers.get("Content-Length", "0") or 0)
        body = self.rfile.read(length) if length else b"{}"
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
        self.log_request_line(status, len(body), started)

    def do_PATCH(self):
        self.echo(200)

    def do_PUT(self):
        self.echo(200)

    def do_POST(self):
        self.echo(201)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--pods", type=int, default=150000)
    ap.add_argument("--nodes", type=int, default=5000)
    ap.add_argument("--mode", choices=["rv0", "paged"], default="rv0")
    ap.add_argument("--gpu-pods", choices=["per-gpu-node", "all"], default="per-gpu-node")
    ap.add_argument("--gpu-status", choices=["running", "starting"], default="running")
    ap.add_argument("--gone-after", type=float, default=0)
    ap.add_argument("--gone-count", type=int, default=1)
    ap.add_argument("--objects", default=os.path.join(os.path.dirname(__file__), "objects.json"))
    ap.add_argument("--cert", required=True)
    ap.add_argument("--key", required=True)
    ap.add_argument("--port-file", required=True)
    args = ap.parse_args()
    Handler.state = State(args)
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    srv.daemon_threads = True
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(args.cert, args.key)
    srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
    with open(args.port_file + ".tmp", "w") as f:
        f.write("%d\n" % srv.server_address[1])
    os.rename(args.port_file + ".tmp", args.port_file)
    srv.serve_forever()


if __name__ == "__main__":
    main()
