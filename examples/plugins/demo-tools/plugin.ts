/**
 * The demo tool plugin: three small tools served with nexo-plugin-sdk. Run by the daemon as
 * `node dist/plugin.js` in this directory: this file compiled (see nexo-plugin.toml), which is why
 * the manifest is read from one directory up.
 *
 * DEMO_WEATHER_CALLS_PER_MINUTE (default 30) sets how many demo_weather calls a minute the
 * pretend weather service accepts before it answers -33404 with `retry_after_ms`.
 */
import { readFileSync } from "node:fs";
import { PluginAdapter, ToolNotFoundError } from "nexo-plugin-sdk";
import { diceTool, runDice } from "./src/dice.js";
import { CallWindow } from "./src/rate-limit.js";
import { runTime, timeTool } from "./src/time.js";
import { runWeather, weatherTool } from "./src/weather.js";

function callsPerMinute(): number {
  const raw = process.env.DEMO_WEATHER_CALLS_PER_MINUTE;
  if (raw === undefined || raw === "") return 30;
  const value = Number(raw);
  if (!Number.isSafeInteger(value) || value < 1) {
    // A misconfiguration must be loud: failing here shows up in the daemon's log with this line.
    throw new Error(`DEMO_WEATHER_CALLS_PER_MINUTE must be a positive integer, got "${raw}"`);
  }
  return value;
}

const weatherWindow = new CallWindow(callsPerMinute());

const adapter = new PluginAdapter({
  manifestToml: readFileSync(new URL("../nexo-plugin.toml", import.meta.url), "utf8"),
  tools: [weatherTool, diceTool, timeTool],
  onTool: (inv) => {
    switch (inv.toolName) {
      case "demo_weather":
        return runWeather(inv.args, weatherWindow);
      case "demo_dice":
        return runDice(inv.args);
      case "demo_time":
        return runTime(inv.args);
      default:
        throw new ToolNotFoundError(inv.toolName);
    }
  },
});

await adapter.run();
