// The console's front end: Preact, bundled by Vite into ../dist/ui, which the microapp serves.
import { fileURLToPath } from "node:url";
import { defineConfig } from "vite";

export default defineConfig({
  root: fileURLToPath(new URL(".", import.meta.url)),
  base: "/",
  oxc: { jsx: { runtime: "automatic", importSource: "preact" } },
  build: {
    outDir: fileURLToPath(new URL("../dist/ui", import.meta.url)),
    emptyOutDir: true,
    // Served from loopback: one small bundle, no source maps shipped to the browser.
    sourcemap: false,
    chunkSizeWarningLimit: 400,
  },
});
