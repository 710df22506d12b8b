// Our peer as the echo server (the built @nexo/wire, or the build in the directory given as the
// first argument: bench/wire/cpu.ts --base).
const { JsonRpcPeer } = process.argv[2]
  ? await import(new URL(`file://${process.argv[2]}/index.js`).href)
  : await import("@nexo/wire");

const peer = JsonRpcPeer.overStreams({ input: process.stdin, output: process.stdout, name: "bench-echo" });
peer.onRequest("echo", (params) => params);
peer.closed.then(() => process.exit(0));
