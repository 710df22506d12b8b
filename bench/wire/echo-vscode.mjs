// vscode-jsonrpc as the echo server: the library a TypeScript user would most likely pick.
import { createMessageConnection, StreamMessageReader, StreamMessageWriter } from "vscode-jsonrpc/node.js";

const connection = createMessageConnection(
  new StreamMessageReader(process.stdin),
  new StreamMessageWriter(process.stdout),
);
connection.onRequest("echo", (params) => params);
connection.onClose(() => process.exit(0));
connection.listen();
