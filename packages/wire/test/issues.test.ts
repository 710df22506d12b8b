import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { formatIssuePath, formatIssues } from "@nexo/wire";
import { z } from "zod";

describe("formatIssues", () => {
  test("paths read the way a person writes them; odd keys are quoted", () => {
    assert.equal(formatIssuePath(["agents", 2, "model", "provider"]), "agents[2].model.provider");
    assert.equal(formatIssuePath(["mcp", "servers", "my-server"]), "mcp.servers.my-server");
    assert.equal(formatIssuePath(["servers", "a.b", "x y"]), 'servers["a.b"]["x y"]');
    assert.equal(formatIssuePath([0, "name"]), "[0].name");
    assert.equal(formatIssuePath([]), "");
  });

  test("zod's issues as one line, the whole value named when it is the culprit", () => {
    const schema = z.looseObject({
      tools: z.array(z.looseObject({ name: z.string() })),
      version: z.string(),
    });
    const broken = schema.safeParse({ tools: [{ name: 1 }] });
    assert.equal(broken.success, false);
    assert.equal(
      formatIssues(broken.error!.issues),
      "tools[0].name: Invalid input: expected string, received number; version: Invalid input: expected string, received undefined",
    );
    const notObject = schema.safeParse(7);
    assert.equal(
      formatIssues(notObject.error!.issues, "(params)"),
      "(params): Invalid input: expected object, received number",
    );
  });
});
