/**
 * Definition-time rules: a microapp's mistakes fail where the tool or hook is defined, with a
 * message naming the rule, instead of at the daemon's boot.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { Microapp, MicroappDefinitionError } from "nexo-plugin-sdk/microapp";

const noop = () => {};
const quiet = { enableStdoutGuard: false } as const;

describe("tool names", () => {
  test("<id>_<tool> is accepted, the id's '-' written '_'", () => {
    const app = new Microapp({ id: "agent-creator", ...quiet });
    app.tool({ name: "agent_creator_create_agent", handler: noop });
    app.tool({ name: "agent_creator_list", handler: noop });
  });

  for (const name of ["create", "agent-creator_list", "agent-creator/create", "agentcreator_create"]) {
    test(`${JSON.stringify(name)} is refused naming the expected prefix`, () => {
      const app = new Microapp({ id: "agent-creator", ...quiet });
      assert.throws(
        () => app.tool({ name, handler: noop }),
        (error: unknown) => {
          assert.ok(error instanceof MicroappDefinitionError);
          assert.match(
            error.message,
            /is not prefixed "agent_creator_" \(tools of extension agent-creator are named agent_creator_<tool>\)/,
          );
          return true;
        },
      );
    });
  }

  for (const name of ["agent_creator_", "agent_creator_a b"]) {
    test(`${JSON.stringify(name)} is refused as not a valid tool name`, () => {
      const app = new Microapp({ id: "agent-creator", ...quiet });
      assert.throws(() => app.tool({ name, handler: noop }), /is not a valid tool name/);
    });
  }

  test("a name defined twice, a missing handler or a non-object schema is refused", () => {
    const app = new Microapp({ id: "notes", ...quiet });
    app.tool({ name: "notes_add", handler: noop });
    assert.throws(() => app.tool({ name: "notes_add", handler: noop }), /tool "notes_add" is defined twice/);
    assert.throws(() => app.tool({ name: "notes_x" } as never), /handler must be a function/);
    assert.throws(
      () => app.tool({ name: "notes_y", inputSchema: [] as never, handler: noop }),
      /inputSchema must be a JSON Schema object/,
    );
  });
});

describe("hooks and ids", () => {
  test("hook names must fit in a method name, once each", () => {
    const app = new Microapp({ id: "notes", ...quiet });
    app.hook("before_message", noop);
    assert.throws(() => app.hook("before_message", noop), /hook "before_message" is defined twice/);
    assert.throws(() => app.hook("a/b", noop), MicroappDefinitionError);
    assert.throws(() => app.hook("", noop), MicroappDefinitionError);
  });

  test("the id must be a usable extension id", () => {
    assert.throws(() => new Microapp({ id: "", ...quiet }), MicroappDefinitionError);
    assert.throws(() => new Microapp({ id: "a b", ...quiet }), MicroappDefinitionError);
    assert.throws(
      () => new Microapp({ id: "Notes", ...quiet }),
      /1-32 chars of a-z, 0-9, '_' and '-', starting with a letter/,
    );
    assert.throws(() => new Microapp(undefined as never), /needs an options object/);
  });

  test("an unknown notification name is refused, listing the known ones", () => {
    const app = new Microapp({ id: "notes", ...quiet });
    assert.throws(
      () => app.on("nexo/notify/nope" as never, noop),
      /unknown notification "nexo\/notify\/nope"; known: agents\/updated, /,
    );
    const stop = app.on("agents/updated", ({ agent_ids }) => {
      agent_ids.slice();
    });
    stop();
    stop();
  });
});
