#!/usr/bin/env node
// The executable extensions.yaml points at: the compiled microapp (`npm run build` writes dist/).
import "./dist/main.js";
