/**
 * When a tool schema from outside is checked (engine/tools/schema-validator.ts): its structure at
 * registration, without ajv; ajv's whole check on the first validation. The structural check must
 * never refuse what ajv accepts (a property test holds it to ajv), and ajv must stay unloaded until
 * something is validated (a fresh process over the built module).
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import fc from "fast-check";
import { SchemaValidators, schemaShapeProblems } from "../../../src/engine/tools/schema-validator.js";

const BUILT = fileURLToPath(new URL("../../../dist/engine/tools/schema-validator.js", import.meta.url));

const refusedByAjv = (schema: Record<string, unknown>): boolean => {
  try {
    new SchemaValidators().compileNow(schema);
    return false;
  } catch {
    return true;
  }
};

describe("schema validators", () => {
  it("refuses a broken structure at compile, naming the keyword's pointer", () => {
    const cases: Array<[Record<string, unknown>, RegExp]> = [
      [{ type: "object", properties: { a: { type: "nonsense" } } }, /\/properties\/a\/type must be one of/],
      [{ type: "object", properties: { a: 3 } }, /\/properties\/a must be a schema/],
      [{ type: "object", properties: [] }, /\/properties must be an object of schemas/],
      [{ type: "object", required: "a" }, /\/required must be an array of distinct property names/],
      [{ type: "object", required: ["a", "a"] }, /\/required must be an array/],
      [
        { type: "object", properties: { a: { type: "string", minLength: -1 } } },
        /minLength must be a non-negative integer/,
      ],
      [
        { type: "object", properties: { a: { type: "string", pattern: "(" } } },
        /pattern must be a valid regular expression/,
      ],
      [{ type: "object", anyOf: [] }, /\/anyOf must be a non-empty array of schemas/],
      [{ type: "object", properties: { a: { items: [1] } } }, /\/properties\/a\/items\/0 must be a schema/],
      [
        { type: "object", properties: { a: { exclusiveMinimum: true } } },
        /exclusiveMinimum must be a number/,
      ],
      [{ type: ["object", "object"] }, /\/type must not repeat a type/],
    ];
    for (const [schema, reason] of cases) {
      assert.throws(
        () => new SchemaValidators().compile(schema),
        (error: unknown) =>
          error instanceof Error && /^schema is invalid: /.test(error.message) && reason.test(error.message),
        JSON.stringify(schema),
      );
      assert.ok(refusedByAjv(schema), `ajv accepts ${JSON.stringify(schema)}`);
    }
  });

  it("accepts what each dialect accepts", () => {
    const schemas: Record<string, unknown>[] = [
      {
        type: "object",
        properties: { a: { type: "string", pattern: "^\\p{L}+$" }, b: true },
        required: ["a"],
      },
      { type: "object", properties: { t: { items: [{ type: "string" }, { type: "number" }] } } },
      {
        $schema: "https://json-schema.org/draft/2020-12/schema",
        type: "object",
        properties: { t: { prefixItems: [{}], items: false } },
      },
      {
        $schema: "https://json-schema.org/draft/2019-09/schema",
        type: "object",
        dependentRequired: { a: ["b"] },
      },
      {
        type: "object",
        $defs: { n: { type: "integer", minimum: 0 } },
        properties: { n: { $ref: "#/$defs/n" } },
      },
    ];
    for (const schema of schemas) {
      assert.doesNotThrow(() => new SchemaValidators().compile(schema), JSON.stringify(schema));
      assert.equal(refusedByAjv(schema), false, JSON.stringify(schema));
    }
  });

  it("never refuses a structure that ajv accepts, in each dialect", () => {
    const keyword = fc.constantFrom(
      ...["type", "properties", "items", "required", "enum", "pattern", "minLength", "maximum", "anyOf"],
      ...["not", "additionalProperties", "additionalItems", "patternProperties", "multipleOf", "uniqueItems"],
      ...["dependencies", "dependentRequired", "dependentSchemas", "$defs", "definitions", "prefixItems"],
      ...["unevaluatedItems", "minContains", "$ref", "format", "const"],
    );
    const schema = fc.letrec((tie) => ({
      schema: fc.oneof(
        { depthSize: "small" },
        fc.boolean(),
        fc.dictionary(
          keyword,
          fc.oneof(fc.jsonValue({ maxDepth: 2 }), tie("schema"), fc.array(tie("schema"), { maxLength: 2 })),
          { maxKeys: 4 },
        ),
      ),
    })).schema;
    const dialects = [
      ["draft-07", undefined],
      ["2019-09", "https://json-schema.org/draft/2019-09/schema"],
      ["2020-12", "https://json-schema.org/draft/2020-12/schema"],
    ] as const;
    let refused = 0;
    for (const [dialect, uri] of dialects) {
      fc.assert(
        fc.property(schema, (candidate) => {
          const root = { ...(uri ? { $schema: uri } : {}), type: "object", properties: { x: candidate } };
          if (schemaShapeProblems(root, dialect).length === 0) return;
          refused++;
          assert.ok(refusedByAjv(root), JSON.stringify(root));
        }),
        { numRuns: 300 },
      );
    }
    assert.ok(refused > 100, `only ${refused} generated schemas were refused: the property says little`);
  });

  it("refuses every call once ajv refuses the schema on the first one", () => {
    const compiled = new SchemaValidators().compile({
      type: "object",
      properties: { a: { $ref: "#/definitions/none" } },
    });
    for (let call = 0; call < 2; call++) {
      const issues = compiled.validate({ a: 1 });
      assert.equal(issues.length, 1);
      assert.equal(issues[0]!.path, "");
      assert.match(
        issues[0]!.message,
        /^cannot be checked: the tool's input schema is invalid \(can't resolve reference #\/definitions\/none/,
      );
    }
  });

  it("loads ajv with the first validation, and only the dialect's module", () => {
    const script = `
      import { createRequire } from "node:module";
      const { SchemaValidators } = await import(${JSON.stringify(BUILT)});
      const loaded = () => Object.keys(createRequire(${JSON.stringify(BUILT)}).cache)
        .filter((path) => /node_modules\\/ajv\\/dist\\/(ajv|2019|2020)\\.js$/.test(path)).map((path) => path.replace(/.*\\//, ""));
      const compiled = new SchemaValidators().compile({ type: "object", properties: { a: { type: "string" } } });
      const before = loaded();
      const issues = compiled.validate({ a: 1 });
      console.log(JSON.stringify({ before, after: loaded(), issues }));`;
    const run = spawnSync(process.execPath, ["--input-type=module", "-e", script], { encoding: "utf8" });
    assert.equal(run.status, 0, run.stderr);
    assert.deepEqual(JSON.parse(run.stdout), {
      before: [],
      after: ["ajv.js"],
      issues: [{ path: "/a", message: "must be string" }],
    });
  });
});
