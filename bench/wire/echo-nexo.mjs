// Our peer as the echo server (the built @nexo/wire).
import { JsonRpcPeer } from "@nexo/wire";

const peer = JsonRpcPeer.overStreams({ input: process.stdin, output: process.stdout, name: "bench-echo" });
peer.onRequest("echo", (params) => params);
peer.closed.then(() => process.exit(0));
