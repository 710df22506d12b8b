import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { RpcError, ToolCode } from "@nexo/wire";
import { PluginProcess } from "../../test-helpers/plugin-process.js";
import { rollDice } from "../src/dice.js";
import { CallWindow } from "../src/rate-limit.js";
import { DEMO_LABEL, fakeForecast } from "../src/weather.js";

interface TextResult {
  content: Array<{ type: string; text: string }>;
  is_error: boolean;
}

function textOf(result: unknown): string {
  const typed = result as TextResult;
  assert.equal(typed.is_error, false);
  assert.equal(typed.content.length, 1);
  assert.equal(typed.content[0]?.type, "text");
  return typed.content[0]!.text;
}

function rejectsWithCode(code: number, check?: (error: RpcError) => void) {
  return (error: unknown) => {
    assert.ok(error instanceof RpcError, `expected an RpcError, got ${String(error)}`);
    assert.equal(error.code, code, error.message);
    check?.(error);
    return true;
  };
}

describe("demo-tools as a child process", () => {
  let plugin: PluginProcess;
  const invoke = (toolName: string, args?: unknown) =>
    plugin.peer.request("tool.invoke", { plugin_id: "demo", tool_name: toolName, args, agent_id: "tester" });

  before(async () => {
    plugin = await PluginProcess.start("demo-tools", { env: { DEMO_WEATHER_CALLS_PER_MINUTE: "4" } });
  });
  after(async () => {
    await plugin.dispose();
  });

  test("initialize advertises exactly the declared tools, each with an object schema", async () => {
    const reply = await plugin.initialize();
    assert.equal(reply.server_version, "demo-0.1.0");
    const tools = reply.tools as Array<{ name: string; description: string; input_schema: { type: string } }>;
    assert.deepEqual(
      tools.map((t) => t.name),
      ["demo_weather", "demo_dice", "demo_time"],
    );
    assert.deepEqual(
      tools.map((t) => t.name),
      plugin.manifest.manifest.plugin.extends?.tools,
    );
    for (const tool of tools) {
      assert.equal(tool.input_schema.type, "object");
      assert.ok(tool.description.length > 10);
    }
  });

  test("demo_weather is deterministic and labelled as demo data", async () => {
    const first = textOf(await invoke("demo_weather", { city: "Lisbon", days: 3 }));
    const again = textOf(await invoke("demo_weather", { city: "  lisbon ", days: 3 }));
    assert.ok(first.includes(DEMO_LABEL), first);
    assert.equal(first.split("\n").length, 4, "a header and one line per day");
    assert.match(first, /^Day 3: .+ °C, wind \d+ km\/h, rain \d+%$/m);
    // The forecast depends on the city only, not on its spelling's case or padding.
    assert.deepEqual(first.split("\n").slice(1), again.split("\n").slice(1));
    const imperial = textOf(await invoke("demo_weather", { city: "Lisbon", units: "imperial" }));
    assert.match(imperial, /°F, wind \d+ mph/);
  });

  test("demo_weather past its per-minute budget is -33404 with retry_after_ms", async () => {
    // The budget is 4 a minute and the test above used 3.
    await invoke("demo_weather", { city: "Oslo" });
    await assert.rejects(
      invoke("demo_weather", { city: "Oslo" }),
      rejectsWithCode(ToolCode.unavailable, (error) => {
        const data = error.data as { retry_after_ms?: unknown };
        assert.equal(typeof data.retry_after_ms, "number");
        assert.ok((data.retry_after_ms as number) > 0 && (data.retry_after_ms as number) <= 60_000);
        assert.match(error.message, /4 calls per minute/);
      }),
    );
    // Bad arguments are still reported as such, not as "unavailable".
    await assert.rejects(invoke("demo_weather", {}), rejectsWithCode(ToolCode.argumentInvalid));
  });

  test("demo_weather arguments are checked, every problem in details", async () => {
    await assert.rejects(
      invoke("demo_weather", { city: "", days: 9, units: "kelvin", extra: true }),
      rejectsWithCode(ToolCode.argumentInvalid, (error) => {
        const details = (error.data as { details: Array<{ path: string; message: string }> }).details;
        assert.deepEqual(
          details.map((d) => d.path),
          ["/extra", "/city", "/days", "/units"],
        );
        assert.match(error.message, /^invalid argument: demo_weather: /);
      }),
    );
    await assert.rejects(
      invoke("demo_weather", "Lisbon"),
      rejectsWithCode(ToolCode.argumentInvalid, (error) => {
        assert.deepEqual((error.data as { details: unknown }).details, [
          { path: "", message: "the arguments must be a JSON object" },
        ]);
      }),
    );
  });

  test("demo_dice with a seed is reproducible; without one it stays in range", async () => {
    const seeded = textOf(await invoke("demo_dice", { count: 5, sides: 20, seed: 42 }));
    assert.equal(seeded, textOf(await invoke("demo_dice", { count: 5, sides: 20, seed: 42 })));
    const faces = rollDice(5, 20, 42);
    const total = faces.reduce((a, b) => a + b, 0);
    assert.equal(seeded, `Rolled 5d20 (seed 42): ${faces.join(", ")} (total ${total})`);

    const unseeded = textOf(await invoke("demo_dice", { count: 50 }));
    const match = /^Rolled 50d6: ([\d, ]+) \(total (\d+)\)$/.exec(unseeded);
    assert.ok(match, unseeded);
    const rolled = match[1]!.split(", ").map(Number);
    assert.equal(rolled.length, 50);
    assert.ok(rolled.every((face) => face >= 1 && face <= 6));
    assert.equal(
      Number(match[2]),
      rolled.reduce((a, b) => a + b, 0),
    );
    // No arguments at all (args absent on the wire) means one six-sided die.
    assert.match(textOf(await invoke("demo_dice")), /^Rolled 1d6: [1-6] \(total [1-6]\)$/);
  });

  test("demo_dice refuses out-of-range counts, sides and seeds", async () => {
    await assert.rejects(
      invoke("demo_dice", { count: 0, sides: 1.5, seed: -1 }),
      rejectsWithCode(ToolCode.argumentInvalid, (error) => {
        const details = (error.data as { details: Array<{ path: string }> }).details;
        assert.deepEqual(
          details.map((d) => d.path),
          ["/count", "/sides", "/seed"],
        );
      }),
    );
  });

  test("demo_time converts an instant and reads the clock", async () => {
    assert.equal(
      textOf(await invoke("demo_time", { timezone: "Asia/Tokyo", at: "2026-05-01T12:00:00Z" })),
      "2026-05-01 21:00:00 in Asia/Tokyo (Friday, GMT+09:00)",
    );
    assert.equal(
      textOf(await invoke("demo_time", { timezone: "america/new_york", at: "2026-01-15T12:00:00+01:00" })),
      "2026-01-15 06:00:00 in America/New_York (Thursday, GMT-05:00)",
    );
    const before = Date.now();
    const now = textOf(await invoke("demo_time", {}));
    const match = /^(\d{4}-\d{2}-\d{2}) (\d{2}:\d{2}:\d{2}) in UTC \(\w+day, GMT(\+00:00)?\)$/.exec(now);
    assert.ok(match, now);
    const reported = Date.parse(`${match[1]}T${match[2]}Z`);
    assert.ok(Math.abs(reported - before) < 5_000, `${now} is close to the current time`);
  });

  test("demo_time refuses an unknown zone and a vague instant", async () => {
    await assert.rejects(
      invoke("demo_time", { timezone: "Mars/Olympus_Mons", at: "tomorrow" }),
      rejectsWithCode(ToolCode.argumentInvalid, (error) => {
        const details = (error.data as { details: Array<{ path: string }> }).details;
        assert.deepEqual(
          details.map((d) => d.path),
          ["/at", "/timezone"],
        );
      }),
    );
  });

  test("an unknown tool is -33401", async () => {
    await assert.rejects(
      invoke("demo_nothing", {}),
      rejectsWithCode(ToolCode.notFound, (error) => assert.match(error.message, /demo_nothing/)),
    );
  });

  test("shutdown is acknowledged and the process exits on its own", async () => {
    const { reply, exit } = await plugin.shutdown();
    assert.deepEqual(reply, { ok: true });
    assert.deepEqual(exit, { code: 0, signal: null });
    assert.deepEqual(plugin.problems, []);
  });
});

