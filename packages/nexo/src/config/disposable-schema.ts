/**
 * A config file's schema that an idle daemon does not keep. The daemon parses its config files at
 * start and on reload, and the admin services when they edit one; in between, nothing uses their
 * schemas, yet a schema built at module level (hundreds of zod objects with their closures) lives
 * as long as the module — for the process's life. The stand-in returned here builds the schema on
 * the first property read and holds it through a WeakRef only: while a parse runs, the parse holds
 * it; once no parse does, a collection frees it, and the next read builds it again. Building a
 * config file's schema again costs ~1-2 ms of CPU (agents.yaml's, the largest), beside the file's
 * read and YAML parse, so this is for schemas read per config load or edit, never for ones on a
 * per-message path.
 *
 * The stand-in (the wire's, which extensions.yaml's schemas use too) forwards property reads, `in`,
 * assignments and the prototype (so `instanceof` and every method — `parse`, `safeParse`, `_zod` —
 * behave as the schema's own). Compose schemas inside the builder from plain local ones: a stand-in
 * embedded in another schema would be rebuilt by every parse that reaches it.
 */
export { disposableSchema } from "@nexo/wire/schemas/lazy";
