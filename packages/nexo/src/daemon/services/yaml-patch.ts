/**
 * How the services change a YAML document: a patch sets the keys it carries (a `null` removes the
 * key, an absent one is left alone), so every line the patch does not concern keeps its text and
 * comments. New list entries and mappings are written in block style even where the file had an
 * empty flow collection (`agents: []`), which is what an operator would have typed.
 */
import type { Document, YAMLMap, YAMLSeq } from "yaml";
import { yamlLibrary } from "../../config/yaml-library.js";

/** Keys to set; `null` removes a key. */
export type Patch<T> = { [K in keyof T]?: T[K] | null };

/** Sets or removes each key of `patch` in the mapping at `path` (which must exist). */
export function patchMapping(doc: Document.Parsed, path: readonly (string | number)[], patch: object): void {
  for (const [key, value] of Object.entries(patch)) {
    if (value === undefined) continue;
    if (value === null) doc.deleteIn([...path, key]);
    else doc.setIn([...path, key], doc.createNode(value));
  }
}

/** The patch without its `null`s and `undefined`s: what a new entry is created from. */
export function withoutRemovals(patch: object): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(patch).filter(([, value]) => value !== undefined && value !== null),
  );
}

/** Appends `value` to the list at `path`, creating the list when it is missing. */
export function appendToList(doc: Document.Parsed, path: readonly string[], value: unknown): void {
  const list = doc.getIn(path, true);
  if (yamlLibrary().isSeq(list)) {
    if (list.items.length === 0) (list as YAMLSeq).flow = false;
    list.items.push(doc.createNode(value));
    return;
  }
  doc.setIn(path, doc.createNode([value]));
}

/** The index of the list entry at `path` whose `id` is `id`, or -1. */
export function indexById(doc: Document.Parsed, path: readonly string[], id: string): number {
  const { isMap, isSeq } = yamlLibrary();
  const list = doc.getIn(path, true);
  if (!isSeq(list)) return -1;
  return list.items.findIndex((item) => isMap(item) && (item as YAMLMap).get("id") === id);
}

/** Makes the mapping at `path` a block mapping, creating it when missing (so `servers: {}` can grow). */
export function ensureBlockMapping(doc: Document.Parsed, path: readonly string[]): void {
  const { isMap } = yamlLibrary();
  const node = doc.getIn(path, true);
  if (isMap(node)) {
    if (node.items.length === 0) (node as YAMLMap).flow = false;
    return;
  }
  doc.setIn(path, doc.createNode({}));
  const created = doc.getIn(path, true);
  if (isMap(created)) (created as YAMLMap).flow = false;
}
