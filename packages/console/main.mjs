#!/usr/bin/env node
// The executable extensions.yaml points at: the compiled console (`npm run build` writes dist/).
import "./dist/server/main.js";
