#!/usr/bin/env node
// The `nexo` executable. It is a committed file (not build output) so that npm can link it on a
// fresh clone before `npm install`'s prepare step has built anything. It runs the bundled CLI
// (packages/nexo/bundle, made by scripts/bundle-cli.mjs), which starts much faster than the
// plain tsc output in dist/.
import("../bundle/main.js").catch((error) => {
  if (error?.code === "ERR_MODULE_NOT_FOUND" && String(error.message).includes("bundle/main.js")) {
    process.stderr.write(
      "nexo is not built yet: run `npm run build` (or `npm install`) in the repository root\n",
    );
    process.exit(1);
  }
  throw error;
});
