/** Types of match.mjs (structural matching of conformance scenarios). */
export declare class MatcherError extends Error {}
export declare function isMatcher(value: unknown): boolean;
/** Every way `actual` fails to match `expected`, as "path: problem" lines; empty when it matches. */
export declare function match(expected: unknown, actual: unknown, path?: string): string[];
export declare function show(value: unknown): string;