describe("demo-tools misconfigured", () => {
  test("an unusable DEMO_WEATHER_CALLS_PER_MINUTE stops the plugin with a message naming it", async () => {
    const plugin = await PluginProcess.start("demo-tools", { env: { DEMO_WEATHER_CALLS_PER_MINUTE: "0" } });
    try {
      const exit = await plugin.exited;
      assert.equal(exit.code, 1);
      assert.match(plugin.stderr, /DEMO_WEATHER_CALLS_PER_MINUTE must be a positive integer, got "0"/);
    } finally {
      await plugin.dispose();
    }
  });
});

describe("demo-tools building blocks", () => {
  test("the fake forecast is a function of the city alone, with plausible numbers", () => {
    const a = fakeForecast("Madrid", 7, "metric");
    assert.deepEqual(a, fakeForecast("MADRID", 7, "metric"));
    assert.notDeepEqual(a, fakeForecast("Paris", 7, "metric"));
    for (const day of a) {
      assert.ok(day.low < day.high);
      assert.ok(day.rainChancePercent >= 0 && day.rainChancePercent <= 100);
      if (day.condition === "sunny") assert.ok(day.rainChancePercent <= 10);
    }
  });

  test("seeded dice cover every face and only those", () => {
    const faces = rollDice(6000, 6, 7);
    const counts = [1, 2, 3, 4, 5, 6].map((face) => faces.filter((f) => f === face).length);
    assert.equal(
      counts.reduce((a, b) => a + b, 0),
      6000,
    );
    for (const count of counts) assert.ok(count > 850 && count < 1150, `counts ${counts.join(",")}`);
  });

  test("the call window refuses past its limit and reopens as calls age out", () => {
    const window = new CallWindow(2, 1_000);
    assert.equal(window.tryCall(0), 0);
    assert.equal(window.tryCall(100), 0);
    assert.equal(window.tryCall(400), 600);
    assert.equal(window.tryCall(1_000), 0, "the call at 0 has left the window");
    assert.equal(window.tryCall(1_050), 50);
    assert.throws(() => new CallWindow(0), RangeError);
  });
});
